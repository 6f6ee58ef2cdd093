"""Where a submit description reads other text from: included files and command output.

The parser reads through a ``Sources`` object so the language stays testable without a
file system; ``LocalSources`` is the real one.  Relative names resolve against the submit
directory (condor_submit resolves them against its working directory, which plays that part).
"""

from __future__ import annotations

import os
import subprocess
from typing import Protocol


class SourceError(ValueError):
    """A file or command could not be read; the message says why, the caller says where."""


class Sources(Protocol):
    """What ``include`` needs: a file's text, whether a file exists, a command's output."""

    def name(self, path: str) -> str:
        """The name errors and include-loop checks use for ``path`` (absolute)."""
        ...

    def exists(self, path: str) -> bool:
        ...

    def read(self, path: str) -> str:
        """The file's text; SourceError when it cannot be read."""
        ...

    def run(self, command: str) -> str:
        """The command's standard output; SourceError when it cannot run or fails."""
        ...


class LocalSources:
    """Files and commands of this machine, relative to ``base_dir``."""

    def __init__(self, base_dir: str) -> None:
        self.base_dir = os.path.abspath(base_dir)

    def name(self, path: str) -> str:
        return os.path.normpath(os.path.join(self.base_dir, path))

    def exists(self, path: str) -> bool:
        return os.path.exists(self.name(path))

    def read(self, path: str) -> str:
        try:
            with open(self.name(path), encoding="utf-8", errors="surrogateescape") as fh:
                return fh.read()
        except OSError as err:
            raise SourceError(f"cannot read the file: {err.strerror}") from err

    def run(self, command: str) -> str:
        return run_command(command, self.base_dir)


def run_command(command: str, cwd: str) -> str:
    """Standard output of ``command`` run by the shell in ``cwd``; a non-zero exit is an error
    naming the last line the command wrote to standard error (or its exit status)."""
    try:
        done = subprocess.run(command, shell=True, cwd=cwd, capture_output=True, text=True, check=False)
    except OSError as err:
        raise SourceError(f"cannot run the command: {err.strerror}") from err
    if done.returncode != 0:
        detail = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        raise SourceError(f"the command failed: {detail[0]}")
    return done.stdout
