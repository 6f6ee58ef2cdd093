"""The classad2 oracle as a child process: JSON requests on stdin, one JSON answer per line on
stdout.  HTCondor's library can crash the process (a segmentation fault in some list
selections), so the tests talk to it through ``oracle.Oracle`` instead of importing it.

A request is ``{"expr": text, "my": ad text or null, "target": ad text or null}`` (what
``oracle.Oracle.query`` sends) or ``{"ad": text, "format": "new" | "old"}``.  Answers:

- for an expression: ``accepts`` (classad2 parses it), ``unparse`` (its compact unparse),
  ``value`` (``repr`` of the value simplified against MY and TARGET, or null when the binding
  raises), ``ad_error``
  (MY or TARGET did not parse);
- for an ad: ``ok`` and, per attribute, its unparse and its value.
"""

from __future__ import annotations

import json
import os
import sys

os.environ["CONDOR_CONFIG"] = "/dev/null"
os.environ["TZ"] = "UTC"
import classad2
import htcondor2  # noqa: F401  (switches classad2 to HTCondor's daemon semantics)

_ADS: dict[tuple[str, str], object] = {}


def _ad(text: str | None, role: str) -> object:
    """The parsed ad, kept per role: MY and TARGET must be two objects even for the same text."""
    if text is None:
        return None
    ad = _ADS.get((role, text))
    if ad is None:
        if len(_ADS) > 256:
            _ADS.clear()
        ad = _ADS[(role, text)] = classad2.ClassAd(text)
    return ad


def expr_answer(req: dict[str, object]) -> dict[str, object]:
    text = str(req["expr"])
    out: dict[str, object] = {}
    try:
        classad2.ClassAd("[ x = (" + text + ") ]")
        out["accepts"] = True
    except Exception:
        out["accepts"] = False
        return out
    tree = classad2.ExprTree(text)
    holder = classad2.ClassAd()
    holder["x"] = tree
    out["unparse"] = repr(holder)[6:-2]
    try:
        my, target = _ad(req.get("my"), "my"), _ad(req.get("target"), "target")  # type: ignore[arg-type]
    except Exception:
        out["ad_error"] = True
        return out
    try:
        value = repr(tree.simplify(my, target))
    except Exception:
        out["value"] = None
        return out
    out["value"] = value
    return out


def ad_answer(req: dict[str, object]) -> dict[str, object]:
    text = str(req["ad"])
    try:
        if req.get("format") == "old":
            ad = classad2.parseNext(text, classad2.ParserType.Old)
        else:
            ad = classad2.ClassAd(text)
    except Exception:
        return {"ok": False}
    if ad is None:
        return {"ok": False}
    attrs: dict[str, list[object]] = {}
    for name in ad:
        holder = classad2.ClassAd()
        holder["x"] = ad.lookup(name)
        try:
            value: object = repr(classad2.ExprTree("MY." + _quoted(name)).simplify(ad))
        except Exception:
            value = None
        attrs[name] = [repr(holder)[6:-2], value]
    return {"ok": True, "attrs": attrs}


def _quoted(name: str) -> str:
    if name.replace("_", "a").isalnum() and name.isascii() and not name[0].isdigit():
        return name
    return "'" + name.replace("\\", "\\\\").replace("'", "\\'") + "'"


def main() -> None:
    for line in sys.stdin:
        req = json.loads(line)
        answer = ad_answer(req) if "ad" in req else expr_answer(req)
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
