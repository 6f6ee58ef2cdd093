"""htcd.api against HTCondor's own bindings (the htcondor wheel), without a pool: the public
names, signatures and enumerations, Submit descriptions, ClassAd values and event-log reading.
The wheel answers the whole module's batch in one subprocess (tests/api/wheel_oracle.py)."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import htcd.api as api
from htcd.api import classad

ORACLE = Path(__file__).parent / "wheel_oracle.py"
#: harvested examples that need no pool: run on htcd.api here and on the wheel in the oracle
POOL_FREE_EXAMPLES = [Path(__file__).parent / "examples" / "classads_introduction.py"]

METHODS = {
    "Schedd": ["submit", "query", "act", "edit", "history", "spool", "retrieve"],
    "Collector": ["query", "locate", "locateAll"],
    "Submit": ["expand", "getQArgs", "setQArgs", "itemdata"],
    "SubmitResult": ["cluster", "first_proc", "num_procs", "clusterad"],
    "JobEventLog": ["events", "close"],
    "JobEvent": [],
}
ENUMS = ["JobAction", "AdType", "DaemonType", "JobEventType", "JobStatus", "QueryOpt"]
SUBMITS: list[dict[str, Any]] = [
    {"input": "executable = /bin/echo\narguments = $(x) $(Cluster).$(Process)\n+Bar = 2\nMy.Foo = 1\nqueue 2 x in (a, b)\n",
     "expand": ["arguments", "executable"]},
    {"input": {"executable": "/bin/sleep", "arguments": "5m", "output": "out-$(ProcId)"}, "expand": ["output"]},
    {"kwargs": {"executable": "/bin/sleep", "arguments": "1"}},
    {"input": "a = 1\nb = $(a)$(a)\nqueue\n", "qargs": "5", "expand": ["b"]},
    {"input": "x = 1\nqueue a,b from (\n 1 2\n 3 4 5\n)\n"},
    {"input": "x = 1\nqueue 3\n", "qargs": "queue 2 y in (p q r)"},
    {"input": "executable = /bin/true\nqueue name matching files *.nosuchfile\n"},
]
CLASSADS = ['[a = 1; b = "x\\"y"; c = 1.5; d = true; e = {1, "y", {2}}; f = [g = 1; h = g]; i = a + 1; '
            'j = undefined; k = error; l = {a, 1}; m = -3; n = false; o = ""]']
QUOTES = ['plain', 'with "quotes" and \\ backslash', "tab\tnewline\n"]


def event_log_text() -> str:
    """A log as htcd's schedd and shadow write it (their own writer functions)."""
    from htcd.schedd import userlog

    t = 1795334400.0
    return "".join([
        userlog.submit(12, 0, "<127.0.0.1:9618>", when=t, notes="batch"),
        userlog.execute(12, 0, "<127.0.0.1:1234>", slot="slot1@host", when=t + 1),
        userlog.image_size(12, 0, 1024, memory_usage_mb=3, rss_kb=2048, when=t + 2),
        userlog.held(12, 0, "because", code=1, subcode=2, when=t + 3),
        userlog.released(12, 0, "via release", when=t + 4),
        userlog.evicted(12, 0, "vacated", when=t + 5),
        userlog.terminated(12, 0, exit_code=3, signal=None, sent=10, received=20, when=t + 6),
        userlog.terminated(12, 1, exit_code=None, signal=9, when=t + 6),
        userlog.aborted(12, 2, "via rm", when=t + 7),
        userlog.disconnected(12, 3, "socket closed", "slot1@host", "<127.0.0.1:1>", when=t + 8),
        userlog.reconnected(12, 3, "slot1@host", "<127.0.0.1:1>", "<127.0.0.1:2>", when=t + 9),
        userlog.reconnect_failed(12, 3, "gone", "slot1@host", when=t + 10),
        userlog.job_ad_information(12, 3, {"Foo": "1", "Bar": '"x"'}, when=t + 11),
    ])


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    pytest.importorskip("htcondor2")
    log = tmp_path_factory.mktemp("log") / "events.log"
    log.write_text(event_log_text())
    request = {"api": METHODS, "enums": ENUMS, "submits": SUBMITS, "classads": CLASSADS, "eventlog": str(log),
               "quote": QUOTES, "scripts": [str(p) for p in POOL_FREE_EXAMPLES]}
    env = {**os.environ, "CONDOR_CONFIG": "/dev/null", "TZ": "UTC"}
    proc = subprocess.run([sys.executable, str(ORACLE)], input=json.dumps(request), capture_output=True,
                          text=True, env=env, timeout=120, cwd=tmp_path_factory.mktemp("cwd"))
    assert proc.returncode == 0, proc.stderr
    answer: dict[str, Any] = json.loads(proc.stdout)
    answer["log"] = str(log)
    return answer


def _type_text(annotation: Any) -> str:
    """A return annotation in one spelling: no module paths, builtin generics, ``X | None``."""
    text = annotation if isinstance(annotation, str) else repr(annotation)
    text = re.sub(r"<class '([\w.]+)'>", r"\1", text)
    text = re.sub(r"\b[\w]+(?:\.[\w]+)*\.(\w+)", r"\1", text)
    text = text.replace("List[", "list[").replace("Dict[", "dict[").replace("NoneType", "None")
    m = re.fullmatch(r"Union\[(.*), (.*)\]", text)
    if m:
        text = f"{m.group(1)} | {m.group(2)}"
    text = text.replace("dict[str, str]", "dict")
    m = re.fullmatch(r"Optional\[(.*)\]", text)
    return f"{m.group(1)} | None" if m else text.strip("'")


#: htcd's defaults that differ in spelling only: None for htcondor2's mutable [] and its
#: private "no itemdata" marker object.
SAME_DEFAULT = {("[]", "None"), ("<object", "<object"), ("<Transa", "0")}


def test_public_names_and_signatures_match_htcondor2(wheel: dict[str, Any]) -> None:
    for name, methods in wheel["api"].items():
        mine = getattr(api, name)
        for method, theirs in methods.items():
            ours = inspect.signature(getattr(mine, method))
            params = [[p.name, p.kind.name, repr(p.default) if p.default is not p.empty else None]
                      for p in ours.parameters.values() if p.name != "self"]
            assert [p[:2] for p in params] == [p[:2] for p in theirs["params"]], f"{name}.{method}"
            for (pname, _, our_default), (_, _, their_default) in zip(params, theirs["params"], strict=True):
                if our_default == their_default:
                    continue
                pair = (str(their_default)[:7], str(our_default)[:7])
                assert pair in SAME_DEFAULT or (their_default, our_default) in {("[]", "None")}, \
                    f"{name}.{method}({pname}=): htcondor2 {their_default}, htcd {our_default}"
            if theirs["return"] is not None and method != "__init__":
                assert _type_text(ours.return_annotation) == _type_text(theirs["return"]), f"{name}.{method}"


def test_every_public_name_of_htcondor2_that_scripts_use_most_exists() -> None:
    for name in ["Schedd", "Collector", "Submit", "SubmitResult", "JobEventLog", "JobEvent", "JobAction",
                 "AdType", "AdTypes", "DaemonType", "DaemonTypes", "JobEventType", "JobStatus", "QueryOpt",
                 "HTCondorException", "param", "reload_config", "set_subsystem", "version", "classad"]:
        assert hasattr(api, name), name
    for name in ["ClassAd", "ExprTree", "Value", "quote", "unquote", "parseAds", "parseNext", "parseOne",
                 "ClassAdException"]:
        assert hasattr(classad, name), name


def test_enumerations_match(wheel: dict[str, Any]) -> None:
    for name, members in wheel["enums"].items():
        ours = [[m.name, int(m.value)] for m in getattr(api, name) if m.value or name != "QueryOpt"]
        assert ours == members, name


def test_submit_descriptions_match(wheel: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HTCD_CONFIG", "/dev/null")
    api.reload_config()
    for case, theirs in zip(SUBMITS, wheel["submits"], strict=True):
        s = api.Submit(case["input"]) if "input" in case else api.Submit(**case["kwargs"])
        if case.get("qargs") is not None:
            s.setQArgs(case["qargs"])
        assert "error" not in theirs, (case, theirs)
        # htcondor2 prints "+Bar" as "MY.Bar" and keeps "My.Foo", as htcd does.  It prints an item list on lines of
        # their own as its first line only ("queue a,b from ("): htcd prints it whole
        if theirs["str"].endswith(" from (\n"):
            assert str(s).startswith(theirs["str"]) and str(s).endswith("\n)\n"), case
        else:
            assert str(s) == theirs["str"], case
        assert list(s.keys()) == theirs["keys"], case
        assert s.getQArgs().split("\n")[0] == theirs["qargs"], case
        if theirs["items"] is not None:
            assert list(s.itemdata()) == theirs["items"], case
        for key, value in theirs["expand"].items():
            assert s.expand(key) == value, (case, key)


def _value(v: Any) -> Any:
    if isinstance(v, classad.Value):
        return ["Value", v.name]
    if isinstance(v, classad.ExprTree):
        return ["ExprTree", str(v)]
    if isinstance(v, classad.ClassAd):
        return ["ClassAd", {k: _value(v[k]) for k in sorted(v.keys())}]
    if isinstance(v, list):
        return ["list", [_value(x) for x in v]]
    return [type(v).__name__, v]


def test_classad_values_match(wheel: dict[str, Any]) -> None:
    for text, theirs in zip(CLASSADS, wheel["classads"], strict=True):
        ad = classad.ClassAd(text)
        ours = {k: _value(ad[k]) for k in sorted(ad.keys())}
        assert ours == theirs
    assert [classad.quote(s) for s in QUOTES] == wheel["quote"]
    assert [classad.unquote(classad.quote(s)) for s in QUOTES] == wheel["unquote"] == QUOTES


def test_event_log_reads_as_htcondor2_reads_it(wheel: dict[str, Any]) -> None:
    events = list(api.JobEventLog(wheel["log"]).events(stop_after=0))
    theirs = wheel["events"]
    assert len(events) == len(theirs) == 13  # every event written, none dropped
    for ours, their in zip(events, theirs, strict=True):
        assert (int(ours.type), ours.cluster, ours.proc) == (their["type"], their["cluster"], their["proc"])
        assert ours.timestamp == their["timestamp"] or os.environ.get("TZ", "UTC") != "UTC"
        mine = {k: _value(ours[k]) for k in ours}
        common = set(mine) & set(their["attrs"])
        assert {k: mine[k] for k in common} == {k: their["attrs"][k] for k in common}, their["type"]
        missing = set(their["attrs"]) - set(mine)
        assert not missing, f"event {their['type']}: htcd.api lacks {sorted(missing)}"


def test_event_log_follows_appends_and_refuses_garbage(tmp_path: Path) -> None:
    from htcd.schedd import userlog

    path = tmp_path / "job.log"
    path.write_text("")
    jel = api.JobEventLog(str(path))
    assert list(jel.events(stop_after=0)) == []
    first = userlog.submit(1, 0, "<127.0.0.1:1>")
    path.write_text(first[: len(first) - 4])  # the event without its "...": not handed out yet
    assert list(jel.events(stop_after=0)) == []
    with path.open("a") as f:
        f.write(first[len(first) - 4:] + userlog.execute(1, 0, "<127.0.0.1:2>"))
    assert [int(e.type) for e in jel.events(stop_after=0)] == [0, 1]
    with path.open("a") as f:
        f.write("garbage that is no event\n...\n")
    with pytest.raises(api.HTCondorException, match=r"job.log:\d+: not a job event header"):
        list(jel.events(stop_after=0))
    jel.close()
    with pytest.raises(api.HTCondorException, match="cannot open"):
        api.JobEventLog(str(tmp_path / "missing.log"))


def test_pool_free_examples_print_what_they_print_on_htcondor(wheel: dict[str, Any]) -> None:
    """HTCondor's ClassAds tutorial, run as a script on htcd.api and on classad2 itself: the same
    output line for line, but for the class names it prints (``type(expr)``)."""
    import contextlib
    import io

    for path, theirs in zip(POOL_FREE_EXAMPLES, wheel["scripts"], strict=True):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(path.read_text(), str(path), "exec"), {"__name__": "__main__"})
        ours = buf.getvalue().replace("htcd.api.classad.ExprTree", "classad2._expr_tree.ExprTree")
        assert ours.splitlines() == theirs.splitlines()
        assert len(ours.splitlines()) > 20
