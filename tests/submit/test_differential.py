"""``htcd submit -dump`` against HTCondor 24's own submit code (``htcondor.Submit.jobs``).

The cases include ``include`` (files and command output), ``if``/``elif``/``else``, ``use
template`` with ``SUBMIT_TEMPLATE_*`` and ``JOB_DEFAULT_*`` configuration: the bindings' Submit
reads all of these as condor_submit does (relative include names against the working
directory, which the oracle sets to the submit file's directory, as htcd's submit directory).

The oracle runs in a subprocess with the 24.x wheel from ``.venv/htcondor24`` on PYTHONPATH
(the 25.x wheel in the venv no longer builds job ads without a schedd).  Every attribute of
every proc must be equal, apart from the deliberate differences in ``IGNORED`` (see
docs/submit.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from htcd.classad import parse_expr, parse_old_ads
from htcd.cli.main import main as htcd_main

sys.path.insert(0, str(Path(__file__).parent))
from diff_cases import BASE_CONFIG, CASES, CONFIG, FILES

ROOT = Path(__file__).resolve().parents[2]
ORACLE_PATH = ROOT / ".venv" / "htcondor24"
ORACLE = Path(__file__).parent / "oracle_submit.py"

# Attributes whose difference is deliberate; docs/submit.md gives the reasons.
IGNORED = {
    "CondorPlatform", "CondorVersion",  # htcd does not stamp its build into every job
    "JobSubmitMethod",  # 0 (condor_submit) rather than the bindings' 2
    "Owner",  # the bindings leave it undefined without a schedd; htcd's schedd sets it anyway
}
# Per case: condor_submit hands max_materialize to the schedd's job factory instead of the
# ads; htcd's schedd reads the limit from the cluster ad.
CASE_IGNORED = {"max_materialize": {"JobMaterializeLimit"},
                # `env = A=1` (the Env attribute's own name): condor_submit writes the legacy Env/EnvDelim,
                # htcd the Environment it writes for every old-syntax environment (docs/submit.md)
                "alias_env_args": {"Env", "EnvDelim", "Environment"},
                # transfer_checkpoint_files: condor_submit adds versioncmp(split(TARGET.CondorVersion)[1],
                # "8.9.7") >= 0 for old execute points; htcd's own versions (0.x) would never pass it
                # (docs/checkpoint.md); the rest of Requirements is checked by the other checkpoint cases
                "checkpoint_files": {"Requirements"}}


def _support_files(d: Path) -> None:
    (d / "run.sh").write_text("#!/bin/sh\necho hi\n" * 80)
    (d / "run.sh").chmod(0o755)
    (d / "in.txt").write_text("input\n")
    (d / "data").mkdir()
    for name in ("a.dat", "b.dat", "c.txt"):
        (d / "data" / name).write_text(name)
    (d / "d1").mkdir()
    (d / "d2").mkdir()
    (d / "items.txt").write_text("x 1\ny 2\n# skipped\nz 3\n")
    (d / "gen.sh").write_text("#!/bin/sh\necho 'r1 first'\necho 'r2 second'\n")
    (d / "gen.sh").chmod(0o755)


def case_files(d: Path, name: str) -> Path:
    """Fill ``d`` with what case ``name`` needs; return its configuration file."""
    _support_files(d)
    for rel, content in FILES.get(name, {}).items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_text(content)
        if rel.endswith(".sh"):
            (d / rel).chmod(0o755)
    cfg = d / "condor_config"
    cfg.write_text(BASE_CONFIG + CONFIG.get(name, ""))
    return cfg


def normal(text: str) -> str:
    """One spelling per expression, so formatting differences do not count."""
    return str(parse_expr(text))


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[object, object]]:
    if not (ORACLE_PATH / "htcondor").is_dir():
        pytest.skip(f"HTCondor 24 bindings not installed in {ORACLE_PATH} (run `make .venv/.dev`)")
    base = tmp_path_factory.mktemp("diff")
    # The bindings read SUBMIT_TEMPLATE_* once per process: one oracle run per template configuration.
    requests: dict[str, list[dict[str, object]]] = {}
    ours = {}
    saved = {k: os.environ.get(k) for k in ("HTCD_CONFIG", "CONDOR_CONFIG")}
    try:
        for name, text in CASES.items():
            d = base / name
            d.mkdir()
            cfg = case_files(d, name)
            sub = d / "job.sub"
            sub.write_text(text)
            os.environ["HTCD_CONFIG"] = os.environ["CONDOR_CONFIG"] = str(cfg)
            dump = d / "ads.txt"
            rc = htcd_main(["submit", "-dump", str(dump), str(sub)])
            ads = parse_old_ads(dump.read_text()) if rc == 0 else []
            qdate = int(ads[0].get_value("QDate")) if ads else 1000
            ours[name] = ads
            group = CONFIG.get(name, "") if "SUBMIT_TEMPLATE_NAMES" in CONFIG.get(name, "") else ""
            requests.setdefault(group, []).append({"name": name, "path": str(sub), "config": str(cfg),
                                                   "env": dict(os.environ), "cluster": 1, "qdate": qdate})
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    env = {**os.environ, "PYTHONPATH": str(ORACLE_PATH)}
    theirs: dict[str, object] = {}
    for group in requests.values():
        proc = subprocess.run([sys.executable, str(ORACLE)], input=json.dumps(group), env=env,
                              capture_output=True, text=True, timeout=300, check=True)
        theirs.update((req["name"], answer) for req, answer in zip(group, json.loads(proc.stdout), strict=True))
    return {name: (ours[name], theirs[name]) for name in CASES}


def test_enough_cases() -> None:
    assert len(CASES) >= 60


@pytest.mark.parametrize("name", list(CASES))
def test_same_job_ads(name: str, results: dict[str, tuple[object, object]]) -> None:
    ours, theirs = results[name]
    ignored = IGNORED | CASE_IGNORED.get(name, set())
    assert "error" not in theirs, f"HTCondor rejects the case: {theirs['error']}"  # type: ignore[operator]
    their_ads = theirs["ads"]  # type: ignore[index]
    assert len(ours) == len(their_ads), "number of procs"  # type: ignore[arg-type]
    for proc, (mine, other) in enumerate(zip(ours, their_ads, strict=True)):  # type: ignore[call-overload]
        mine_n = {k: normal(mine.expr_text(k)) for k in mine if k not in ignored}
        other_n = {k: normal(v) for k, v in other.items() if k not in ignored}
        diffs = {k: (mine_n.get(k), other_n.get(k)) for k in sorted(set(mine_n) | set(other_n))
                 if mine_n.get(k) != other_n.get(k)}
        assert not diffs, f"proc {proc}: (htcd, HTCondor) differ: {diffs}"
