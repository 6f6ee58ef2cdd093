"""Read an Ansible inventory (YAML or INI, a file or a directory) for ``htcd fleet``.

``htcd fleet`` reaches hosts without the pool's protocol, so it needs the same host list and
connection settings as the playbooks: hosts, groups (with children), ``[a:b]`` ranges, inline
and group/host variables, ``group_vars/`` and ``host_vars/`` beside the inventory.  Variables are
plain values: a Jinja2 template cannot be evaluated here and is refused with its place named.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from htcd.errors import UserError

_RANGE = re.compile(r"\[([0-9a-zA-Z]+):([0-9a-zA-Z]+)(?::([0-9]+))?\]")


@dataclass
class Group:
    name: str
    hosts: list[str] = field(default_factory=list)
    children: list[str] = field(default_factory=list)
    vars: dict[str, Any] = field(default_factory=dict)


@dataclass
class Host:
    """One host and the settings ``htcd fleet`` connects with."""

    name: str
    vars: dict[str, Any]

    @property
    def address(self) -> str:
        return str(self.vars.get("ansible_host") or self.name)

    @property
    def connection(self) -> str:
        return str(self.vars.get("ansible_connection") or "ssh")


class Inventory:
    def __init__(self, source: str) -> None:
        self.source = source
        self.groups: dict[str, Group] = {"all": Group("all"), "ungrouped": Group("ungrouped")}
        self.host_vars: dict[str, dict[str, Any]] = {}
        self.order: list[str] = []  # hosts in the order the inventory names them

    # --- building ------------------------------------------------------------------------------

    def group(self, name: str) -> Group:
        return self.groups.setdefault(name, Group(name))

    def add_host(self, group: str, host: str, hvars: dict[str, Any] | None = None) -> None:
        if host not in self.host_vars:
            self.host_vars[host] = {}
            self.order.append(host)
        self.host_vars[host].update(hvars or {})
        g = self.group(group)
        if host not in g.hosts:
            g.hosts.append(host)

    # --- queries -------------------------------------------------------------------------------

    def members(self, group: str, _seen: set[str] | None = None) -> list[str]:
        """The hosts of a group and its children, in inventory order."""
        if group == "all":
            return list(self.order)
        seen = _seen if _seen is not None else set()
        if group in seen:
            return []
        seen.add(group)
        g = self.groups[group]
        found = set(g.hosts)
        for child in g.children:
            if child in self.groups:
                found.update(self.members(child, seen))
        return [h for h in self.order if h in found]

    def select(self, pattern: str) -> list[Host]:
        """Hosts named by PATTERN: comma-separated group or host names (``all`` for every host)."""
        chosen: list[str] = []
        for part in (p.strip() for p in pattern.split(",")):
            if not part:
                continue
            if part in self.groups:
                names = self.members(part)
            elif part in self.host_vars:
                names = [part]
            else:
                known = ", ".join(sorted(g for g in self.groups if g != "ungrouped"))
                raise UserError(f"no group or host {part!r} in the inventory (groups: {known})",
                                source=self.source)
            chosen += [n for n in names if n not in chosen]
        if not chosen:
            raise UserError(f"the inventory has no hosts in {pattern!r}", source=self.source)
        return [Host(n, self.variables(n)) for n in chosen]

    def _ancestry(self, host: str) -> list[str]:
        """The groups a host belongs to, parents before children (Ansible's precedence)."""
        depth: dict[str, int] = {}

        def walk(name: str, d: int, path: tuple[str, ...]) -> None:
            if name in path:
                return
            depth[name] = max(depth.get(name, 0), d)
            for child in self.groups[name].children:
                if child in self.groups:
                    walk(child, d + 1, (*path, name))

        walk("all", 0, ())
        for name in self.groups:
            if name not in depth:
                walk(name, 1, ())
        mine = [g for g in self.groups if g == "all" or host in self.members(g)]
        return sorted(mine, key=lambda g: (depth.get(g, 1), g))

    def variables(self, host: str) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for g in self._ancestry(host):
            merged.update(self.groups[g].vars)
        merged.update(self.host_vars.get(host, {}))
        for key, value in merged.items():
            if isinstance(value, str) and "{{" in value:
                raise UserError(f"host {host}: {key} is a Jinja2 template ({value!r}); htcd fleet reads "
                                "plain values only: set it literally for this host", source=self.source)
        return merged


def expand(pattern: str) -> list[str]:
    """Ansible's host ranges: ``ep[01:03].rack1`` -> ep01.rack1, ep02.rack1, ep03.rack1."""
    m = _RANGE.search(pattern)
    if not m:
        return [pattern]
    lo, hi, step = m.group(1), m.group(2), int(m.group(3) or 1)
    head, tail = pattern[: m.start()], pattern[m.end():]
    if lo.isdigit() and hi.isdigit():
        width = len(lo) if lo.startswith("0") else 0
        items = [str(i).zfill(width) for i in range(int(lo), int(hi) + 1, step)]
    elif len(lo) == 1 and len(hi) == 1:
        items = [chr(c) for c in range(ord(lo), ord(hi) + 1, step)]
    else:
        raise UserError(f"bad host range in {pattern!r}")
    return [x for item in items for x in expand(head + item + tail)]


# --- YAML ------------------------------------------------------------------------------------------


def _yaml() -> Any:
    try:
        import yaml
    except ImportError as exc:
        raise UserError("reading a YAML inventory needs PyYAML: pip install 'htcd[deploy]'") from exc
    return yaml


def _load_yaml(path: Path) -> Any:
    yaml = _yaml()
    try:
        return yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise UserError(f"not valid YAML: {getattr(exc, 'problem', exc)}", source=str(path),
                        line=mark.line + 1 if mark else None) from exc


def _read_yaml(inv: Inventory, path: Path, data: Any) -> None:
    if not isinstance(data, dict):
        raise UserError("a YAML inventory is a mapping of groups (all: hosts/children/vars)", source=str(path))

    def group(name: str, body: Any) -> None:
        g = inv.group(name)
        if body is None:
            return
        if not isinstance(body, dict):
            raise UserError(f"group {name}: expected hosts/children/vars, found {type(body).__name__}",
                            source=str(path))
        for key in body:
            if key not in ("hosts", "children", "vars"):
                raise UserError(f"group {name}: unknown key {key!r} (hosts, children, vars)", source=str(path))
        for pattern, hvars in (body.get("hosts") or {}).items():
            for host in expand(str(pattern)):
                inv.add_host(name, host, dict(hvars or {}))
        g.vars.update(body.get("vars") or {})
        for child, child_body in (body.get("children") or {}).items():
            if child not in g.children:
                g.children.append(child)
            group(str(child), child_body)

    for name, body in data.items():
        group(str(name), body)


# --- INI -------------------------------------------------------------------------------------------


def _ini_value(text: str) -> Any:
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    return text


def _ini_pairs(words: list[str], path: Path, lineno: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for w in words:
        if "=" not in w:
            raise UserError(f"expected key=value, found {w!r}", source=str(path), line=lineno)
        k, _, v = w.partition("=")
        out[k] = _ini_value(v)
    return out


def _read_ini(inv: Inventory, path: Path) -> None:
    section, kind = "ungrouped", "hosts"
    for lineno, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        m = re.fullmatch(r"\[([^\]:]+)(?::(vars|children))?\]", line)
        if m:
            section, kind = m.group(1), m.group(2) or "hosts"
            inv.group(section)
            continue
        try:
            words = shlex.split(line, comments=True)
        except ValueError as exc:
            raise UserError(f"cannot split the line: {exc}", source=str(path), line=lineno) from exc
        if not words:
            continue
        if kind == "vars":
            k, sep, v = line.partition("=")
            if not sep:
                raise UserError(f"expected key=value in [{section}:vars]", source=str(path), line=lineno)
            inv.group(section).vars[k.strip()] = _ini_value(v.strip().strip("'\""))
        elif kind == "children":
            g = inv.group(section)
            if words[0] not in g.children:
                g.children.append(words[0])
            inv.group(words[0])
        else:
            hvars = _ini_pairs(words[1:], path, lineno)
            for host in expand(words[0]):
                inv.add_host(section, host, hvars)


# --- group_vars / host_vars ------------------------------------------------------------------------


def _vars_files(base: Path, name: str) -> list[Path]:
    files = [base / f"{name}{ext}" for ext in ("", ".yml", ".yaml", ".json") if (base / f"{name}{ext}").is_file()]
    d = base / name
    if d.is_dir():
        files += sorted(p for p in d.iterdir() if p.is_file() and p.suffix in (".yml", ".yaml", ".json", ""))
    return files


def _read_vars_dirs(inv: Inventory, base: Path) -> None:
    for name, g in inv.groups.items():
        for f in _vars_files(base / "group_vars", name):
            data = _load_yaml(f) or {}
            if not isinstance(data, dict):
                raise UserError("group variables must be a mapping", source=str(f))
            g.vars.update(data)
    for host in inv.order:
        for f in _vars_files(base / "host_vars", host):
            data = _load_yaml(f) or {}
            if not isinstance(data, dict):
                raise UserError("host variables must be a mapping", source=str(f))
            inv.host_vars[host].update(data)


def _read_file(inv: Inventory, path: Path) -> None:
    if path.suffix in (".yml", ".yaml", ".json"):
        _read_yaml(inv, path, _load_yaml(path))
        return
    text = path.read_text()
    first = next((ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")), "")
    if first.startswith("[") or "=" in first or not first.endswith(":"):
        _read_ini(inv, path)
    else:
        _read_yaml(inv, path, _load_yaml(path))


def load(source: str) -> Inventory:
    """An inventory file, or a directory of them (with group_vars/ and host_vars/)."""
    path = Path(os.path.expanduser(source))
    inv = Inventory(source)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith(".")
                       and p.suffix not in (".md", ".txt", ".cfg", ".retry", ".pyc"))
        if not files:
            raise UserError("the inventory directory holds no inventory file", source=source)
        for f in files:
            _read_file(inv, f)
        base = path
    elif path.is_file():
        _read_file(inv, path)
        base = path.parent
    else:
        raise UserError("no such inventory file or directory", source=source)
    for g in inv.groups.values():
        for child in g.children:
            inv.group(child)
    for host in inv.order:  # every host is in "all"; those in no named group are "ungrouped"
        named = any(host in g.hosts for n, g in inv.groups.items() if n not in ("all", "ungrouped"))
        if not named and host not in inv.groups["ungrouped"].hosts:
            inv.groups["ungrouped"].hosts.append(host)
    _read_vars_dirs(inv, base)
    return inv
