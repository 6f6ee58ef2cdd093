"""What the tools for looking inside jobs refuse without a pool: chirp outside a job with
WantIOProxy (submit -interactive's refusals: test_submit_interactive.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_chirp_outside_a_job_with_want_io_proxy_is_refused(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("_CONDOR_")}
    proc = subprocess.run([sys.executable, "-m", "htcd", "chirp", "get_job_attr", "Owner"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "+WantIOProxy = true" in proc.stderr and ".chirp.config does not exist" in proc.stderr, proc.stderr

