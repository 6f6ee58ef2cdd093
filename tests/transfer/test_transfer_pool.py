"""File transfer in a real pool: directories in both forms, URLs through the http plugin
(a local http.server), remaps, output directories, missing output and refused links (held
with HTCondor's codes), the shared file system (should_transfer_files NO / IF_NEEDED with
FILESYSTEM_DOMAIN), and ON_EXIT_OR_EVICT output coming back as input after an eviction."""

from __future__ import annotations

import functools
import http.server
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from pooltools import Pool, wait_for

ONE_SLOT = {"NUM_CPUS": "1"}
RSET = {"ENABLE_RUNTIME_CONFIG": "TRUE", "SETTABLE_ATTRS_CONFIG": "PREEMPT"}


def events(log: Path) -> list[str]:
    text = log.read_text() if log.exists() else ""
    return [line[:3] for line in text.splitlines() if line[:3].isdigit() and " (" in line]


def script(pool: Pool, name: str, body: str) -> Path:
    path = pool.jobs_dir / name
    path.write_text(body.format(dir=pool.jobs_dir))
    os.chmod(path, 0o755)
    return path


def run(pool: Pool, body: str, submit: str, log: str = "t.log", expect: str = "005") -> str:
    """Submit a job running ``body``; wait for event ``expect`` (005 done, 012 held)."""
    script(pool, f"{log}.sh", body)
    cluster = pool.submit(f"executable = {log}.sh\nlog = {log}\n{submit}\nqueue\n", name=f"{log}.sub")
    wait_for(lambda: expect in events(pool.jobs_dir / log), 90,
             f"event {expect} in {log}: {events(pool.jobs_dir / log)}\n{pool.log('ShadowLog')}")
    return f"{cluster}.0"


def held_with(pool: Pool, job: str) -> tuple[int, str]:
    return int(pool.job_attr(job, "HoldReasonCode")), pool.job_attr(job, "HoldReason")


@pytest.fixture
def web(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An http.server on 127.0.0.1 serving a temp dir; shut down after the test."""
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", root
    server.shutdown()
    server.server_close()
    thread.join(10)


def test_directories_urls_remaps_and_output_directories(make_pool, web) -> None:
    base, www = web
    (www / "payload.txt").write_text("from the web")
    pool = make_pool(ONE_SLOT, slots=1)
    data = pool.jobs_dir / "data"
    (data / "deep").mkdir(parents=True)
    (data / "a.txt").write_text("A")
    (data / "deep" / "b.txt").write_text("B")
    body = """#!/bin/sh
set -e
cat data/a.txt data/deep/b.txt a.txt deep/b.txt payload.txt > seen.txt
mkdir -p results/inner
echo r1 > results/r1.txt
echo r2 > results/inner/r2.txt
echo renamed > plain.txt
echo stdout here
"""
    (pool.jobs_dir / "out").mkdir()  # a remap's directory must exist, as in HTCondor
    job = run(pool, body, "should_transfer_files = YES\noutput = job.out\n"
              f"transfer_input_files = data, data/, {base}/payload.txt\n"
              "transfer_output_files = seen.txt, results, plain.txt\n"
              'transfer_output_remaps = "plain.txt = out/renamed.txt; seen.txt = seen-remapped.txt"\n'
              "initialdir = .\n")
    j = pool.jobs_dir
    assert (j / "seen-remapped.txt").read_text() == "ABAB" + "from the web"
    assert (j / "results" / "r1.txt").read_text() == "r1\n" and (j / "results" / "inner" / "r2.txt").read_text() == "r2\n"
    assert (j / "out" / "renamed.txt").read_text() == "renamed\n" and not (j / "plain.txt").exists()
    assert (j / "job.out").read_text() == "stdout here\n"
    log = (j / "t.log").read_text()
    sent = [line for line in log.splitlines() if "Run Bytes Sent By Job" in line]
    received = [line for line in log.splitlines() if "Run Bytes Received By Job" in line]
    assert sent and int(sent[0].split()[0]) >= len("ABABfrom the web") + 6 + 8
    assert received and int(received[0].split()[0]) >= len(body) + 4 + len("from the web")
    assert job


def test_a_failing_url_and_missing_output_hold_the_job(make_pool, web) -> None:
    base, _ = web
    pool = make_pool(ONE_SLOT, slots=1)
    job = run(pool, "#!/bin/sh\ntrue\n", f"should_transfer_files = YES\ntransfer_input_files = {base}/nope.bin\n",
              log="u.log", expect="012")
    code, reason = held_with(pool, job)
    assert code == 13 and "using protocol http" in reason and "404" in reason, reason
    job = run(pool, "#!/bin/sh\necho x > made.txt\n",
              "should_transfer_files = YES\ntransfer_output_files = made.txt, never.txt\n", log="m.log", expect="012")
    code, reason = held_with(pool, job)
    assert code == 12 and "never.txt" in reason and "No such file or directory" in reason, reason
    assert pool.job_attr(job, "HoldReasonSubCode") == "2", "the subcode is the errno (ENOENT)"
    assert not (pool.jobs_dir / "made.txt").exists(), "a failed output transfer writes nothing"


def test_links_never_lead_output_out_of_place(make_pool, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("not for the job")
    os.chmod(secret, 0o600)
    pool = make_pool(ONE_SLOT, slots=1)
    job = run(pool, f"#!/bin/sh\nln -s {secret} out\n",
              "should_transfer_files = YES\ntransfer_output_files = out\n", log="l.log", expect="012")
    code, reason = held_with(pool, job)
    assert code == 12 and "out" in reason and "symbolic link" in reason, reason
    assert not (pool.jobs_dir / "out").exists()
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (pool.jobs_dir / "planted.out").symlink_to(victim)
    job = run(pool, "#!/bin/sh\necho overwrite\n", "should_transfer_files = YES\noutput = planted.out\n",
              log="p.log", expect="012")
    code, reason = held_with(pool, job)
    assert code == 12 and "planted.out" in reason and "symbolic link" in reason, reason
    assert victim.read_text() == "precious"


WHERE = "#!/bin/sh\npwd > where.txt\necho out\n"


def open_to_jobs(pool: Pool) -> None:
    """Jobs of root run as nobody: let them into the submit directory, as a shared file
    system lets the job's user into its Iwd."""
    for d in pool.jobs_dir.parents:
        if d == Path("/tmp"):
            break
        os.chmod(d, os.stat(d).st_mode | 0o005)
    os.chmod(pool.jobs_dir, 0o777)


def test_should_transfer_files_no_runs_in_iwd(make_pool) -> None:
    pool = make_pool({**ONE_SLOT, "FILESYSTEM_DOMAIN": "shared.example"}, slots=1)
    open_to_jobs(pool)
    run(pool, WHERE, "should_transfer_files = NO\noutput = no.out\n", log="n.log")
    assert (pool.jobs_dir / "where.txt").read_text().strip() == str(pool.jobs_dir)
    assert (pool.jobs_dir / "no.out").read_text() == "out\n"
    assert (pool.jobs_dir / "no.out").stat().st_uid != 0, "the job's own output, written by the job's user"
    (pool.jobs_dir / "where.txt").unlink()
    run(pool, WHERE, "should_transfer_files = YES\noutput = yes.out\n", log="y.log")
    assert "/execute/" in (pool.jobs_dir / "where.txt").read_text(), "YES runs in the sandbox"
    (pool.jobs_dir / "where.txt").unlink()
    # IF_NEEDED in the same domain, but root's job runs as nobody here, not as its owner:
    # the owner's files cannot be used in place, so they are transferred
    run(pool, WHERE, "should_transfer_files = IF_NEEDED\noutput = if.out\n", log="i.log")
    assert "/execute/" in (pool.jobs_dir / "where.txt").read_text()
    assert (pool.jobs_dir / "if.out").read_text() == "out\n"


def test_no_with_an_unusable_output_path_holds(make_pool, tmp_path: Path) -> None:
    pool = make_pool(ONE_SLOT, slots=1)
    open_to_jobs(pool)
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (pool.jobs_dir / "planted.out").symlink_to(victim)
    job = run(pool, WHERE, "should_transfer_files = NO\noutput = planted.out\n", log="v.log", expect="012")
    code, reason = held_with(pool, job)
    assert code == 7 and "planted.out" in reason and "symbolic link" in reason, reason
    assert victim.read_text() == "precious"


def test_another_file_system_domain_transfers(make_pool) -> None:
    pool = make_pool({**ONE_SLOT, "FILESYSTEM_DOMAIN": "submit.example", "STARTD.FILESYSTEM_DOMAIN": "ep.example"},
                     slots=1)
    assert "ep.example" in pool.htcd("status", "-af", "FileSystemDomain").stdout
    job = run(pool, WHERE, "should_transfer_files = IF_NEEDED\noutput = other.out\n", log="o.log")
    assert "/execute/" in (pool.jobs_dir / "where.txt").read_text()
    assert (pool.jobs_dir / "other.out").read_text() == "out\n"
    assert job


def test_on_exit_or_evict_output_comes_back_as_input(make_pool) -> None:
    pool = make_pool({**ONE_SLOT, **RSET, "PREEMPT": "False"}, slots=1)
    body = """#!/bin/sh
if [ -e progress ]; then echo "resumed after $(cat progress)" > result.txt; exit 0; fi
echo first-run > progress
touch {dir}/started
while true; do sleep 0.1; done
"""
    script(pool, "e.sh", body)
    pool.submit("executable = e.sh\nlog = e.log\nshould_transfer_files = YES\n"
                "when_to_transfer_output = ON_EXIT_OR_EVICT\nqueue\n", name="e.sub")
    wait_for(lambda: (pool.jobs_dir / "started").exists(), 90, "the job's first run")
    pool.htcd("config_val", "-daemon", "startd", "-rset", "PREEMPT = True")
    pool.htcd("reconfig", "-daemon", "startd")
    wait_for(lambda: "004" in events(pool.jobs_dir / "e.log"), 90, "the eviction")
    pool.htcd("config_val", "-daemon", "startd", "-rset", "PREEMPT = False")
    pool.htcd("reconfig", "-daemon", "startd")
    wait_for(lambda: "005" in events(pool.jobs_dir / "e.log"), 90, f"the job's end\n{pool.log('ShadowLog')}")
    assert (pool.jobs_dir / "result.txt").read_text() == "resumed after first-run\n"
    assert (pool.jobs_dir / "progress").read_text() == "first-run\n"
    assert not (pool.local / "spool" / "1" / "0").exists(), "the spooled output goes when the job is done"


def test_kept_evicted_output_goes_when_the_job_is_removed(make_pool) -> None:
    pool = make_pool({**ONE_SLOT, "ENABLE_RUNTIME_CONFIG": "TRUE", "SETTABLE_ATTRS_CONFIG": "PREEMPT, START",
                      "PREEMPT": "False"}, slots=1)
    script(pool, "e.sh", "#!/bin/sh\necho first-run > progress\ntouch {dir}/started\nwhile true; do sleep 0.1; done\n")
    pool.submit("executable = e.sh\nlog = e.log\nshould_transfer_files = YES\n"
                "when_to_transfer_output = ON_EXIT_OR_EVICT\nqueue\n", name="e.sub")
    wait_for(lambda: (pool.jobs_dir / "started").exists(), 90, "the job's first run")
    pool.htcd("config_val", "-daemon", "startd", "-rset", "START = False")
    pool.htcd("config_val", "-daemon", "startd", "-rset", "PREEMPT = True")
    pool.htcd("reconfig", "-daemon", "startd")
    wait_for(lambda: "004" in events(pool.jobs_dir / "e.log"), 90, "the eviction")
    kept = pool.local / "spool" / "1" / "0" / "cluster1.proc0.evicted"
    wait_for(lambda: (kept / "progress").exists(), 30, "the evicted job's output kept in the spool")
    pool.htcd("rm", "1.0")
    wait_for(lambda: pool.job_ids() == [], 60, "the removal")
    wait_for(lambda: not (pool.local / "spool" / "1").exists(), 30,
             lambda: f"the kept output to go with the job: {sorted(map(str, (pool.local / 'spool').rglob('*')))}")
