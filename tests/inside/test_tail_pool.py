"""``htcd tail`` on a real pool: a running job's stdout and stderr, -maxbytes, -follow to the job's
end, and the refusal for another user (played by ``nobody``, which needs root)."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest
from pooltools import Pool, run_as, wait_for
from security.test_policy_pool import open_to_others

JOB = ("#!/bin/sh\necho 'line one'\necho 'on stderr' >&2\nwhile [ ! -e go ]; do sleep 0.1; done\necho 'line two'\n"
       "while [ ! -e end ]; do sleep 0.1; done\n")


def start_job(pool: Pool, execute: Path) -> tuple[str, Path]:
    """A job that writes a line, waits for a file named go in its sandbox, writes another, waits
    for one named end and exits; its id and sandbox once the first line is there."""
    script = pool.jobs_dir / "talk.sh"
    script.write_text(JOB)
    script.chmod(0o755)
    cid = pool.submit("executable = talk.sh\noutput = talk.out\nerror = talk.err\nqueue\n")
    sandbox = wait_for(lambda: next((p.parent for p in execute.rglob("_condor_stdout")
                                     if p.read_text() == "line one\n"), None), 60,
                       lambda: "the job's first line\n" + pool.log("StarterLog.slot1")[-2000:])
    return f"{cid}.0", sandbox


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")
def test_tail_shows_follows_and_refuses_others(execute_dir: Path, make_pool,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    pool = make_pool({"EXECUTE": str(execute_dir)})
    job, sandbox = start_job(pool, execute_dir)
    assert pool.htcd("tail", job).stdout == "line one\n"
    assert not (sandbox / ".chirp.config").exists()  # no chirp for a job without WantIOProxy
    assert pool.htcd("tail", "-stderr", job).stdout == "on stderr\n"
    assert pool.htcd("tail", "-maxbytes", "4", job.split(".")[0]).stdout == "one\n"
    refused = pool.htcd("tail", job, "secret.txt", check=False)  # not in transfer_output_files
    assert refused.returncode == 1 and "transfer_output_files" in refused.stderr, refused.stderr

    # another user may not look, and is told why
    env, _ = open_to_others(pool, monkeypatch)
    code, out, err = run_as(pwd.getpwnam("nobody").pw_uid, ["tail", job], env)
    assert code == 1 and out == "", (out, err)
    assert f"may not tail job {job}" in err and "QUEUE_SUPER_USERS" in err and "Traceback" not in err, err

    # -follow prints what comes and ends with the job
    with open(pool.dir / "follow.out", "wb") as sink:
        follow = subprocess.Popen([sys.executable, "-m", "htcd", "tail", "-f", job], env=pool.env, stdout=sink,
                                  stderr=subprocess.PIPE)
    try:
        wait_for(lambda: (pool.dir / "follow.out").read_text() == "line one\n", 30, "tail -f's first line")
        (sandbox / "go").touch()
        wait_for(lambda: (pool.dir / "follow.out").read_text() == "line one\nline two\n", 30,
                 "tail -f's second line")
        (sandbox / "end").touch()
        _, err_text = follow.communicate(timeout=90)
    finally:
        if follow.poll() is None:
            follow.kill()
            follow.wait()
    assert follow.returncode == 0, err_text
    assert (pool.dir / "follow.out").read_text() == "line one\nline two\n"
    # a job that left the queue is refused with the reason, no traceback
    done = wait_for(lambda: (lambda p: p if p.returncode == 1 and "not in the queue" in p.stderr else None)(
        pool.htcd("tail", job, check=False)), 60, "the job to leave the queue")
    assert done.stderr.strip().endswith(f"job {job} is not in the queue") and "Traceback" not in done.stderr
