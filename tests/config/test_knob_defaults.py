"""The param table against HTCondor's own (the ``htcondor`` wheel, test-only): every knob HTCondor
25 defines is in the table with HTCondor's default text, and with an empty config htcd and
HTCondor expand every knob alike, but for the differences listed here with their reasons.

One subprocess asks the wheel for everything (scripts/gen_param_table.py reads the raw table out
of the wheel's library); htcd's side runs in this process.
"""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from htcd.config import load, table
from htcd.config._table import COMPUTED, lookup, subsystem_rows
from htcd.config.knobscan import read_names

ROOT = Path(__file__).resolve().parents[2]
GEN = ROOT / "scripts" / "gen_param_table.py"
_gen: dict[str, Any] = runpy.run_path(str(GEN))  # the script's lists of deviations, no wheel import
KEEP: dict[str, str] = _gen["KEEP_HTCD_DEFAULT"]
READ_AS: dict[str, str] = _gen["READ_AS"]

#: Knobs whose expanded value differs with an empty config, and why.  Those whose default htcd
#: keeps (KEEP_HTCD_DEFAULT of the generator) are added below.
DIFFERENT: dict[str, str] = {
    "PROMETHEUS_HTTP_PORT": "$(COLLECTOR_PORT), which htcd leaves undefined (see COLLECTOR_PORT)",
    "SHARED_PORT_PORT": "$(COLLECTOR_PORT), which htcd leaves undefined (see COLLECTOR_PORT)",
    "ANNEX_TOKEN_DOMAIN": "$(TRUST_DOMAIN), whose default htcd keeps (see TRUST_DOMAIN)",
    "ENABLE_CLASSAD_CACHING": "the Python bindings set it false for themselves; HTCondor's table says true",
    "CondorIsAdmin": "HTCondor computes whether the process can switch user ids (the bindings never can); htcd "
                     "does not define it",
    "ADD_WINDOWS_FIREWALL_EXCEPTION": "$(CondorIsAdmin), which htcd does not define (a Windows knob)",
    "LOCALNAME": "HTCondor computes it (the local name, else the subsystem); htcd does not define it",
}
DIFFERENT.update({k: f"htcd keeps its default: {why}" for k, why in KEEP.items()})
#: Knobs whose value is the machine's: both sides compute them, each in its own process.
PER_PROCESS = {"PID", "PPID"}

_ORACLE = """
import json, os, runpy, sys
os.environ["CONDOR_CONFIG"] = "/dev/null"
facts = runpy.run_path(sys.argv[1])["wheel_facts"]()
import htcondor2
htcondor2.set_subsystem("TOOL")
names = sorted({k[0] for k in facts["knobs"]} | set(facts["defined"]) | set(json.loads(sys.argv[2])))
expanded = {}
for name in names:
    htcondor2.param["__P"] = "$(%s)" % name
    try:
        expanded[name] = htcondor2.param["__P"]
    except KeyError:
        expanded[name] = ""
facts["expanded"] = expanded
json.dump(facts, sys.stdout)
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    pytest.importorskip("htcondor2")
    home = tmp_path_factory.mktemp("home")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("_CONDOR_", "_HTCD_"))}
    env.update(TZ="UTC", HOME=str(home))
    extra = json.dumps([n for n, _ in COMPUTED.values()])
    proc = subprocess.run([sys.executable, "-c", _ORACLE, str(GEN), extra], capture_output=True, text=True,
                          env=env, timeout=120, cwd=home)
    assert proc.returncode == 0, proc.stderr[-2000:]
    facts: dict[str, Any] = json.loads(proc.stdout)
    return facts


def test_the_table_holds_every_htcondor_knob_with_its_default(wheel: dict[str, Any]) -> None:
    rows = table()
    computed = {n.lower() for n, _ in COMPUTED.values()} | {"subsystem"}
    missing, wrong = [], []
    for name, raw, *_ in wheel["knobs"]:
        key = name.lower()
        if key in computed:
            continue
        p = rows.get(key)
        if p is None:
            missing.append(name)
            continue
        if name.upper() in KEEP:
            if p.default == raw:
                wrong.append(f"{name}: listed in KEEP_HTCD_DEFAULT but the same as HTCondor's")
            continue
        if raw is None:
            want = READ_AS.get(name.upper(), p.fallback)
            if p.default is not None or p.fallback != want:
                wrong.append(f"{name}: HTCondor has no default, the table says {p.default!r} / -({p.fallback})")
        elif p.default != raw:
            wrong.append(f"{name}: table {p.default!r}, HTCondor {raw!r}")
    assert not missing, f"knobs of HTCondor's table missing from param_table.tsv: {missing}"
    assert not wrong, "run scripts/gen_param_table.py; " + "; ".join(wrong)


def test_the_generator_leaves_the_table_as_it_is(wheel: dict[str, Any]) -> None:
    """The table is what scripts/gen_param_table.py makes of the wheel and htcd's rows."""
    current = (ROOT / "htcd" / "config" / "param_table.tsv").read_text(encoding="utf-8")
    assert _gen["generate"](wheel, current) == current, "run scripts/gen_param_table.py"


def test_subsystem_defaults_are_htcondors(wheel: dict[str, Any]) -> None:
    mine = {p.name: p.default for p in subsystem_rows()}
    assert mine == wheel["subsys"]
    assert lookup("isschedd", "SCHEDD").default == "true"  # type: ignore[union-attr]
    assert lookup("isschedd", "STARTD").default == "false"  # type: ignore[union-attr]


def test_htcd_only_rows_are_not_htcondors(wheel: dict[str, Any]) -> None:
    theirs = {k[0].lower() for k in wheel["knobs"]}
    for key, p in table().items():
        assert (p.use == "htcd-only") == (key not in theirs and "<" not in key), p.name


def test_every_knob_htcd_reads_is_marked_used() -> None:
    defaults = {p.name.upper(): p.default for p in table().values()}
    read = read_names(defaults, defaults)
    wrongly_unused = sorted(p.name for p in table().values() if p.use == "unused" and p.name.upper() in read)
    assert not wrongly_unused, f"read by htcd's code but marked unused (run scripts/gen_param_table.py): " \
                               f"{wrongly_unused}"
    assert {"COLLECTOR_HOST", "MAX_JOBS_RUNNING", "START"} <= read
    assert table()["runbenchmarks"].use == "unused"


def test_expanded_values_agree_with_htcondor(wheel: dict[str, Any], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """With an empty config (HTCondor's config-less host), ``htcd config_val K`` and HTCondor's
    param agree for every knob HTCondor has, host-dependent ones included, but the listed ones."""
    cfg = load("TOOL", env={"HTCD_CONFIG": os.devnull, "HOME": str(tmp_path)})
    agree, differ = [], {}
    for name, theirs in wheel["expanded"].items():
        mine = cfg.get(name) or ""
        if mine == theirs or (name in PER_PROCESS and mine.isdigit() and theirs.isdigit()):
            agree.append(name)
        else:
            differ[name] = (mine, theirs)
    unexplained = {k: v for k, v in differ.items() if k not in DIFFERENT}
    assert not unexplained, f"htcd and HTCondor expand these differently (htcd, HTCondor): {unexplained}"
    stale = sorted(set(DIFFERENT) - set(differ))
    assert not stale, f"listed as different but now agreeing (drop them from DIFFERENT / KEEP): {stale}"
    with capsys.disabled():
        print(f"\nknobs: table {len(table()) + len(subsystem_rows())}, wheel {len(wheel['knobs'])} in its "
              f"param table, {len(wheel['defined'])} defined with an empty config; compared {len(wheel['expanded'])}: "
              f"{len(agree)} agree, {len(differ)} differ (listed in DIFFERENT)")
