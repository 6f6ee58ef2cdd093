"""What a job that wants chirp (``+WantIOProxy = true``) is given: ``.chirp.config`` in its sandbox.

HTCondor's starter writes the host, port and a cookie of its chirp proxy there.  htcd's file holds
one line, ``ADDRESS COOKIE``: the startd's address (its Unix socket on this host, which the job
reaches with FS authentication) and a random cookie the startd compares before it relays the
job's request (``CHIRP``) to the job's schedd.  ``_CONDOR_CHIRP_CONFIG`` names the file, as in
HTCondor.  The file is the job user's, mode 0600: another job cannot read the cookie.
"""

from __future__ import annotations

import os
import secrets

from htcd.classad import ClassAd

CONFIG_NAME = ".chirp.config"


def wanted(job: ClassAd) -> bool:
    return job.get_value("WantIOProxy") is True


def write_config(sandbox: str, address: str) -> tuple[str, str]:
    """Write ``.chirp.config``; (its path, the cookie)."""
    cookie = secrets.token_hex(32)
    path = os.path.join(sandbox, CONFIG_NAME)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(f"{address} {cookie}\n")
    return path, cookie
