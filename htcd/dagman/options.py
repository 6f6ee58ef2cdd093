"""How a DAG file is read: where relative names resolve and which checks run."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ParseOptions:
    """``cwd``: where the DAG is submitted from (relative names resolve there, as with
    condor_submit_dag); ``use_dag_dir``: resolve against each top DAG file's directory instead
    (``-usedagdir``); ``check_files``: refuse a node whose submit file (or SUBDAG file) is
    missing; ``check_inline``: parse inline submit descriptions with htcd's submit language."""

    cwd: str = "."
    use_dag_dir: bool = False
    check_files: bool = True
    check_inline: bool = True
