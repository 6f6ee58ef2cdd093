"""The execute point's side: input files written into the sandbox, output files collected from it."""

from __future__ import annotations

import os

from htcd.classad import ClassAd
from htcd.transfer.paths import safe_name


def write_input(sandbox: str, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        with open(os.path.join(sandbox, safe_name(name)), "wb") as f:
            f.write(data)


def collect_output(sandbox: str, job_ad: ClassAd, sent: dict[str, bytes], before: set[str],
                   skip: set[str]) -> tuple[dict[str, bytes], list[str]]:
    """(files to send back, names listed in transfer_output_files that do not exist).

    Without transfer_output_files: every file the job created, or changed from what was sent.
    ``skip`` names the starter's own files (stdout/stderr captures, the job ad)."""
    out_names = job_ad.get_value("TransferOutput")
    if isinstance(out_names, str) and out_names.strip():
        wanted = [n.strip() for n in out_names.replace(",", " ").split()]
    else:
        wanted = [n for n in os.listdir(sandbox) if n not in skip and
                  (n not in before or n in sent and _modified(sandbox, n, sent))]
    files: dict[str, bytes] = {}
    missing = []
    for name in wanted:
        path = os.path.join(sandbox, safe_name(name))
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path, "rb") as f:
                files[os.path.basename(path)] = f.read()
        elif isinstance(out_names, str):
            missing.append(name)
    return files, missing


def _modified(sandbox: str, name: str, sent: dict[str, bytes]) -> bool:
    try:
        with open(os.path.join(sandbox, name), "rb") as f:
            return f.read() != sent.get(name)
    except OSError:
        return False
