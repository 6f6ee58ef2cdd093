"""What HTCondor's own bindings (the htcondor wheel: htcondor2, classad2) say, for
test_api_oracle.py: one run answers a whole batch (JSON on stdin, JSON on stdout), so the
module pays for one interpreter and one import of the library.

Run with ``CONDOR_CONFIG=/dev/null TZ=UTC`` (htcondor2 imported first, as the library needs)."""

from __future__ import annotations

import enum
import inspect
import json
import sys
from typing import Any

import classad2
import htcondor2


def signature(obj: Any) -> dict[str, Any]:
    sig = inspect.signature(obj)
    params = [[p.name, p.kind.name, repr(p.default) if p.default is not p.empty else None]
              for p in sig.parameters.values() if p.name != "self"]
    ret = sig.return_annotation
    return {"params": params, "return": None if ret is sig.empty else (ret if isinstance(ret, str) else repr(ret))}


def api(names: dict[str, list[str]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, methods in names.items():
        obj = getattr(htcondor2, name)
        out[name] = {"__init__": signature(obj.__init__) if inspect.isclass(obj) else signature(obj)}
        for m in methods:
            out[name][m] = signature(getattr(obj, m))
    return out


def enums(names: list[str]) -> dict[str, Any]:
    return {n: [[m.name, int(m.value)] for m in getattr(htcondor2, n)] for n in names}


def value(v: Any) -> Any:
    if isinstance(v, classad2.Value):
        return ["Value", v.name]
    if isinstance(v, classad2.ExprTree):
        return ["ExprTree", str(v)]
    if isinstance(v, classad2.ClassAd):
        return ["ClassAd", {k: value(v[k]) for k in sorted(v.keys())}]
    if isinstance(v, list):
        return ["list", [value(x) for x in v]]
    if isinstance(v, enum.Enum):
        return [type(v).__name__, v.name]
    return [type(v).__name__, v]


def items(s: Any) -> Any:
    """The queue statement's items; None when the library cannot say (a plain count)."""
    try:
        return list(s.itemdata())
    except Exception:
        return None


def submits(cases: list[dict[str, Any]]) -> list[Any]:
    out = []
    for case in cases:
        try:
            s = htcondor2.Submit(case["input"]) if "input" in case else htcondor2.Submit(**case["kwargs"])
            if case.get("qargs") is not None:
                s.setQArgs(case["qargs"])
            out.append({"str": str(s), "keys": list(s.keys()), "qargs": s.getQArgs(),
                        "items": items(s),
                        "expand": {k: s.expand(k) for k in case.get("expand", [])}})
        except Exception as exc:
            out.append({"error": type(exc).__name__})
    return out


def classads(texts: list[str]) -> list[Any]:
    return [{k: value(classad2.ClassAd(t)[k]) for k in sorted(classad2.ClassAd(t).keys())} for t in texts]


def events(path: str) -> list[Any]:
    return [{"type": int(e.type), "cluster": e.cluster, "proc": e.proc, "timestamp": e.timestamp,
             "attrs": {k: value(e[k]) for k in e}} for e in htcondor2.JobEventLog(path).events(0)]


def scripts(paths: list[str]) -> list[str]:
    """Standard output of each harvested example run on the wheel: its import lines put back
    (``from htcd.api import classad as X`` -> ``import classad2 as X``)."""
    import contextlib
    import io
    import re

    out = []
    for path in paths:
        with open(path) as f:
            code = f.read()
        code = re.sub(r"^from htcd\.api import classad as (\w+)$", r"import classad2 as \1", code, flags=re.M)
        code = re.sub(r"^import htcd\.api as (\w+)$", r"import htcondor2 as \1", code, flags=re.M)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(code, path, "exec"), {"__name__": "__main__"})
        out.append(buf.getvalue())
    return out


def main() -> None:
    req = json.load(sys.stdin)
    out = {"api": api(req["api"]), "enums": enums(req["enums"]), "submits": submits(req["submits"]),
           "classads": classads(req["classads"]), "events": events(req["eventlog"]),
           "quote": [classad2.quote(s) for s in req["quote"]], "scripts": scripts(req["scripts"]),
           "unquote": [classad2.unquote(classad2.quote(s)) for s in req["quote"]]}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
