"""``param``: the configuration as a mapping, as ``htcondor2.param`` offers it.

The config is read the way every htcd tool reads it (``HTCD_CONFIG`` or ``CONDOR_CONFIG``, then
``_HTCD_``/``_CONDOR_`` overrides), once, when first needed; :func:`reload_config` reads it again
(a script that changes the environment calls it, as with htcondor2).  Values are expanded; knobs
the param table types as int, bool or float come back as those types, as htcondor2 does."""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping

from htcd.config import Config, ConfigError, load, table

from .errors import HTCondorException

_state: dict[str, Config | str] = {"subsystem": "TOOL"}


def config() -> Config:
    """The config this process reads (loaded on first use)."""
    cfg = _state.get("config")
    if not isinstance(cfg, Config):
        try:
            cfg = load(str(_state["subsystem"]))
        except ConfigError as exc:
            raise HTCondorException(str(exc)) from None
        _state["config"] = cfg
    return cfg


def reload_config() -> None:
    """Read the configuration again (after the environment or the files changed)."""
    _state.pop("config", None)
    config()


def set_subsystem(name: str) -> None:
    """Look knobs up as the daemon ``name`` would (``SCHEDD.X`` prefixes and the like)."""
    _state["subsystem"] = name.upper()
    _state.pop("config", None)


def _typed(name: str, text: str) -> object:
    row = table().get(name.lower())
    kind = row.type if row is not None else "string"
    try:
        if kind == "bool":
            low = text.strip().lower()
            if low in ("true", "t", "yes", "1"):
                return True
            if low in ("false", "f", "no", "0"):
                return False
        elif kind == "int":
            return int(text.strip())
        elif kind == "float":
            return float(text.strip())
    except ValueError:
        pass  # an expression, say: the text, as htcondor2 returns what it cannot convert
    return text


class Param(MutableMapping[str, object]):
    """The knobs of the configuration; a value set here lasts for this process only."""

    def __getitem__(self, name: str) -> object:
        value = config().get(name)
        if value is None or value == "":
            raise KeyError(name)
        return _typed(name, value)

    def __setitem__(self, name: str, value: object) -> None:
        if not isinstance(value, str):
            raise TypeError("param values are strings")
        config().define(name, value, "<htcd.api.param>", 0)
        config()._cache = {}

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        config().define(name, "", "<htcd.api.param>", 0)
        config()._cache = {}

    def __iter__(self) -> Iterator[str]:
        cfg = config()
        return iter([n for n in cfg.names() if cfg.get(n)])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and bool(config().get(name))

    def __repr__(self) -> str:
        return f"<htcd.api.param: {len(self)} knobs>"


param = Param()
