"""``<dag>.dagman.out``: DAGMan's own log, each line stamped as HTCondor's daemons stamp theirs."""

from __future__ import annotations

import os
import time


class DagmanOut:
    def __init__(self, path: str) -> None:
        self.path = path
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def stamp(self) -> str:
        return time.strftime("%m/%d/%y %H:%M:%S")

    def line(self, text: str) -> None:
        stamp = self.stamp()
        os.write(self.fd, "".join(f"{stamp} {part}\n" for part in text.split("\n")).encode())

    def close(self) -> None:
        os.close(self.fd)
