"""``htcd chirp`` from inside a real job (+WantIOProxy = true): it sets an attribute that
``htcd q -af`` shows, reads one back and writes a generic event to its user log.  The job runs as
nobody (root's jobs never run as root), with the system's Python 3 and this checkout on its path."""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest
from pooltools import wait_for

import htcd

CHECKOUT = str(Path(htcd.__file__).parent.parent)
SITE = sysconfig.get_paths()["purelib"]
SYSTEM_PYTHON = "/usr/bin/python3"


def nobody_runs_htcd() -> bool:
    """Whether nobody can run this checkout's htcd with the system's Python (same version)."""
    if os.geteuid() != 0 or not os.access(SYSTEM_PYTHON, os.X_OK) or shutil.which("su") is None:
        return False
    probe = subprocess.run(["su", "nobody", "-s", "/bin/sh", "-c",
                            f"PYTHONPATH={CHECKOUT}:{SITE} {SYSTEM_PYTHON} -c 'import htcd.cli.chirp'"],
                           capture_output=True, cwd="/", timeout=60)
    return probe.returncode == 0


pytestmark = pytest.mark.skipif(not nobody_runs_htcd(), reason="needs root and a system Python 3 that nobody "
                                "can run this checkout with")

JOB = """#!/bin/sh
export PYTHONPATH={path}
chirp() {{ {python} -m htcd chirp "$@"; }}
chirp set_job_attr ChirpColor '"blue"' || echo "set failed"
chirp get_job_attr RequestCpus
chirp get_job_attr_delayed ChirpColor
chirp ulog "halfway there" || echo "ulog failed"
chirp get_job_attr NoSuchAttr 2>&1
chirp get_job_attr ClaimId 2>&1
chirp fetch a b 2>&1
echo done
while [ ! -e end ]; do sleep 0.1; done
"""


def test_chirp_from_a_running_job(make_pool, execute_dir: Path) -> None:
    pool = make_pool({"EXECUTE": str(execute_dir)})
    for d in [pool.dir, *pool.dir.parents]:  # the job (nobody) reaches the startd's socket
        if str(d) in ("/", "/tmp"):
            break
        d.chmod(d.stat().st_mode | 0o011)
    script = pool.jobs_dir / "chirper.sh"
    script.write_text(JOB.format(path=f"{CHECKOUT}:{SITE}", python=SYSTEM_PYTHON))
    script.chmod(0o755)
    cid = pool.submit("executable = chirper.sh\noutput = chirper.out\nerror = chirper.err\nlog = chirper.log\n"
                      "+WantIOProxy = true\nqueue\n")
    job = f"{cid}.0"
    out = wait_for(lambda: (lambda t: t if t.endswith("done\n") else None)(pool.htcd("tail", job, check=False).stdout),
                   60, lambda: "the job's chirps\n" + pool.log("StartLog")[-2000:] + pool.log("SchedLog")[-2000:])
    assert out.splitlines() == ["1", '"blue"',
                                "htcd chirp: chirp get_job_attr: the job has no attribute NoSuchAttr",
                                "htcd chirp: chirp get_job_attr: the job has no attribute ClaimId",
                                "htcd chirp: chirp fetch: htcd's chirp does not offer file operations; only "
                                "set_job_attr, set_job_attr_delayed, get_job_attr, get_job_attr_delayed, ulog",
                                "done"], out
    assert pool.htcd("q", job, "-af", "ChirpColor").stdout == "blue\n"
    log = (pool.jobs_dir / "chirper.log").read_text()
    assert f"008 ({cid:03d}.000.000) " in log and "halfway there" in log, log
    sandbox = next(p.parent for p in execute_dir.rglob(".chirp.config"))
    assert oct(os.stat(sandbox / ".chirp.config").st_mode & 0o777) == "0o600"
    (sandbox / "end").touch()

