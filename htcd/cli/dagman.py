"""``htcd dagman -f -Dag x.dag ...``: the DAGMan job (condor_dagman), normally started by the schedd
as the scheduler-universe job that ``htcd submit_dag`` submits; it can also be run by hand.

The arguments are condor_dagman's (``htcd.dagrun.args``).  The schedd sets ``CONDOR_ID`` to the
DAGMan job's id; without it (run by hand) DAGManJobId is 0 and the DAG job's ad is not updated.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.usage = "htcd dagman -f -Dag FILE [-Lockfile F] [-AutoRescue 0|1] [-DoRescueFrom N] [-MaxIdle N] ..."
    return run


def run(args: argparse.Namespace) -> int:
    from htcd.cli import common
    from htcd.dagrun.start import start_dagman

    argv = list(getattr(args, "extra", []))
    cfg = common.config("DAGMAN")
    return start_dagman(argv, cfg, sys.stderr)
