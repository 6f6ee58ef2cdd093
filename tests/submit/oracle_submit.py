"""Run as a script with HTCondor 24's Python bindings on PYTHONPATH: the differential oracle.

Reads a JSON list of ``{"path", "config", "env", "cluster", "qdate"}`` on stdin and prints a JSON list
with, per case, either ``{"ads": [{attr: expression text}]}`` or ``{"error": message}``.
It changes into each submit file's directory because HTCondor resolves relative paths (and
``include`` names) there.  The bindings read ``SUBMIT_TEMPLATE_*`` only the first time a Submit is
made in a process, so the caller runs one process per template configuration.
"""

from __future__ import annotations

import json
import os
import signal
import sys

os.environ["CONDOR_CONFIG"] = "/dev/null"
os.environ["TZ"] = "UTC"
import htcondor


def one(case: dict) -> dict:
    os.environ.clear()
    os.environ.update(case["env"])  # the environment htcd saw, for getenv and $ENV()
    os.environ["CONDOR_CONFIG"] = case["config"]
    htcondor.reload_config()
    os.chdir(os.path.dirname(case["path"]))
    with open(case["path"], encoding="utf-8", errors="surrogateescape") as fh:
        text = fh.read()
    try:
        ads = htcondor.Submit(text).jobs(clusterid=case["cluster"], qdate=case["qdate"])
        return {"ads": [{k: str(ad.lookup(k)) for k in ad} for ad in ads]}
    except Exception as err:  # the bindings' RuntimeError carries condor_submit's message
        return {"error": str(err)}


def isolated(case: dict) -> dict:
    """``one(case)`` in a forked child: HTCondor's code aborts the process on some input (an
    ``$INT()`` of a non-number), and a submit file's command may hang (SIGALRM ends it)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        signal.alarm(60)
        data = json.dumps(one(case)).encode()
        with os.fdopen(write, "wb") as fh:
            fh.write(data)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        data = fh.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status) or not data:
        return {"error": f"HTCondor's submit code ended the process (status {status})"}
    return json.loads(data)


def main() -> None:
    json.dump([isolated(case) for case in json.load(sys.stdin)], sys.stdout)


if __name__ == "__main__":
    main()
