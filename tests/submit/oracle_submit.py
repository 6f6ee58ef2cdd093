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
import sys

os.environ["CONDOR_CONFIG"] = "/dev/null"
os.environ["TZ"] = "UTC"
import htcondor


def main() -> None:
    out = []
    for case in json.load(sys.stdin):
        os.environ.clear()
        os.environ.update(case["env"])  # the environment htcd saw, for getenv and $ENV()
        os.environ["CONDOR_CONFIG"] = case["config"]
        htcondor.reload_config()
        os.chdir(os.path.dirname(case["path"]))
        with open(case["path"]) as fh:
            text = fh.read()
        try:
            ads = htcondor.Submit(text).jobs(clusterid=case["cluster"], qdate=case["qdate"])
            out.append({"ads": [{k: str(ad.lookup(k)) for k in ad} for ad in ads]})
        except Exception as err:  # the bindings' RuntimeError carries condor_submit's message
            out.append({"error": str(err)})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
