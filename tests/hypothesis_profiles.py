"""Hypothesis profiles, chosen by HYPOTHESIS_PROFILE (``ci`` when it is unset, so a plain
``pytest`` is as thorough as ``make test``):

- ``ci`` runs the example counts the tests ask for, derandomized: the same examples every run,
  so a CI failure is a change in the code, never a new random draw;
- ``dev`` (``make test-fast``) a tenth of them, drawn at random;
- ``fuzz`` ten times as many, drawn at random: exploration, to run by hand
  (``HYPOTHESIS_PROFILE=fuzz pytest tests/classad/test_hypothesis.py``).
"""

from __future__ import annotations

import os

from hypothesis import settings

CI_EXAMPLES = 100  # hypothesis's own default: a test without max_examples runs as it always did


def load() -> str:
    settings.register_profile("ci", max_examples=CI_EXAMPLES, derandomize=True, database=None)
    settings.register_profile("dev", max_examples=CI_EXAMPLES // 10, deadline=None)
    settings.register_profile("fuzz", max_examples=CI_EXAMPLES * 10, deadline=None)
    name = os.environ.get("HYPOTHESIS_PROFILE") or "ci"
    settings.load_profile(name)
    return name


def scaled(examples: int) -> int:
    """``examples`` (a test's count under ``ci``) scaled by the loaded profile: a test that sets
    max_examples itself would otherwise override every profile."""
    return max(1, examples * settings.default.max_examples // CI_EXAMPLES)
