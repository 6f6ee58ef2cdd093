"""htcd.api against a real personal pool: HTCondor's own htcondor2 examples and tutorials (in
tests/api/examples/, only their import lines changed) run as scripts, then the API in process."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from pooltools import Pool

from htcd.testing import wait_for

EXAMPLES = Path(__file__).parent / "examples"
SLOTS = 16  # the tutorials queue 10 + 5 jobs at once and wait for them


@pytest.fixture(scope="module")
def api_pool(module_pool) -> Pool:
    return module_pool({"NUM_CPUS": str(SLOTS)}, slots=SLOTS)


def run_example(pool: Pool, name: str, cwd: Path, timeout: float = 180) -> str:
    """Run one harvested script in ``cwd`` against the pool; its standard output."""
    proc = subprocess.run([sys.executable, str(EXAMPLES / name)], cwd=cwd, env=pool.env, capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, f"{name} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def queue(pool: Pool, constraint: str | None = None) -> list[dict[str, str]]:
    return pool.schedd_jobs(constraint, ["ClusterId", "ProcId", "JobStatus"])


def remove_all(pool: Pool) -> None:
    """Leave the queue empty for the next test (the examples leave jobs running)."""
    if queue(pool, "JobStatus != 3"):
        pool.htcd("rm", "-all")
    wait_for(lambda: not queue(pool), 30, "an empty queue")


def test_eventlog_example_waits_for_the_job(api_pool: Pool, tmp_path: Path) -> None:
    out = run_example(api_pool, "eventlog_wait_forever.py", tmp_path)
    assert out.strip() == "Job terminated normally with return value 0."
    assert (tmp_path / "sleep.log").read_text().count("\n...\n") >= 3  # submit, execute, terminated


@pytest.mark.slow
def test_eventlog_example_deadline_expires(api_pool: Pool, tmp_path: Path) -> None:
    """The job sleeps 20 s and the script gives it 10: its deadline passes first."""
    out = run_example(api_pool, "eventlog_deadline.py", tmp_path)
    assert out.strip() == "Deadline expired."
    remove_all(api_pool)


def test_advanced_schedd_interactions_tutorial(api_pool: Pool, tmp_path: Path) -> None:
    """Ten held jobs, a query counting them, and the two newest jobs of the history (the
    examples before this one left theirs there)."""
    out = run_example(api_pool, "advanced_schedd_interactions.py", tmp_path)
    lines = out.splitlines()
    cluster = int(lines[0])
    assert lines[1] == "10"
    assert [j["JobStatus"] for j in queue(api_pool, f"ClusterId == {cluster}")] == ["5"] * 10
    printed = "\n".join(lines[2:])
    in_history = len(api_pool.htcd("history", "-af", "ClusterId").stdout.split())
    assert in_history >= 1
    assert printed.count("ClusterId = ") == min(2, in_history) and printed.count("JobStatus = 4") >= 1
    remove_all(api_pool)


def test_introduction_tutorial(api_pool: Pool, tmp_path: Path) -> None:
    out = run_example(api_pool, "htcondor_introduction.py", tmp_path)
    lines = out.splitlines()
    assert 'MyType = "Scheduler"' in out and "MyAddress" in out  # print(schedd_ad)
    assert any(line.startswith("<Schedd ") for line in lines)  # print(schedd)
    # the ten jobs, then the ProcIds >= 5 of a constraint query
    assert sum(1 for line in lines if "ClusterId = " in line and "JobStatus = 1" in line) == 10
    assert lines[-5:] == ["5", "6", "7", "8", "9"]
    # the last cell removed every job of the user
    wait_for(lambda: not queue(api_pool, "JobStatus != 3"), 30, "the removed jobs to leave the queue")


@pytest.mark.slow
def test_submitting_and_managing_jobs_tutorial(api_pool: Pool, tmp_path: Path) -> None:
    out = run_example(api_pool, "submitting_and_managing_jobs.py", tmp_path, timeout=240)
    import socket

    assert socket.gethostname() in out  # hostname.out, the first job's output, printed
    cat_lines = [line for line in out.splitlines() if "cat-" in line and " -> " in line]
    assert len(cat_lines) == 5 and all("Hello from job" in line for line in cat_lines)
    # hold the first two of five, then release all: the JobStatus each loop printed
    assert "ProcID = 0 has JobStatus = 5" in out and "ProcID = 1 has JobStatus = 5" in out
    assert "ProcID = 2 has JobStatus = 1" in out or "ProcID = 2 has JobStatus = 2" in out
    held = out.index("ProcID = 0 has JobStatus = 5")
    assert "ProcID = 0 has JobStatus = 5" not in out[held + 1:]  # released afterwards
    wait_for(lambda: not queue(api_pool, 'Cmd == "/bin/sleep" && JobStatus != 3 && Args == "10m"'), 30,
             "the removed 10m jobs to leave the queue")
    remove_all(api_pool)


# -- the API in this process ---------------------------------------------------------------
@pytest.fixture
def api(api_pool: Pool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    import htcd.api

    monkeypatch.setenv("HTCD_CONFIG", api_pool.env["HTCD_CONFIG"])
    monkeypatch.chdir(tmp_path)
    htcd.api.reload_config()
    yield htcd.api
    htcd.api.reload_config()


def test_submit_query_act_edit(api: ModuleType) -> None:
    htcondor2 = api
    schedd = htcondor2.Schedd()
    sub = htcondor2.Submit("executable = /bin/sleep\narguments = 300\nhold = true\nMy.Color = \"$(color)\"\n")
    items = [{"color": c, "size": s} for c, s in (("red", "1"), ("blue", "2 and more"))]
    result = schedd.submit(sub, itemdata=iter(items), count=2)
    cid = result.cluster()
    assert (result.num_procs(), result.first_proc()) == (4, 0)
    assert result.clusterad()["ClusterId"] == cid and result.clusterad()["Cmd"] == "/bin/sleep"
    ads = schedd.query(f"ClusterId == {cid}", ["ProcId", "Color", "JobStatus"])
    assert [(a["ProcId"], a["Color"], a["JobStatus"]) for a in ads] == \
        [(0, "red", 5), (1, "red", 5), (2, "blue", 5), (3, "blue", 5)]
    assert set(ads[0].keys()) == {"ProcId", "Color", "JobStatus"}
    assert [a["ProcId"] for a in schedd.query(f"ClusterId == {cid}", ["ProcId"], limit=3)] == [0, 1, 2]
    assert schedd.query(f"ClusterId == {cid}", ["ProcId"], callback=lambda a: a["ProcId"] * 10
                        if a["ProcId"] % 2 else None) == [10, 30]
    assert schedd.edit([f"{cid}.1", f"{cid}.2"], "Foo", '"bar"') == 2
    assert schedd.edit(f"ClusterId == {cid} && ProcId == 3", "Foo", 7) == 1
    foo = {a["ProcId"]: a.get("Foo") for a in schedd.query(f"ClusterId == {cid}", ["ProcId", "Foo"])}
    assert foo == {0: None, 1: "bar", 2: "bar", 3: 7}
    released = schedd.act(htcondor2.JobAction.Release, f"{cid}.0")
    assert (released["TotalSuccess"], released["TotalJobAds"]) == (1, 1)
    again = schedd.act(htcondor2.JobAction.Release, [f"{cid}.0", f"{cid}.99"])
    assert (again["TotalSuccess"], again["TotalBadStatus"], again["TotalNotFound"]) == (0, 1, 1)
    removed = schedd.act(htcondor2.JobAction.Remove, cid, reason="done with it")
    assert (removed["TotalSuccess"], removed["TotalChangedAds"]) == (4, 4)
    nothing = schedd.act(htcondor2.JobAction.Remove, "ClusterId == -5")
    assert nothing["TotalJobAds"] == 0
    with pytest.raises(htcondor2.HTCondorException, match="htcd cannot Suspend"):
        schedd.act(htcondor2.JobAction.Suspend, cid)
    wait_for(lambda: len(schedd.history(f"ClusterId == {cid}", ["ProcId"])) == 4, 30, "the history")
    hist = schedd.history(f"ClusterId == {cid}", ["ProcId", "JobStatus", "RemoveReason"], match=2)
    assert len(hist) == 2 and all(h["JobStatus"] == 3 and "done with it" in h["RemoveReason"] for h in hist)


def test_mistakes_are_exceptions_with_the_line(api: ModuleType) -> None:
    htcondor2 = api
    schedd = htcondor2.Schedd()
    with pytest.raises(htcondor2.HTCondorException, match=r"<htcd.api.Submit>:2: RequestCpus: invalid ClassAd expression"):
        schedd.submit(htcondor2.Submit("executable = /bin/true\nrequest_cpus = 1 +\n"))
    with pytest.raises(htcondor2.HTCondorException, match="bad constraint"):
        schedd.query("ClusterId ==")
    with pytest.raises(ValueError, match="mutually exclusive"):
        schedd.submit(htcondor2.Submit(executable="/bin/true"), count=2, queue="3")
    with pytest.warns(UserWarning, match="Is it a typo"):  # htcd submit's WARNING: line
        held = schedd.submit(htcondor2.Submit(executable="/bin/true", hold="true", exectuable="/bin/false"))
    assert schedd.act(htcondor2.JobAction.Remove, held.cluster())["TotalSuccess"] == 1
    with pytest.raises(ValueError, match="only the last variable"):
        schedd.submit(htcondor2.Submit(executable="/bin/true"), itemdata=iter([{"a": "x y", "b": "1"}]))


def test_job_event_log_follows_a_running_job(api: ModuleType) -> None:
    htcondor2 = api
    schedd = htcondor2.Schedd()
    result = schedd.submit(htcondor2.Submit({"executable": "/bin/sh", "arguments": "\"-c 'exit 3'\"",
                                             "log": "job.log"}), count=2)
    jel = htcondor2.JobEventLog("job.log")
    seen: list[tuple[int, int, int]] = []
    ended = {}
    for event in jel.events(stop_after=60):
        seen.append((int(event.type), event.cluster, event.proc))
        assert event.cluster == result.cluster() and event.timestamp > 0
        if event.type == htcondor2.JobEventType.JOB_TERMINATED:
            ended[event.proc] = (event["TerminatedNormally"], event["ReturnValue"])
            if len(ended) == 2:
                break
    assert ended == {0: (True, 3), 1: (True, 3)}
    assert seen[:2] == [(0, result.cluster(), 0), (0, result.cluster(), 1)]  # the two submit events
    assert list(jel.events(stop_after=0)) == []  # nothing more, and no wait
    jel.close()


def test_collector(api: ModuleType, api_pool: Pool) -> None:
    htcondor2 = api
    coll = htcondor2.Collector()
    slots = coll.query(htcondor2.AdType.Startd, projection=["Name", "Cpus"])
    assert len(slots) == SLOTS and all(set(s.keys()) == {"Name", "Cpus"} for s in slots)
    assert len(coll.query(htcondor2.AdType.Startd, constraint='SlotID == 1')) == 1
    schedd_ad = coll.locate(htcondor2.DaemonType.Schedd)
    assert schedd_ad["MyType"] == "Scheduler" and schedd_ad["MyAddress"].startswith("<")
    assert [a["Name"] for a in coll.locateAll(htcondor2.DaemonType.Schedd)] == [schedd_ad["Name"]]
    assert htcondor2.Schedd(schedd_ad).query("false") == []
    with pytest.raises(htcondor2.HTCondorException, match="Unable to locate"):
        coll.locate(htcondor2.DaemonType.Schedd, "no-such-schedd")
    # a Collector for the pool named explicitly (host:port) answers the same
    collectors = api_pool.collector_ads("Collector", ["MyAddress"])
    assert collectors
    address = collectors[0]["MyAddress"].strip('"')
    named = htcondor2.Collector(address.strip("<>").split("?")[0])
    assert len(named.query(htcondor2.AdTypes.Startd, projection=["Name"])) == SLOTS


def test_param(api: ModuleType, api_pool: Pool) -> None:
    htcondor2 = api
    assert htcondor2.param["LOCAL_DIR"] == str(api_pool.local)
    assert htcondor2.param["NUM_CPUS"] == SLOTS  # an int knob comes back as an int
    assert htcondor2.param.get("NO_SUCH_KNOB_AT_ALL") is None
    assert "LOCAL_DIR" in htcondor2.param and "NO_SUCH_KNOB_AT_ALL" not in htcondor2.param


def test_spool_and_retrieve(api: ModuleType, tmp_path: Path) -> None:
    """Jobs submitted with spool=True wait for their input; spool() sends it, retrieve() fetches
    the output into the submit directory once they completed."""
    htcondor2 = api
    (tmp_path / "in.txt").write_text("spooled input\n")
    schedd = htcondor2.Schedd()
    sub = htcondor2.Submit({"executable": "/bin/cat", "arguments": "in.txt", "transfer_input_files": "in.txt",
                            "should_transfer_files": "yes", "output": "out-$(ProcId).txt"})
    result = schedd.submit(sub, count=2, spool=True)
    cid = result.cluster()
    schedd.spool(result)
    wait_for(lambda: [a["JobStatus"] for a in schedd.query(f"ClusterId == {cid}", ["JobStatus"])] == [4, 4],
             60, "the spooled jobs to complete")
    assert not (tmp_path / "out-0.txt").exists()  # the output waits in the spool
    schedd.retrieve(f"ClusterId == {cid}")
    assert (tmp_path / "out-0.txt").read_text() == (tmp_path / "out-1.txt").read_text() == "spooled input\n"
    with pytest.raises(htcondor2.HTCondorException, match="not submitted with spool=True"):
        schedd.spool(schedd.submit(htcondor2.Submit(executable="/bin/true", hold="true")))
