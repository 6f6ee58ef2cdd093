"""classad2 (HTCondor's C++ ClassAd library) as a long-lived child process.

The library can die with a segmentation fault on some inputs; in the test process that would
take pytest down with it, and during hypothesis's shrinking it did.  Here each query goes down a
pipe to ``oracle_worker.py``; a worker that dies or hangs is ended and replaced at the next
query, and the query that killed it raises ``OracleCrash`` naming the input, which the test
reports as a failure.  Answers are JSON (see ``oracle_worker``)."""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import subprocess
import sys
import time
from typing import Any

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_worker.py")
TIMEOUT = 30.0  # seconds for one answer; classad2 has no limit on a regex search


class OracleCrash(Exception):
    """The oracle process died or hung on a query: ``index`` is its place in the batch."""

    def __init__(self, message: str, index: int = 0) -> None:
        super().__init__(message)
        self.index = index


class Oracle:
    """One classad2 worker process; ``close()`` ends it (by its own pid)."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._buf = b""  # answer bytes read but not yet used
        self._sel: selectors.BaseSelector | None = None

    def _start(self) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen([sys.executable, WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
        self._proc = proc
        self._buf = b""
        if self._sel is not None:
            self._sel.close()
        self._sel = selectors.DefaultSelector()
        assert proc.stdout is not None
        self._sel.register(proc.stdout, selectors.EVENT_READ)
        return proc

    def close(self) -> None:
        if self._sel is not None:
            self._sel.close()
            self._sel = None
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()

    def _kill(self) -> int | None:
        if self._sel is not None:
            self._sel.close()
            self._sel = None
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.kill()
        rc = proc.wait()
        for f in (proc.stdin, proc.stdout):
            if f:
                with contextlib.suppress(OSError):
                    f.close()
        return rc

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """One answer; OracleCrash (naming the request) if the worker dies or hangs on it."""
        return self.ask_many([request])[0]

    def ask_many(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Answers in order, the requests written in one go (much faster than one by one)."""
        proc = self._proc if self._proc is not None and self._proc.poll() is None else self._start()
        assert proc.stdin is not None and proc.stdout is not None
        answers: list[dict[str, Any]] = []
        pending = [(json.dumps(r) + "\n").encode() for r in requests]
        sel = self._sel
        assert sel is not None
        sent = 0
        while len(answers) < len(requests):
            # a few small requests in flight at a time (a large one alone), so that neither
            # process can block on a full pipe while the other waits for it
            while sent < len(pending) and (sent == len(answers) or (
                    sent - len(answers) < 64 and len(pending[sent]) < 1024)):
                try:
                    proc.stdin.write(pending[sent])
                    proc.stdin.flush()
                except (BrokenPipeError, OSError):
                    break
                sent += 1
            deadline = time.monotonic() + TIMEOUT
            while b"\n" not in self._buf:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(timeout=left):
                    self._kill()
                    raise OracleCrash(f"classad2 gave no answer in {TIMEOUT:.0f} s to "
                                      f"{requests[len(answers)]!r}", len(answers))
                chunk = os.read(proc.stdout.fileno(), 1 << 16)
                if not chunk:
                    rc = self._kill()
                    raise OracleCrash(f"classad2 died (exit status {rc}) on {requests[len(answers)]!r}",
                                      len(answers))
                self._buf += chunk
            line, _, self._buf = self._buf.partition(b"\n")
            answers.append(json.loads(line))
        return answers

    def query(self, text: str, my: str | None = None, target: str | None = None) -> dict[str, Any]:
        return self.ask({"expr": text, "my": my, "target": target})


def ask_all(oracle: Oracle, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Answers to every request; one that kills the worker gets ``{"crash": message}`` and the
    rest go to a fresh worker."""
    answers: list[dict[str, Any]] = []
    while len(answers) < len(requests):
        try:
            answers += oracle.ask_many(requests[len(answers):])
        except OracleCrash as e:
            start = len(answers)
            answers += oracle.ask_many(requests[start:start + e.index]) if e.index else []
            answers.append({"crash": str(e)})
    return answers


def oracle_value(answer: dict[str, Any]) -> str | None:
    """classad2's value printed (nested ads in name order), or None when the binding could not
    give one.  A list prints its elements as written, in both (``{1+1}`` is ``{ 1 + 1 }``)."""
    value = answer.get("value")
    return canonical(value) if isinstance(value, str) else None


def canonical(text: str) -> str:
    """Printed ClassAd text with every nested ad's attributes in name order: classad2 prints an
    ad's attributes in its hash order, htcd in insertion order, and neither order means anything."""
    if "[" not in text:
        return text
    from htcd.classad import ClassAdSyntaxError, parse_expr
    from htcd.classad.expr import AdExpr, unparse_name

    def walk(e: Any) -> str:
        if isinstance(e, AdExpr):
            names = sorted(e.ad._attrs, key=str.lower)
            body = "; ".join(f"{unparse_name(e.ad._attrs[n].name)} = {walk(e.ad.lookup(n))}" for n in names)
            return f"[ {body} ]" if body else "[  ]"
        out = str(e)
        for kid in e._kids():  # each nested ad's text replaced by its sorted form
            before = str(kid)
            if "[" in before:
                out = out.replace(before, walk(kid), 1)
        return out

    try:
        return walk(parse_expr(text))
    except (ClassAdSyntaxError, RecursionError):
        return text
