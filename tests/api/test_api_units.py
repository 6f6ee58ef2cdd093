"""htcd.api pieces that need no daemon: job selections, queue statements from submit()'s
arguments, act() counts, lazy ads from the wire, param typing."""

from __future__ import annotations

from pathlib import Path

import pytest

import htcd.api as api
from htcd.api.classad import ClassAd, ExprTree, from_wire
from htcd.api.schedd import _act_result, job_selection


@pytest.mark.parametrize(("spec", "expected"), [
    (["12.0", "12.3"], (["12.0", "12.3"], None)),
    (["12", "13.1"], (["12", "13.1"], None)),
    ("12.4", (["12.4"], None)),
    ("12", (["12"], None)),
    (12, (["12"], None)),
    ("Owner == \"alice\"", ([], "Owner == \"alice\"")),
    (ExprTree("ClusterId > 3"), ([], "ClusterId > 3")),
])
def test_job_specs(spec: object, expected: tuple[list[str], str | None]) -> None:
    assert job_selection(spec) == expected  # type: ignore[arg-type]


def test_bad_job_specs_are_refused() -> None:
    with pytest.raises(ValueError, match="clusterID"):
        job_selection(["12.0", "alice"])
    with pytest.raises(ValueError, match="ExprTree"):
        job_selection("ClusterId ==")
    with pytest.raises(TypeError):
        job_selection([12])  # type: ignore[list-item]


def test_queue_statements_from_submit_arguments() -> None:
    s = api.Submit("executable = /bin/true\nqueue 2 x in (a, b)\n")
    assert s.queue_line() == "queue 2 x in (a, b)"
    assert s.queue_line(count=5) == "queue 5 x in (a, b)"  # count replaces the statement's
    assert s.queue_line(queue="queue 3") == "queue 3"
    assert s.queue_line(itemdata=["p", "q r"]) == "queue x from (\np\nq r\n)"  # the statement's variable
    assert s.queue_line(count=2, itemdata=[{"a": "1", "b": "x, y"}]) == "queue 2 a,b from (\n1 x, y\n)"
    with pytest.raises(ValueError, match="same keys"):
        s.queue_line(itemdata=[{"a": "1"}, {"b": "2"}])
    with pytest.raises(ValueError, match="newline"):
        s.queue_line(itemdata=["a\nb"])
    assert api.Submit(executable="/bin/true").queue_line(count=4) == "queue 4"


def test_submit_is_a_case_insensitive_mapping_of_strings() -> None:
    s = api.Submit({"Executable": "/bin/true"}, queue="3")
    s["ARGUMENTS"] = "1 2"
    assert s["executable"] == "/bin/true" and "arguments" in s and len(s) == 2
    assert str(s) == "Executable = /bin/true\nARGUMENTS = 1 2\nqueue 3\n"
    del s["Arguments"]
    assert list(s) == ["Executable"]
    with pytest.raises(TypeError):
        s["x"] = 1  # type: ignore[assignment]
    with pytest.raises(api.HTCondorException, match=r"<htcd.api.Submit>:3: .*second"):
        api.Submit("a = 1\nqueue\nqueue 2\n")


def test_act_counts() -> None:
    ad = _act_result({"1.0": "held", "1.1": "not held: status 5", "1.2": "already removed",
                      "1.3": "denied: x is not the owner", "1.*": "unmaterialized procs removed"})
    assert {k: ad[k] for k in ad} == {"TotalError": 0, "TotalSuccess": 1, "TotalNotFound": 0, "TotalBadStatus": 1,
                                      "TotalAlreadyDone": 1, "TotalPermissionDenied": 1, "TotalJobAds": 4,
                                      "TotalChangedAds": 1}


def test_ads_from_the_wire_parse_only_what_is_read() -> None:
    ad = from_wire({"ClusterId": "7", "Owner": '"alice"', "Req": "Memory > 1024", "Done": "false"})
    assert (ad["ClusterId"], ad["owner"], ad["Done"]) == (7, "alice", False)
    assert isinstance(ad["Req"], ExprTree) and str(ad["Req"]) == "Memory > 1024"
    ad["Extra"] = [1, "x"]
    assert ad["Extra"] == [1, "x"] and ad["ClusterId"] == 7 and len(ad) == 5
    assert ad.eval("ClusterId") == 7
    assert isinstance(ad, ClassAd) and repr(ad).startswith("[ ClusterId = 7;")


def test_param_types_values_as_htcondor2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "config"
    cfg.write_text("NUM_CPUS = 6\nSTARTD_HAS_BAD_UTMP = true\nMY_KNOB = $(NUM_CPUS)x\n")
    monkeypatch.setenv("HTCD_CONFIG", str(cfg))
    api.reload_config()
    try:
        assert api.param["NUM_CPUS"] == 6 and api.param["STARTD_HAS_BAD_UTMP"] is True
        assert api.param["MY_KNOB"] == "6x"
        api.param["MY_KNOB"] = "changed"
        assert api.param["my_knob"] == "changed"
        with pytest.raises(KeyError):
            api.param["NOT_A_KNOB_ANYWHERE"]
    finally:
        monkeypatch.delenv("HTCD_CONFIG")
        api.reload_config()


def test_queue_item_lists_over_several_lines() -> None:
    s = api.Submit("x = 1\nqueue a from (\n  p\n  q\n)\ny = 2\n")
    assert list(s.itemdata()) == [{"a": "p"}, {"a": "q"}] and s["y"] == "2"
    with pytest.raises(api.HTCondorException, match=r"<htcd.api.Submit>:2: .*closing"):
        api.Submit("x = 1\nqueue a from (\n  p\n")


def test_what_htcd_cannot_do_is_refused_before_asking() -> None:
    with pytest.raises(api.HTCondorException, match="StartdPrivate"):
        api.Collector("127.0.0.1:1").query(api.AdType.StartdPrivate)
    with pytest.raises(api.HTCondorException, match="statistics"):
        api.Collector("127.0.0.1:1").query(api.AdType.Startd, statistics="All")
    with pytest.raises(api.HTCondorException, match="SecurityContext"):
        api.Collector(security=object())


def test_no_pool_is_an_htcondor_exception(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "config"
    cfg.write_text(f"LOCAL_DIR = {tmp_path}\nCOLLECTOR_HOST = 127.0.0.1:1\n")
    monkeypatch.setenv("HTCD_CONFIG", str(cfg))
    api.reload_config()
    try:
        with pytest.raises(api.HTCondorException, match="collector"):
            api.Schedd()
        with pytest.raises(api.HTCondorException, match="cannot reach the collector"):
            api.Collector().query(api.AdType.Schedd)
    finally:
        monkeypatch.delenv("HTCD_CONFIG")
        api.reload_config()
