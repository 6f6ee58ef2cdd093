"""``htcd ssh_to_job`` on a real pool: a command in a running job's sandbox, with the job's
environment and as the job's user; input relayed; an interactive shell on a pseudo-terminal; the
refusals for another user and where ENABLE_SSH_TO_JOB is false."""

from __future__ import annotations

import os
import pty
import pwd
import select
import subprocess
import sys
from pathlib import Path

import pytest
from pooltools import Pool, run_as, wait_for
from security.test_policy_pool import open_to_others

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the job runs as nobody")


def running_job(pool: Pool, execute: Path) -> tuple[str, Path]:
    """A job that waits for a file named end in its sandbox; its id and sandbox once it runs."""
    cid = pool.submit("executable = /bin/sh\narguments = \"-c 'while [ ! -e end ]; do sleep 0.1; done'\"\n"
                      "environment = \"MARK=inside-the-job\"\nqueue\n")
    sandbox = wait_for(lambda: next((p.parent for p in execute.rglob("_condor_stdout")), None), 60,
                       lambda: "the job's sandbox\n" + pool.log("StartLog")[-2000:])
    wait_for(lambda: pool.htcd("q", f"{cid}.0", "-af", "JobStatus").stdout == "2\n", 60, "the job to run")
    return f"{cid}.0", sandbox


def test_ssh_to_job_runs_in_the_sandbox_and_refuses_others(execute_dir: Path, make_pool,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    pool = make_pool({"EXECUTE": str(execute_dir)})
    job, sandbox = running_job(pool, execute_dir)
    ran = pool.htcd("ssh_to_job", job, "pwd; echo $MARK; id -un; echo oops >&2; exit 3", check=False)
    assert ran.returncode == 3, ran.stderr
    assert ran.stdout.splitlines() == [str(sandbox), "inside-the-job", "nobody"]
    assert ran.stderr == "oops\n"
    assert pool.htcd("ssh_to_job", job, "tr a-z A-Z", input="relayed input\n").stdout == "RELAYED INPUT\n"

    # an interactive shell on a pseudo-terminal
    main, child = pty.openpty()
    shell = subprocess.Popen([sys.executable, "-m", "htcd", "ssh_to_job", job], env=pool.env, stdin=child,
                             stdout=child, stderr=child, start_new_session=True)
    os.close(child)
    seen = b""
    try:
        def read_until(want: bytes) -> bool:
            nonlocal seen
            if select.select([main], [], [], 0.1)[0]:
                try:
                    seen += os.read(main, 4096)
                except OSError:  # the tool closed its terminal
                    return shell.poll() is not None
            return want in seen
        wait_for(lambda: read_until(b"$ "), 60, lambda: f"the shell's prompt, got {seen!r}")  # raw mode is on
        os.write(main, b"tty; echo $MARK-$((6*7)); exit 5\r")
        wait_for(lambda: read_until(b"inside-the-job-42") and shell.poll() is not None, 60,
                 lambda: f"the shell's answer, got {seen!r}")
        assert shell.wait(timeout=30) == 5
        assert b"/dev/pts/" in seen
    finally:
        if shell.poll() is None:
            shell.kill()
            shell.wait()
        os.close(main)

    env, _ = open_to_others(pool, monkeypatch)
    code, out, err = run_as(pwd.getpwnam("nobody").pw_uid, ["ssh_to_job", job, "pwd"], env)
    assert code == 1 and out == "" and "Traceback" not in err, (out, err)
    assert f"may not ssh to job {job}" in err and "QUEUE_SUPER_USERS" in err, err

    # where the execute point does not allow it
    with open(pool.dir / "htcd_config", "a") as f:
        f.write("ENABLE_SSH_TO_JOB = false\n")
    pool.htcd("reconfig")
    off = wait_for(lambda: (lambda p: p if "ENABLE_SSH_TO_JOB is false" in p.stderr else None)(
        pool.htcd("ssh_to_job", job, "pwd", check=False)), 30, "the reconfigured startd")
    assert off.returncode == 1 and off.stdout == "" and "Traceback" not in off.stderr
    (sandbox / "end").touch()
