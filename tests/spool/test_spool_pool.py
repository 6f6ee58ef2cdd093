"""Spooled input and output in a real pool: ``htcd submit -spool`` uploads the input (the
submit directory's files may go at once), the output waits in the spool until ``htcd
transfer_data`` fetches it, and the failure modes (a missing input, a broken upload, removal,
a schedd restart) leave nothing half done."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from pooltools import Pool, peak_rss_mb, wait_for

ONE_SLOT = {"NUM_CPUS": "1"}
SYSTEM_PYTHON = "/usr/bin/python3"
NOBODY = 65534
JOB = """#!/bin/sh
cat in.txt data/a.txt data/sub/b.txt > result.txt
echo "proc $1 stdin: $(cat)"
"""


def status(pool: Pool, job: str) -> str:
    return pool.job_attr(job, "JobStatus")


def spool(pool: Pool) -> Path:
    return pool.local / "spool"


def write_inputs(d: Path) -> None:
    (d / "in.txt").write_text("input\n")
    (d / "data" / "sub").mkdir(parents=True)
    (d / "data" / "a.txt").write_text("a\n")
    (d / "data" / "sub" / "b.txt").write_text("b\n")
    (d / "stdin.txt").write_text("from stdin")
    (d / "job.sh").write_text(JOB)
    os.chmod(d / "job.sh", 0o755)
    (d / "out").mkdir()


SUBMIT = """executable = job.sh
arguments = $(Process)
input = stdin.txt
output = out/job$(Process).out
log = spool.log
transfer_input_files = in.txt, data
transfer_output_remaps = "result.txt = res$(Process).txt"
queue 2
"""


def test_spooled_job_runs_without_its_submit_files_and_output_waits_for_transfer_data(make_pool) -> None:
    pool = make_pool(ONE_SLOT, slots=1)
    d = pool.jobs_dir
    write_inputs(d)
    (d / "s.sub").write_text(SUBMIT)
    out = pool.htcd("submit", "-spool", "-terse", "s.sub").stdout.strip()
    cid = int(out.split(".")[0])
    # the input is in the spool now: the submitter's copies may go
    for name in ("in.txt", "stdin.txt", "job.sh"):
        (d / name).unlink()
    for p in (d / "data" / "sub" / "b.txt", d / "data" / "a.txt"):
        p.unlink()
    wait_for(lambda: [status(pool, f"{cid}.{p}") for p in (0, 1)] == ["4", "4"], 120,
             f"both jobs completed\n{pool.log('ShadowLog')}\n{pool.log('SchedLog')}")
    # completed, kept in the queue with their output in the spool, not in the submit directory
    assert (spool(pool) / str(cid) / f"cluster{cid}.ickpt.subproc0").read_text() == JOB
    job_dir = spool(pool) / str(cid) / "1" / f"cluster{cid}.proc1.subproc0"
    assert (job_dir / "result.txt").read_text() == "input\na\nb\n"
    assert (job_dir / "job1.out").read_text() == "proc 1 stdin: from stdin\n"
    assert not (d / "res0.txt").exists() and not list((d / "out").iterdir())
    assert pool.job_attr(f"{cid}.0", "SUBMIT_Iwd") == str(d)
    assert pool.job_attr(f"{cid}.0", "Iwd") == str(spool(pool) / str(cid) / "0" / f"cluster{cid}.proc0.subproc0")
    start, finish = (int(pool.job_attr(f"{cid}.0", a)) for a in ("StageInStart", "StageInFinish"))
    assert 0 < start <= finish
    long = pool.htcd("q", f"{cid}.0", "-l").stdout
    assert "864000" in next(line for line in long.splitlines() if line.startswith("LeaveJobInQueue"))
    assert pool.job_attr(f"{cid}.0", "HoldReasonCode") == "undefined"

    # fetch one job, then the rest by owner
    fetched = pool.htcd("transfer_data", f"{cid}.0")
    assert "Fetching data files" in fetched.stdout
    assert (d / "res0.txt").exists(), pool.htcd("history", "-l").stdout
    assert (d / "res0.txt").read_text() == "input\na\nb\n"
    assert (d / "out" / "job0.out").read_text() == "proc 0 stdin: from stdin\n"
    assert not (d / "res1.txt").exists()
    wait_for(lambda: pool.job_ids() == [f"{cid}.1"], 30, "job 0 left the queue")
    assert not (spool(pool) / str(cid) / "0").exists()
    addr = (spool(pool) / ".schedd_address").read_text().split()[0]
    pool.htcd("transfer_data", "-addr", addr, "-constraint", f"ClusterId == {cid}")
    assert (d / "res1.txt").read_text() == "input\na\nb\n"
    assert (d / "out" / "job1.out").read_text() == "proc 1 stdin: from stdin\n"
    wait_for(lambda: pool.job_ids() == [], 30, "every job left the queue")
    wait_for(lambda: not (spool(pool) / str(cid)).exists(), 30, "the cluster's spool directory removed")
    hist = pool.htcd("history", "-af", "ProcId", "StageOutStart", "StageOutFinish", "JobStatus").stdout.split("\n")
    rows = [line.split() for line in hist if line.strip()]
    assert sorted(r[0] for r in rows) == ["0", "1"]
    assert all(int(r[1]) > 0 and int(r[2]) >= int(r[1]) and r[3] == "4" for r in rows), rows
    # nothing left to fetch
    again = pool.htcd("transfer_data", "-all", check=False)
    assert again.returncode != 0


def test_missing_input_refuses_the_whole_submission(make_pool) -> None:
    pool = make_pool(ONE_SLOT, slots=1)
    d = pool.jobs_dir
    write_inputs(d)
    (d / "data" / "a.txt").unlink()
    (d / "m.sub").write_text("executable = job.sh\ntransfer_input_files = in.txt, nothere.txt\nqueue 3\n")
    got = pool.htcd("submit", "-spool", "m.sub", check=False)
    assert got.returncode != 0
    assert "nothere.txt" in got.stderr and "Traceback" not in got.stderr
    assert pool.job_ids() == []


def test_a_broken_upload_leaves_the_jobs_held_and_nothing_counted(make_pool) -> None:
    pool = make_pool(ONE_SLOT, slots=1)
    d = pool.jobs_dir
    write_inputs(d)
    (d / "data" / "big.bin").write_bytes(os.urandom(9 * 1024 * 1024))  # a few chunks go first
    # reading this one fails mid-stream (EIO), after the files before it were sent
    (d / "data" / "zz").symlink_to("/proc/self/mem")
    (d / "b.sub").write_text("executable = job.sh\ntransfer_input_files = in.txt, data\nqueue\n")
    got = pool.htcd("submit", "-spool", "b.sub", check=False)
    assert got.returncode != 0 and "Traceback" not in got.stderr, got.stderr
    assert "mem" in got.stderr or "zz" in got.stderr, got.stderr
    [job] = pool.job_ids()
    cid = job.split(".")[0]
    wait_for(lambda: "failed" in pool.job_attr(job, "HoldReason"), 30, "the hold reason of the broken upload")
    assert status(pool, job) == "5" and pool.job_attr(job, "HoldReasonCode") == "16"
    assert pool.job_attr(job, "HoldReason").startswith("Spooling input data files failed")
    leftovers = [p for p in (spool(pool) / cid).rglob("*")] if (spool(pool) / cid).exists() else []
    assert leftovers == [], leftovers
    # removing it leaves nothing behind
    pool.htcd("rm", cid)
    wait_for(lambda: pool.job_ids() == [], 30, "the held job removed")


def test_remote_submit_rm_removes_the_spool_and_a_restart_keeps_it(make_pool) -> None:
    pool = make_pool(ONE_SLOT, slots=1)
    d = pool.jobs_dir
    write_inputs(d)
    (d / "w.sub").write_text("executable = job.sh\ninput = stdin.txt\noutput = w.out\nlog = w.log\n"
                             "transfer_input_files = in.txt, data\nrequirements = TARGET.Wanted =?= true\n"
                             "queue 2\n")
    name = wait_for(lambda: pool.htcd("status", "-schedd", "-af", "Name").stdout.strip(), 30, "the schedd's ad")
    cid = int(pool.htcd("submit", "-remote", name, "-terse", "w.sub").stdout.split(".")[0])  # -remote: -spool
    for p in (d / "in.txt", d / "data" / "a.txt", d / "job.sh"):
        p.unlink()
    cdir = spool(pool) / str(cid)
    wait_for(lambda: status(pool, f"{cid}.1") == "1", 30, "the jobs released after the upload")
    assert (cdir / "1" / f"cluster{cid}.proc1.subproc0" / "data" / "a.txt").read_text() == "a\n"
    pool.htcd("rm", f"{cid}.1")
    wait_for(lambda: not (cdir / "1").exists(), 30, "the removed job's spool directory gone")
    assert (cdir / "0" / f"cluster{cid}.proc0.subproc0" / "in.txt").read_text() == "input\n"

    pool.stop()
    pool.start(slots=1)
    assert pool.job_ids() == [f"{cid}.0"]
    assert (cdir / "0" / f"cluster{cid}.proc0.subproc0" / "data" / "a.txt").read_text() == "a\n"
    pool.htcd("qedit", f"{cid}.0", "Requirements", "true")
    wait_for(lambda: status(pool, f"{cid}.0") == "4", 120, f"the job ran after the restart\n{pool.log('ShadowLog')}")
    pool.htcd("transfer_data", str(cid))
    assert (d / "result.txt").read_text() == "input\na\nb\n"
    assert (d / "w.out").read_text() == "proc  stdin: from stdin\n"
    wait_for(lambda: not cdir.exists(), 30, "the spool directory gone with the last job")


def test_a_300_mib_input_reaches_the_job_in_chunks_with_bounded_memory(make_pool) -> None:
    pool = make_pool(ONE_SLOT, slots=1)
    d = pool.jobs_dir
    size = 300 * 1024 * 1024
    with open(d / "big.bin", "wb") as f:  # sparse: no disk for the zeros at the source
        f.write(b"HEAD")
        f.truncate(size)
        f.seek(size - 4)
        f.write(b"TAIL")
    (d / "big.sh").write_text('#!/bin/sh\nwc -c < big.bin\nhead -c 4 big.bin; echo\ntail -c 4 big.bin; echo\n')
    os.chmod(d / "big.sh", 0o755)
    (d / "big.sub").write_text("executable = big.sh\noutput = big.out\nerror = big.err\nlog = big.log\n"
                               "transfer_input_files = big.bin\nrequest_disk = 1\nqueue\n")
    # the tool runs under a small Python parent that reports its peak RSS (RUSAGE_CHILDREN of this
    # test process would count every child the session has waited for)
    measure = ("import resource, subprocess, sys\n"
               "p = subprocess.run([sys.executable, '-m', 'htcd', 'submit', '-spool', '-terse', 'big.sub'],"
               " capture_output=True, text=True)\n"
               "print(p.stdout.strip(), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
               "sys.exit(p.returncode)\n")
    out = subprocess.run([sys.executable, "-c", measure], env=pool.env, cwd=d, capture_output=True, text=True,
                         timeout=240)
    assert out.returncode == 0, out.stderr
    words = out.stdout.split()
    cid, peak_kb = int(words[0].split(".")[0]), words[-1]
    (d / "big.bin").unlink()
    wait_for(lambda: status(pool, f"{cid}.0") in ("4", "5"), 240,
             f"the big job's end\n{pool.log('ShadowLog')}\n{pool.log('StartLog')}")
    assert status(pool, f"{cid}.0") == "4", pool.job_attr(f"{cid}.0", "HoldReason")
    assert "as a chunk stream" in pool.log("ShadowLog")
    pids = pool.daemon_pids()
    for daemon in ("SCHEDD", "STARTD"):
        assert peak_rss_mb(pids[daemon]) < 200, f"{daemon} peaked at {peak_rss_mb(pids[daemon]):.0f} MB"
    tool_peak_mb = int(peak_kb) / 1024
    assert tool_peak_mb < 200, f"htcd submit -spool peaked at {tool_peak_mb:.0f} MB"
    pool.htcd("transfer_data", str(cid))
    assert (d / "big.out").read_text().split() == [str(size), "HEAD", "TAIL"]
    assert not (d / "big.bin").exists(), "an unchanged input does not come back as output"
    wait_for(lambda: pool.job_ids() == [], 30, "the job left the queue")


def test_big_input_in_a_directory_streams_between_shadow_and_starter(make_pool) -> None:
    pool = make_pool(ONE_SLOT, slots=1)
    d = pool.jobs_dir
    (d / "data").mkdir()
    blob = os.urandom(11 * 1024 * 1024)  # three chunks
    (d / "data" / "blob.bin").write_bytes(blob)
    (d / "data" / "small.txt").write_text("small\n")
    (d / "h.sh").write_text("#!/bin/sh\nsha256sum data/blob.bin | cut -d' ' -f1\ncat data/small.txt\n")
    os.chmod(d / "h.sh", 0o755)
    pool.submit("executable = h.sh\noutput = h.out\nlog = h.log\nshould_transfer_files = YES\n"
                "transfer_input_files = data\nqueue\n", name="h.sub")
    wait_for(lambda: (d / "h.out").exists() and (d / "h.out").read_text(), 120, f"the job's output\n{pool.log('ShadowLog')}")
    import hashlib

    assert (d / "h.out").read_text().split() == [hashlib.sha256(blob).hexdigest(), "small"]
    assert "sent 11534336 bytes of input as a chunk stream" in pool.log("ShadowLog")
    assert not [p for p in (pool.local / "execute").iterdir() if p.name.startswith(".incoming_")]


def test_hostile_or_malformed_spool_requests_are_refused_cleanly(make_pool, monkeypatch) -> None:
    import time

    from htcd.cli import common
    from htcd.client.schedd import ScheddClient
    from htcd.client.spool import mark_spooled
    from htcd.submit import parse_submit
    from htcd.wire.framing import encode, recv_frame

    pool = make_pool(ONE_SLOT, slots=1)
    d = pool.jobs_dir
    write_inputs(d)
    monkeypatch.setenv("HTCD_CONFIG", str(pool.config_file))
    cfg = common.config("SUBMIT")
    addr = (spool(pool) / ".schedd_address").read_text().split()[0]
    desc = parse_submit("executable = job.sh\nqueue\n", str(d / "x.sub"))
    with ScheddClient(addr) as schedd:
        def build(cid: int):
            cluster_ad, procs = desc.make_jobs(cid, submit_dir=str(d), owner="root", qdate=int(time.time()),
                                               config_get=cfg.get)
            mark_spooled(cluster_ad, procs)
            return cluster_ad, procs

        cid = schedd.submit(build).cluster_id
        sock = schedd.conn.sock

        def ask(args: dict) -> dict:
            sock.sendall(encode({"cmd": "SPOOL_JOB_FILES", "args": args}))
            return recv_frame(sock)

        assert ask({"cluster_id": "1"})["code"] == "BAD_REQUEST"
        assert ask({"cluster_id": cid + 50})["code"] == "BAD_REQUEST"
        bad = schedd.conn.stream("TRANSFER_DATA", fetched=5)
        try:
            next(bad)
            raise AssertionError("TRANSFER_DATA fetched=5 was accepted")
        except Exception as exc:
            assert "BAD_REQUEST" in repr(exc) or "fetched must be" in str(exc)
        # a stream naming a file outside the spool: refused, nothing written, the job stays held
        assert ask({"cluster_id": cid}).get("more")
        for frame in ({"job": f"{cid}.0"}, {"file": "../../../evil", "mode": 0o644, "size": 1}, {"data": b"x"},
                      {"end": "../../../evil", "size": 1, "sha256": "0"}, {"done": True, "files": 1}):
            sock.sendall(encode(frame))
        reply = recv_frame(sock)
        assert reply["code"] == "TRANSFER_FAILED" and "unsafe file name" in reply["error"], reply
        # the connection is still in step: a query works
        assert schedd.totals()["all"]
    assert not list(pool.local.rglob("evil"))
    assert pool.job_attr(f"{cid}.0", "HoldReasonCode") == "16"
    assert "unsafe file name" in pool.job_attr(f"{cid}.0", "HoldReason")
    assert not (spool(pool) / str(cid)).exists()


def _as_user(pool: Pool, uid: int, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``htcd ARGS`` as another user (the system's Python with this checkout on its path)."""
    env = {**pool.env, "PYTHONPATH": f"{Path(__file__).parents[2]}:{sysconfig.get_paths()['purelib']}",
           "HOME": str(cwd)}

    def drop() -> None:
        os.setgid(uid)
        os.setgroups([])
        os.setuid(uid)

    return subprocess.run([SYSTEM_PYTHON, "-m", "htcd", *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=120, preexec_fn=drop, check=False)


@pytest.mark.skipif(os.geteuid() != 0 or not Path(SYSTEM_PYTHON).exists(), reason="needs root and a system Python")
def test_only_the_owner_uploads_and_fetches_and_a_root_schedd_gives_the_spool_to_the_owner(make_pool) -> None:
    pool = make_pool(ONE_SLOT, slots=1)
    for p in [pool.dir, *pool.dir.parents]:
        if p == Path("/tmp") or p == Path("/"):
            break
        os.chmod(p, 0o755)
    probe = _as_user(pool, NOBODY, "q", cwd=Path("/tmp"))
    if probe.returncode != 0:
        pytest.skip(f"the system Python cannot run htcd as nobody here: {probe.stderr[-300:]}")
    home = pool.dir / "nobody"
    home.mkdir()
    write_inputs(home)
    (home / "n.sub").write_text("executable = job.sh\ninput = stdin.txt\noutput = n.out\n"
                                "transfer_input_files = in.txt, data\nqueue\n")
    for p in [home, *home.rglob("*")]:
        os.chown(p, NOBODY, NOBODY)
    got = _as_user(pool, NOBODY, "submit", "-spool", "-terse", "n.sub", cwd=home)
    assert got.returncode == 0, got.stderr
    cid = got.stdout.split(".")[0]
    job_dir = spool(pool) / cid / "0" / f"cluster{cid}.proc0.subproc0"
    assert job_dir.stat().st_uid == NOBODY and (job_dir / "in.txt").stat().st_uid == NOBODY
    wait_for(lambda: status(pool, f"{cid}.0") == "4", 120, f"nobody's job completed\n{pool.log('ShadowLog')}")
    assert (job_dir / "result.txt").read_text() == "input\na\nb\n"
    assert (job_dir / "result.txt").stat().st_uid == NOBODY
    # root's job: nobody may not fetch it
    write_inputs(pool.jobs_dir)
    (pool.jobs_dir / "r.sub").write_text("executable = job.sh\ninput = stdin.txt\noutput = r.out\n"
                                         "transfer_input_files = in.txt, data\nqueue\n")
    rid = pool.htcd("submit", "-spool", "-terse", "r.sub").stdout.split(".")[0]
    wait_for(lambda: status(pool, f"{rid}.0") == "4", 120, "root's job completed")
    denied = _as_user(pool, NOBODY, "transfer_data", rid, cwd=home)
    assert denied.returncode != 0 and "denied" in denied.stderr, denied.stderr
    assert not (pool.jobs_dir / "r.out").exists() and pool.job_ids() == [f"{cid}.0", f"{rid}.0"]
    mine = _as_user(pool, NOBODY, "transfer_data", "-all", cwd=home)
    assert mine.returncode == 0, mine.stderr
    assert (home / "n.out").read_text() == "proc  stdin: from stdin\n" and (home / "n.out").stat().st_uid == NOBODY
    assert pool.job_ids() == [f"{rid}.0"]


def test_unfetched_output_leaves_with_the_job_when_leave_job_in_queue_turns_false(make_pool) -> None:
    pool = make_pool({**ONE_SLOT, "PERIODIC_EXPR_INTERVAL": "1"}, slots=1)
    d = pool.jobs_dir
    write_inputs(d)
    (d / "l.sub").write_text("executable = job.sh\ninput = stdin.txt\noutput = l.out\n"
                             "transfer_input_files = in.txt, data\n"
                             "leave_in_queue = JobStatus == 4 && (time() - CompletionDate) < 4\nqueue\n")
    cid = pool.htcd("submit", "-spool", "-terse", "l.sub").stdout.split(".")[0]
    wait_for(lambda: status(pool, f"{cid}.0") == "4", 120, "the job completed and stayed in the queue")
    assert (spool(pool) / cid / "0" / f"cluster{cid}.proc0.subproc0" / "result.txt").exists()
    wait_for(lambda: pool.job_ids() == [], 30, "the job left once LeaveJobInQueue turned false")
    wait_for(lambda: not (spool(pool) / cid).exists(), 30, "its spool directory removed")
    assert pool.htcd("history", "-af", "ClusterId", "JobStatus").stdout.split() == [cid, "4"]
    assert not (d / "l.out").exists()
