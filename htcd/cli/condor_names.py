"""The ``condor_*`` command names htcd answers to, and the ``htcd`` words each one stands for.

A script written for HTCondor calls ``condor_q -af ClusterId``; installed under that name
(``htcd install-condor-names``), htcd's :func:`htcd.cli.main.main` reads its program name and
runs ``htcd q -af ClusterId``.  This module is read at every start of every tool: it holds data
only.
"""

from __future__ import annotations

# condor_<key> -> the htcd words it stands for (the subcommand, then any fixed arguments).  The
# keys lack the prefix so that no string here reads as a config knob (condor_version would be
# CONDOR_VERSION to htcd.config.knobscan).
_CONDOR_TOOLS: dict[str, tuple[str, ...]] = {
    "submit": ("submit",),
    "q": ("q",),
    "rm": ("rm",),
    "hold": ("hold",),
    "release": ("release",),
    "qedit": ("qedit",),
    "history": ("history",),
    "wait": ("wait",),
    "status": ("status",),
    "config_val": ("config_val",),
    "reconfig": ("reconfig",),
    "restart": ("restart",),
    "on": ("on",),
    "off": ("off",),
    "drain": ("drain",),
    "userprio": ("userprio",),
    "ping": ("ping",),
    "vacate": ("vacate",),
    "vacate_job": ("vacate_job",),
    "tail": ("tail",),
    "chirp": ("chirp",),
    "ssh_to_job": ("ssh_to_job",),
    "transfer_data": ("transfer_data",),
    "updates_stats": ("updates_stats",),
    "token_create": ("token", "create"),
    "token_list": ("token", "list"),
    "token_fetch": ("token", "fetch"),
    "token_request": ("token", "request"),
    "version": ("version",),
    "submit_dag": ("submit_dag",),
    "dagman": ("dagman",),
    "master": ("master",),
    "collector": ("collector",),
    "negotiator": ("negotiator",),
    "schedd": ("schedd",),
    "startd": ("startd",),
}
CONDOR_NAMES: dict[str, tuple[str, ...]] = {
    **{"condor_" + key: words for key, words in _CONDOR_TOOLS.items()},
    "classad_eval": ("classad_eval",),
}

# Names whose htcd counterpart does not exist (yet): the name is installed so that a script gets
# a clear refusal instead of "command not found" or, worse, a stale HTCondor tool.
NOT_IN_HTCD: dict[str, str] = {
    "condor_token_fetch": "htcd has no token fetch: create a token on the central manager with "
                          "`condor_token_create -identity USER` and copy it into SEC_TOKEN_DIRECTORY",
    "condor_token_request": "htcd has no token request flow: create a token on the central manager with "
                            "`condor_token_create -identity USER` and copy it into SEC_TOKEN_DIRECTORY",
}

# The mark every installed wrapper carries: what tells htcd's names from a real HTCondor's.
WRAPPER_MARK = "# htcd condor name wrapper"


def words_for(program: str) -> tuple[str, ...] | None:
    """The htcd words a program name stands for (``condor_q`` -> ``("q",)``), None for ``htcd``."""
    base = program.rsplit("/", 1)[-1]
    if base.endswith(".exe"):
        base = base[:-4]
    return CONDOR_NAMES.get(base)


def condor_tool(command: str | None, argv: list[str]) -> str | None:
    """The condor name of an htcd subcommand (``rm`` -> ``condor_rm``; ``token create`` ->
    ``condor_token_create``)."""
    if command is None:
        return None
    best = None
    for name, words in CONDOR_NAMES.items():
        if words[0] == command and (len(words) == 1 or words[1] in argv):
            best = name
    return best


def condor_options(tool: str) -> dict[str, str]:
    """The options of HTCondor's ``tool`` as its man page lists them: option -> "value" or "flag"
    (condor_options.tsv, written by scripts/harvest_condor_options.py)."""
    from pathlib import Path

    found: dict[str, str] = {}
    with open(Path(__file__).with_name("condor_options.tsv"), encoding="utf-8") as f:
        for line in f:
            if line.startswith(tool + "\t"):
                _, opt, kind = line.rstrip("\n").split("\t")
                found[opt] = kind
    return found
