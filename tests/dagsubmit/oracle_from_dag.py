"""Run as a script with HTCondor 25's Python bindings (``htcondor2``): the differential oracle
for ``<dag>.condor.sub``.

Reads a JSON list of ``{"dir", "dags", "options", "mine"}`` on stdin and prints a JSON list with,
per case, ``{"theirs": {command: value}, "mine": {command: value}}`` -- condor_submit_dag's
description from ``htcondor2.Submit.from_dag`` (run in ``dir``) and htcd's file read by the same
submit parser -- or ``{"error": message}``.  The caller puts a ``condor_dagman`` on PATH (from_dag
refuses to work without one) and sets ``_CONDOR_DAGMAN_DISABLE_PORT`` so both sides run DAGMan
without a command port (``-p 0``), as htcd's DAGMan always does.
"""

from __future__ import annotations

import json
import os
import sys

os.environ["TZ"] = "UTC"
import htcondor2


def one(case: dict) -> dict:
    os.chdir(case["dir"])
    try:
        theirs = htcondor2.Submit.from_dag(case["dags"][0], case["options"])
    except Exception as err:  # the bindings raise HTCondorException with condor_submit_dag's message
        return {"error": str(err)}
    return {"theirs": dict(theirs), "mine": dict(htcondor2.Submit(case["mine"]))}


def main() -> None:
    cases = json.load(sys.stdin)
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # what the library prints ("Running rescue DAG 2") goes to stderr
    json.dump([one(c) for c in cases], out)
    out.close()


if __name__ == "__main__":
    main()
