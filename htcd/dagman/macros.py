"""The ``$MACROS`` of SCRIPT lines, expanded as DAGMan does when it runs a script.

The script line is split on blanks; a word that is, ignoring case, exactly one of the macro
names is replaced by its value (so ``x$RETRY`` stays as written).  The POST-only macros stay
unexpanded in a PRE script, with a warning; an unknown ``$WORD`` stays too, with a warning.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from htcd.dagman.model import ScriptKind

ALL_SCRIPTS = ("NODE", "JOB", "RETRY", "MAX_RETRIES", "DAG_STATUS", "FAILED_COUNT",
               "FUTILE_COUNT", "DONE_COUNT", "QUEUED_COUNT", "NODE_COUNT", "DAGID")
NOT_PRE = ("JOBID", "CLUSTERID", "JOB_COUNT", "SUCCESS", "RETURN", "EXIT_CODES",
           "EXIT_CODE_COUNTS", "EXIT_CODE_LIST", "PRE_SCRIPT_RETURN", "JOB_ABORT_COUNT")
KNOWN = frozenset(ALL_SCRIPTS + NOT_PRE)
_DOLLAR_WORD = re.compile(r"(?<!\S)\$\S*")


@dataclass(slots=True)
class ScriptValues:
    """What the runtime knows when it starts a script; each fills one macro."""

    node: str
    retry: int = 0
    max_retries: int = 0
    dag_status: int = 0
    failed_count: int = 0
    futile_count: int = 0
    done_count: int = 0
    queued_count: int = 0
    node_count: int = 0
    dag_id: str = ""
    cluster_id: int = -1
    proc_id: int = 0
    job_count: int = 0
    success: bool = False
    return_value: int = -1  # the first failed job's exit code, 0 when all succeeded
    exit_codes: Mapping[int, int] | None = None  # proc -> exit code (absent: aborted)
    job_abort_count: int = 0
    pre_script_return: int = -1  # -1 when the node has no PRE script

    def value(self, name: str) -> str:
        codes = self.exit_codes or {}
        counts: dict[int, int] = {}
        for code in codes.values():
            counts[code] = counts.get(code, 0) + 1
        table = {
            "NODE": self.node, "JOB": self.node, "RETRY": str(self.retry),
            "MAX_RETRIES": str(self.max_retries), "DAG_STATUS": str(self.dag_status),
            "FAILED_COUNT": str(self.failed_count), "FUTILE_COUNT": str(self.futile_count),
            "DONE_COUNT": str(self.done_count), "QUEUED_COUNT": str(self.queued_count),
            "NODE_COUNT": str(self.node_count), "DAGID": self.dag_id,
            "JOBID": f"{self.cluster_id}.{self.proc_id}", "CLUSTERID": str(self.cluster_id),
            "JOB_COUNT": str(self.job_count), "SUCCESS": "True" if self.success else "False",
            "RETURN": str(self.return_value),
            "EXIT_CODES": ",".join(str(c) for c in sorted(counts)),
            "EXIT_CODE_COUNTS": ",".join(f"{c}:{n}" for c, n in sorted(counts.items())),
            "EXIT_CODE_LIST": ",".join(str(codes[p]) for p in sorted(codes)),
            "PRE_SCRIPT_RETURN": str(self.pre_script_return),
            "JOB_ABORT_COUNT": str(self.job_abort_count),
        }
        return table[name]


def unknown_macros(kind: ScriptKind, command: str) -> list[str]:
    """Warnings for the ``$WORD``\\ s of a script line that will not be expanded."""
    out = []
    for word in _DOLLAR_WORD.findall(command):
        name = word[1:].upper()
        if name not in KNOWN:
            out.append(f"unrecognized macro {word} in the {kind.value} script arguments")
        elif kind is ScriptKind.PRE and name in NOT_PRE:
            out.append(f"{word} has no value in a PRE script and is passed as written")
    return out


def expand_script_arguments(kind: ScriptKind, executable: str, arguments: str,
                            values: ScriptValues) -> tuple[list[str], list[str]]:
    """(argv with the executable first, warnings) for running a script now."""
    argv: list[str] = []
    warnings: list[str] = []
    for word in f"{executable} {arguments}".split():
        name = word[1:].upper() if word.startswith("$") else ""
        if name in ALL_SCRIPTS or (name in NOT_PRE and kind is not ScriptKind.PRE):
            argv.append(values.value(name))
            continue
        if word.startswith("$"):
            warnings += unknown_macros(kind, word)
        argv.append(word)
    return argv, warnings
