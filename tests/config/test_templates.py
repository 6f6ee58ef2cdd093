"""Every metaknob template htcd ships expands as HTCondor's does, with and without arguments.

The templates are generated from the htcondor wheel (scripts/gen_config_templates.py); this
reads a config of ``use CATEGORY : Name[(args)]`` with htcd and with the wheel (one subprocess
for all of them, tests/config/oracle.py) and compares every knob whose value the use line
changed on either side.  Host-dependent values (host name, addresses) are normalised.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from htcd.config import ConfigError, known_templates, load, table
from tests.config.oracle import PINS, Case, assigned_names, run_all

pytest.importorskip("htcondor2")

pytestmark = pytest.mark.slow  # one HTCondor subprocess reading 160 configs

REPO = Path(__file__).resolve().parents[2]
TEMPLATES = REPO / "htcd" / "config" / "templates"

#: What the configs fix, so that a value does not depend on a default either side computes
#: differently (the param tables are compared elsewhere), plus the knobs arguments name.
HEADER = """\
MY_TRIGGER = (Foo > 1)
MY_OTHER = (Bar < 2)
""" + PINS


#: Arguments that make sense for the template (its manual entry); others get ARG1, ARG2...
ARGS = {
    ("POLICY", "limit_job_runtimes"): "3600",
    ("POLICY", "preempt_if_runtime_exceeds"): "7200",
    ("POLICY", "hold_if_runtime_exceeds"): "7200",
    ("POLICY", "preempt_if"): "MY_TRIGGER",
    ("POLICY", "want_hold_if"): "MY_TRIGGER, 7, too big",
    ("POLICY", "desktop_hours"): "8, 17",
    ("POLICY", "desktop_idle"): "9, 18, 1, 5",
    ("FEATURE", "partitionableslot"): "2, 50%",
    ("FEATURE", "staticslots"): "2, 4, cpus=1, memory=25%",
    ("FEATURE", "gpus"): "-extra",
    ("FEATURE", "monitor"): "SENSOR, WaitForExit, 300, /bin/sensor, SUM:Sensor, PEAK:SensorMemory",
    ("FEATURE", "assignaccountinggroup"): "/etc/groups.map, false",
    ("FEATURE", "assignprojectname"): "/etc/projects.map",
    ("FEATURE", "childcollector"): "3, 9621",
    ("FEATURE", "librarian"): "100, /var/lib/librarian.db",
    ("FEATURE", "scheddusermapfile"): "MYMAP, /etc/my.map",
    ("FEATURE", "setjobattrfromusermap"): "AcctGroup, Owner, MYMAP, /etc/my.map",
    ("FEATURE", "oneshotcronhook"): "STARTD_CRON, HOOK, /bin/hook, -a -b",
    ("FEATURE", "periodiccronhook"): "SCHEDD_CRON, HOOK, 60, /bin/hook, -a",
    ("FEATURE", "continuouscronhook"): "STARTD_CRON, HOOK, /bin/hook, -a",
    ("FEATURE", "startdcronperiodic"): "HOOK, 60, /bin/hook, -a",
    ("FEATURE", "scheddcronperiodic"): "HOOK, 60, /bin/hook",
    ("FEATURE", "startdcrononeshot"): "HOOK, /bin/hook, -a",
    ("FEATURE", "scheddcrononeshot"): "HOOK, /bin/hook",
    ("FEATURE", "startdcroncontinuous"): "HOOK, /bin/hook, -a",
    ("FEATURE", "scheddcroncontinuous"): "HOOK, /bin/hook",
    ("FEATURE", "pelicancache"): "cache.example.org, 8443, osdf.example.org",
    ("FEATURE", "policy_hours_to_start"): "8, 17, 1, 5",
    ("SECURITY", "recommended"): "htcd, admin@example.org",
    ("SECURITY", "recommended_v24_0"): "htcd, admin@example.org, other@example.org",
    ("SECURITY", "recommended_v9_0"): "htcd, admin@example.org, other@example.org",
    ("EXPERIMENTAL", "collectornode"): "2, 9620",
    ("EXPERIMENTAL", "hadsharedport"): "cm1.example.org, cm2.example.org",
    ("EXPERIMENTAL", "hadfixedport"): "cm1.example.org, cm2.example.org, 51450, 41450",
    ("EXPERIMENTAL", "hadreplication"): "cm1.example.org, cm2.example.org, 51450, 41450",
}

#: (category, template, knob) -> why htcd's value differs from HTCondor's.  Every entry must
#: still differ (test_deviations_are_current), so the list cannot go stale.
DEVIATIONS: dict[tuple[str, str, str], str] = {
    ("FEATURE", "defaultcheckpointdestination", "WARNING"):
        "HTCondor's template reader also stores the text of a template's 'warning:' line as a knob "
        "WARNING (at top level it does not); htcd prints the warning and defines nothing",
}
if table()["collector_host"].default is None:
    DEVIATIONS[("FEATURE", "hpc_annex", "SCHEDD.COLLECTOR_HOST")] = (
        "htcd's param table gives COLLECTOR_HOST no default (HTCondor: $(CONDOR_HOST)), so the "
        "template's 'if defined COLLECTOR_HOST' takes its other branch")


def _templates() -> list[tuple[str, str]]:
    out = []
    for path in sorted(TEMPLATES.glob("*/*.conf")):
        out.append((path.parent.name.upper(), path.stem))
    return out


def _args_for(cat: str, name: str) -> str:
    if (cat, name) in ARGS:
        return ARGS[(cat, name)]
    text = (TEMPLATES / cat.lower() / f"{name}.conf").read_text()
    used = [int(n) for n in re.findall(r"\$\((\d+)", text)]
    top = max(used, default=0) or 1
    return ", ".join(f"ARG{i}" for i in range(1, top + 1))


def _cases() -> list[tuple[str, str, str, str]]:
    """(id, category, template, use line)."""
    out = []
    for cat, name in _templates():
        out.append((f"{cat}:{name}", cat, name, f"use {cat} : {name}"))
        out.append((f"{cat}:{name}(args)", cat, name, f"use {cat} : {name}({_args_for(cat, name)})"))
    return out


CASES = _cases()
_CASE_ARGS = {c[0]: c[3].partition("(")[2].rpartition(")")[0] for c in CASES}


def _host_values() -> dict[str, str]:
    """Host-dependent strings -> placeholders, longest first."""
    names = {socket.gethostname(), socket.getfqdn()}
    with contextlib.suppress(OSError):
        names |= {a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None)}
    return {n: "<HOST>" for n in sorted(names, key=len, reverse=True) if n}


def _normal(value: str | None, extra: dict[str, str]) -> str | None:
    if value is None:
        return None
    for k, v in extra.items():
        value = value.replace(k, v)
    return value


def _htcd_values(config: str, keys: list[str] | None) -> dict[str, str | None] | str:
    try:
        cfg = load("TOOL", env={"CONDOR_CONFIG": config, "PATH": os.environ.get("PATH", ""),
                                "HOME": os.environ.get("HOME", "/")})
        names = keys if keys is not None else [e.name for e in cfg.definitions()]
        return {k: cfg.get(k) for k in names}
    except ConfigError:
        return "ERROR"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    tmp = tmp_path_factory.mktemp("templates")
    base = tmp / "base"
    base.write_text(HEADER)
    # three reads of the header alone: knobs whose value differs between them are random
    # draws ($RANDOM_INTEGER in a default), not something a use line changed
    cases = [Case(b, str(base), cwd=str(tmp)) for b in ("base", "base2", "base3")]
    paths = {}
    for i, (cid, _cat, _name, line) in enumerate(CASES):
        path = tmp / f"c{i}"
        path.write_text(HEADER + line + "\n")
        paths[cid] = str(path)
        cases.append(Case(cid, str(path), cwd=str(tmp)))
    wheel = run_all(cases)
    assert isinstance(wheel["base"], dict), "the HTCondor oracle rejected the plain header"
    return {"wheel": wheel, "paths": paths, "base": str(base)}


def _compare(cid: str, results: dict[str, object]) -> tuple[dict, dict]:
    wheel: dict = results["wheel"]  # type: ignore[assignment]
    path = results["paths"][cid]  # type: ignore[index]
    w_base, w = wheel["base"], wheel[cid]
    h_base = _htcd_values(results["base"], None)  # type: ignore[arg-type]
    h = _htcd_values(path, None)
    assert isinstance(h_base, dict)
    if w == "ERROR" or h == "ERROR":
        return {"_": w if w == "ERROR" else "loaded"}, {"_": h if h == "ERROR" else "loaded"}
    hosts = _host_values()
    v6 = w_base.get("IPV6_ADDRESS")
    if v6 and h_base.get("IPV6_ADDRESS") is None:
        # htcd computes no IPV6_ADDRESS (docs/config.md, deviations): SECURITY : Host_Based
        # lists this host's IPv6 address in HTCondor only
        hosts = {**hosts, v6: ""}
    # what the use line set: htcd's new definitions, the wheel's new knobs, and knobs the
    # wheel changed that some template assigns (a branch htcd may not have taken)
    targets = _targets(cid.split("(")[0], _CASE_ARGS[cid])
    keys = {k for k, v in w.items() if w_base.get(k) != v and k.lower() in targets}
    keys |= {k for k, v in h.items() if h_base.get(k) != v}
    unstable = {k for k, v in w_base.items() if wheel["base2"].get(k) != v or wheel["base3"].get(k) != v}
    keys = {k for k in keys if k.upper() not in _PROCESS and k not in unstable}
    h_all = _htcd_values(path, sorted(keys))
    assert isinstance(h_all, dict)
    want = {k.upper(): _normal(w.get(k) if k in w else _lookup_ci(w, k), hosts) for k in keys}
    got = {k.upper(): _normal(h_all[k], hosts) for k in keys}
    for k in _random_knobs(path):  # a random draw: compare the text around the numbers
        for d in (want, got):
            if d.get(k) is not None:
                d[k] = re.sub(r"-?\d+", "N", d[k])
    return want, got


def _random_knobs(path: str) -> set[str]:
    cfg = load("TOOL", env={"CONDOR_CONFIG": path, "HOME": "/"})
    return {e.name.upper() for e in cfg.definitions() if "$RANDOM_" in e.raw}


#: Knobs that describe the reading process itself, not the config.
_PROCESS = {"__P", "PID", "PPID"}


def _lookup_ci(d: dict, key: str) -> str | None:
    low = key.lower()
    for k, v in d.items():
        if k.lower() == low:
            return v
    return None


def _targets(template: str, args: str) -> set[str]:
    """The knob names (lower case) ``CAT:name(args)`` assigns, with those of the templates it
    uses, so that a knob the wheel changed only through a default is not compared."""
    cat, name = template.split(":")
    return assigned_names(f"use {cat} : {name}({args})\n")


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_template_matches_htcondor(case, results) -> None:
    cid, cat, name, _line = case
    want, got = _compare(cid, results)
    skip = {k for (c, n, k) in DEVIATIONS if c == cat and n == name}
    for k in skip:
        want.pop(k.upper(), None)
        got.pop(k.upper(), None)
    assert got == want


def test_deviations_are_current(results) -> None:
    for (cat, name, knob), reason in DEVIATIONS.items():
        assert reason
        want, got = _compare(f"{cat}:{name}", results)
        assert want.get(knob.upper()) != got.get(knob.upper()), f"{cat}:{name} {knob} now agrees: drop it"


def test_every_template_is_shipped() -> None:
    """The files are what the wheel holds now (regenerate with the script when it moves)."""
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "gen_config_templates.py"), "--check"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    known = known_templates()
    assert {"Hold_If_Cpus_Exceeded", "Preempt_If_Disk_Exceeded", "Hold_If_Disk_Exceeded",
            "Preempt_if_Runtime_Exceeds", "Hold_if_Runtime_Exceeds"} <= set(known["POLICY"])
    assert sum(len(v) for v in known.values()) == len(_templates()) == len(CASES) // 2
