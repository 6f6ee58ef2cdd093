"""``htcd submit -interactive`` on a real pool: the placeholder job runs, a shell is attached to it
(from piped stdin, and on a pseudo-terminal with a submit file whose requests apply), the job has
InteractiveJob = true and leaves the queue once the shell has exited; an interrupt while waiting
removes the job, and a held job ends the wait with its hold reason."""

from __future__ import annotations

import contextlib
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from pooltools import Pool, wait_for

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the job runs as nobody")


@pytest.fixture(scope="module")
def pool(module_pool) -> Iterator[Pool]:
    """One pool for the module (each test submits its own jobs), its EXECUTE reachable by nobody."""
    execute = Path(tempfile.mkdtemp(prefix="htcd-execute-", dir="/tmp"))
    os.chmod(execute, 0o755)
    try:
        yield module_pool({"EXECUTE": str(execute)})
    finally:
        shutil.rmtree(execute, ignore_errors=True)


class Reader:
    """What a descriptor (a pty's master or a pipe) has said so far, read without blocking."""

    def __init__(self, fd: int) -> None:
        self.fd, self.seen = fd, b""

    def has(self, want: bytes) -> bool:
        if select.select([self.fd], [], [], 0.1)[0]:
            with contextlib.suppress(OSError):  # OSError: the other side closed its terminal
                self.seen += os.read(self.fd, 4096)
        return want in self.seen


def gone(pool: Pool, cid: int) -> bool:
    return pool.htcd("q", str(cid), "-af", "JobStatus").stdout == ""


def history(pool: Pool, cid: int, *attrs: str) -> list[str]:
    return pool.htcd("history", f"{cid}.0", "-af", *attrs).stdout.split()


def submitted(text: str) -> int:
    line = next(ln for ln in text.splitlines() if "job(s) submitted to cluster" in ln)
    return int(line.rstrip(".").rsplit(" ", 1)[1])


def test_a_shell_in_the_placeholder_job_which_ends_with_it(pool: Pool) -> None:
    execute_dir = Path(pool.tool_config().get("EXECUTE") or "")

    # without a file, the shell reading its commands from piped stdin
    ran = pool.htcd("submit", "-interactive", check=False,
                    input="pwd; echo $_CONDOR_JOB_AD; grep '^InteractiveJob' $_CONDOR_JOB_AD; "
                          "ls -d $_CONDOR_SCRATCH_DIR/.condor_ssh_to_job_*; id -un; exit 7\n")
    assert ran.returncode == 7, ran.stderr
    cid = submitted(ran.stdout)
    lines = ran.stdout.splitlines()
    assert lines[:2] == ["Submitting job(s).", f"1 job(s) submitted to cluster {cid}."]
    sandbox = lines[2]
    assert sandbox.startswith(str(execute_dir) + "/"), lines
    assert lines[3:] == [f"{sandbox}/.job.ad", "InteractiveJob = true", f"{sandbox}/.condor_ssh_to_job_1", "nobody"]
    assert "Traceback" not in ran.stderr
    wait_for(lambda: gone(pool, cid), 60, lambda: f"job {cid} to leave the queue\n" + pool.log("SchedLog")[-2000:])
    # ended by the startd after the last session, with SIGTERM, as HTCondor's placeholder is
    assert history(pool, cid, "JobStatus", "ExitBySignal", "ExitSignal", "InteractiveJob", "Cmd", "JobPrio") == \
        ["4", "true", "15", "true", "/bin/sh", "1000"]
    wait_for(lambda: not Path(sandbox).exists(), 30, "the sandbox to be removed")

    # with a submit file, on a pseudo-terminal: its requests and environment apply, its program does not
    (pool.jobs_dir / "shell.sub").write_text('executable = /bin/false\nrequest_memory = 64\n'
                                             'environment = "MARK=from-the-file"\nqueue 3\n')
    main, child = pty.openpty()
    tool = subprocess.Popen([sys.executable, "-m", "htcd", "submit", "-interactive", "shell.sub"], env=pool.env,
                            cwd=pool.jobs_dir, stdin=child, stdout=child, stderr=child, start_new_session=True)
    os.close(child)
    out = Reader(main)
    try:
        wait_for(lambda: out.has(b"$ "), 90, lambda: f"the shell's prompt, got {out.seen!r}")
        os.write(main, b"echo $MARK-$((6*7)); exit 3\r")
        wait_for(lambda: out.has(b"from-the-file-42") and tool.poll() is not None, 60,
                 lambda: f"the shell's answer, got {out.seen!r}")
        assert tool.wait(timeout=30) == 3
    finally:
        if tool.poll() is None:
            tool.kill()
            tool.wait()
        os.close(main)
    text = out.seen.decode(errors="replace")
    assert "shell.sub:1: executable = /bin/false is replaced by the placeholder" in text, text
    assert "shell.sub:4: queue 3: -interactive submits exactly one job; the count is ignored" in text, text
    assert "Welcome to slot" in text and "Traceback" not in text, text
    cid = submitted(text)
    wait_for(lambda: gone(pool, cid), 60, f"job {cid} to leave the queue")
    assert history(pool, cid, "JobStatus", "RequestMemory", "InteractiveJob", "Cmd") == ["4", "64", "true", "/bin/sh"]


def test_an_interrupt_while_waiting_removes_the_job_and_a_hold_ends_the_wait(pool: Pool) -> None:

    def waiting() -> tuple[subprocess.Popen[bytes], Reader, int]:
        """The tool waiting for a job that cannot match, once it says so."""
        tool = subprocess.Popen([sys.executable, "-m", "htcd", "submit", "-interactive", "-append",
                                 "requirements = false"], env=pool.env, cwd=pool.jobs_dir, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        err = Reader(tool.stderr.fileno())  # type: ignore[union-attr]
        wait_for(lambda: err.has(b"Waiting for job to start...\n"), 60, lambda: f"the tool to wait: {err.seen!r}")
        return tool, err, submitted(tool.stdout.read1().decode())  # type: ignore[union-attr]

    tool, err, cid = waiting()
    tool.send_signal(signal.SIGINT)
    _, rest = tool.communicate(timeout=60)
    assert tool.returncode == 1
    assert f"Interrupted by signal 2 (SIGINT), removing job {cid}.0..." in (err.seen + rest).decode()
    wait_for(lambda: gone(pool, cid), 60, f"job {cid} to be removed")
    assert history(pool, cid, "JobStatus") == ["3"]

    tool, err, cid = waiting()
    pool.htcd("hold", f"{cid}.0", "-reason", "kept for later")
    _, rest = tool.communicate(timeout=60)
    message = (err.seen + rest).decode()
    assert tool.returncode == 1 and "Traceback" not in message
    assert f'job {cid}.0 is held: "kept for later"; it stays in the queue (htcd rm {cid}.0 removes it)' in message
    pool.htcd("rm", f"{cid}.0")
