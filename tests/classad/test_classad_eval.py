"""``htcd classad_eval`` run as a subprocess: command-line evaluation and the JSON-lines stream."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "htcd", "classad_eval", *args], input=stdin,
                          capture_output=True, text=True, timeout=60)


def test_expressions_with_assignments() -> None:
    r = run("a = 3", "b = a * 2", "a + b", 'strcat("x", "y")', "c")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["9", '"xy"', "undefined"]


def test_my_and_target() -> None:
    r = run("-my", "[ Memory = 2048 ]", "-target", "[ RequestMemory = 1024 ]",
            "TARGET.RequestMemory <= Memory", "RequestMemory", "MY.RequestMemory")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["true", "1024", "undefined"]


def test_file_old_and_new_syntax(tmp_path: Path) -> None:
    old = tmp_path / "old.ad"
    old.write_text('Owner = "alice"\nCpus = 4\n')
    new = tmp_path / "new.ad"
    new.write_text("[ Cpus = 8 ]\n")
    r = run("-file", str(old), "-target-file", str(new), "Owner", "Cpus + TARGET.Cpus")
    assert r.stdout.splitlines() == ['"alice"', "12"], r.stderr


def test_print_ad() -> None:
    r = run("-print-ad", "x = 1", "x")
    assert r.stdout.splitlines() == ["[ x = 1 ]", "1"]


def test_bad_expression_is_a_user_error() -> None:
    r = run("1 +")
    assert r.returncode == 1
    assert "Traceback" not in r.stderr and "classad_eval" in r.stderr


def test_missing_file() -> None:
    r = run("-file", "/nonexistent/x.ad", "1")
    assert r.returncode == 1 and "cannot read" in r.stderr


JSONL_CASES = [
    ({"expr": "1 + 2"}, {"type": "integer", "value": "3"}),
    ({"expr": "1.5 * 2"}, {"type": "real", "value": "3.000000000000000E+00"}),
    ({"expr": 'toUpper("a")'}, {"type": "string", "value": '"A"'}),
    ({"expr": "1 < 2"}, {"type": "boolean", "value": "true"}),
    ({"expr": "nope"}, {"type": "undefined", "value": "undefined"}),
    ({"expr": "1 / 0"}, {"type": "error", "value": "error"}),
    ({"expr": "{1, 2}"}, {"type": "list", "value": "{ 1,2 }"}),
    ({"expr": "[a = 1]"}, {"type": "classad", "value": "[ a = 1 ]"}),
    ({"expr": "x + y", "my": "[ x = 1 ]", "target": "[ y = 2 ]"}, {"type": "integer", "value": "3"}),
    ({"expr": "TARGET.y", "my": None, "target": "[ y = 5 ]"}, {"type": "integer", "value": "5"}),
]


def test_jsonl_stream() -> None:
    lines = [json.dumps(req) for req, _ in JSONL_CASES]
    bad = ["not json", '{"expr": "1 +"}', '{"expr": 5}', '{"expr": "x", "my": "[ x = ]"}', "",
           '{"expr": "x", "target": 3}', "[1, 2]"]
    text = "\n".join(lines[:3] + bad + lines[3:]) + "\n"
    r = run("--jsonl", stdin=text)
    assert r.returncode == 0, r.stderr
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert len(out) == len(lines) + len(bad)
    got_good = out[:3] + out[3 + len(bad):]
    assert got_good == [want for _, want in JSONL_CASES]
    assert all(o["type"] == "parse_error" and o["message"] for o in out[3:3 + len(bad)])


@pytest.mark.parametrize("expr, typ", [('absTime("2026-01-01T00:00:00Z")', "abstime"),
                                       ('relTime(3600)', "reltime")])
def test_jsonl_time_types(expr: str, typ: str) -> None:
    r = run("--jsonl", stdin=json.dumps({"expr": expr}) + "\n")
    assert json.loads(r.stdout)["type"] == typ
