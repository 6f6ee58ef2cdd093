"""Output shared by the tools: ``-l`` (long), ``-af`` (autoformat), ``-json``, HTCondor's time formats."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable

from htcd.classad import ClassAd, unparse


def long_form(ads: Iterable[ClassAd]) -> str:
    return "".join(ad.to_old() + "\n\n" for ad in ads)


def json_form(ads: Iterable[ClassAd]) -> str:
    return json.dumps([ad.to_json() for ad in ads], indent=2)


def value_text(ad: ClassAd, attr: str) -> str:
    """An attribute's value as ``-af`` prints it: strings bare, undefined as 'undefined'."""
    v = ad.eval_expr(attr)
    if isinstance(v, str):
        return v
    return unparse(v)


def autoformat(ads: Iterable[ClassAd], attrs: list[str]) -> str:
    return "".join(" ".join(value_text(ad, a) for a in attrs) + "\n" for ad in ads)


def duration(seconds: float) -> str:
    """HTCondor's ``D+HH:MM:SS``."""
    s = max(0, int(seconds))
    return f"{s // 86400}+{s % 86400 // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def short_date(ts: float) -> str:
    return time.strftime("%m/%d %H:%M", time.localtime(ts))
