"""Submit templates: what ``use CATEGORY : Name(args)`` in a submit file expands to.

Two categories, as in condor_submit: ``STRICT`` (built in: ``TRUE``, ``FALSE``, ``HARSH`` set
the variables that make empty ``queue ... matching`` results and empty ``queue ... from``
fields warnings or errors) and ``TEMPLATE`` (the configuration's ``SUBMIT_TEMPLATE_<Name>``
for each name in ``SUBMIT_TEMPLATE_NAMES``).  Arguments fill ``$(0)``, ``$(N)``, ``$(N?)``,
``$(N+)`` and ``$(0#)`` exactly as in the configuration language's ``use``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from htcd.config import apply_template_args

if TYPE_CHECKING:
    from htcd.config import Config

_STRICT_NAMES = ("SubmitWarnEmptyMatches", "SubmitFailEmptyMatches", "SubmitWarnDuplicateMatches",
                 "SubmitFailEmptyFields", "SubmitWarnEmptyFields")


def _strict(*values: bool) -> str:
    return "\n".join(f"{name} = {str(v).lower()}" for name, v in zip(_STRICT_NAMES, values, strict=True))


BUILTIN: dict[str, dict[str, str]] = {
    "STRICT": {
        "FALSE": _strict(False, False, False, False, False),
        "TRUE": _strict(True, True, True, False, True),
        "HARSH": _strict(True, True, True, True, True),
    },
}
_CONFIG_REF = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_.]*)(?::[^()]*)?\)")


class TemplateSet:
    """The templates a submit file may ``use``, by category; names fold case."""

    def __init__(self, configured: Mapping[str, str] | None = None) -> None:
        cats = {**BUILTIN, "TEMPLATE": dict(configured or {})}
        self._by_cat = {cat.lower(): (cat, {n.lower(): (n, text) for n, text in names.items()})
                        for cat, names in cats.items()}

    @classmethod
    def from_config(cls, cfg: Config) -> TemplateSet:
        """``SUBMIT_TEMPLATE_<Name>`` for every name in ``SUBMIT_TEMPLATE_NAMES``, with the macros the
        configuration defines expanded now and every other ``$(...)`` left for the submit file."""
        out: dict[str, str] = {}
        for name in cfg.get_list("SUBMIT_TEMPLATE_NAMES"):
            raw = cfg.raw(f"SUBMIT_TEMPLATE_{name}")
            if raw:
                out[name] = _CONFIG_REF.sub(
                    lambda m: (cfg.get(m.group(1)) or "") if cfg.is_defined(m.group(1)) else m.group(0), raw)
        return cls(out)

    def categories(self) -> list[str]:
        return sorted(spelled for spelled, _ in self._by_cat.values())

    def names(self, category: str) -> list[str]:
        found = self._by_cat.get(category.lower())
        return sorted(n for n, _ in found[1].values()) if found else []

    def expand(self, category: str, name: str, args: str) -> str:
        """The template's text with ``args`` filled in; KeyError with the reason when it is unknown."""
        found = self._by_cat.get(category.lower())
        if found is None:
            raise KeyError(f"unknown category {category}; known: {', '.join(self.categories())}")
        spelled, names = found
        entry = names.get(name.lower())
        if entry is None:
            known = ", ".join(self.names(category)) or "none (SUBMIT_TEMPLATE_NAMES lists none)"
            raise KeyError(f"unknown {spelled} template {name}; known: {known}")
        return apply_template_args(entry[1], args)
