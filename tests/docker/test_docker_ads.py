"""HasDocker and DockerVersion in the slot ads, and what happens when the engine goes away (the
docker universe is no longer offered and HasDocker becomes false; a startd that never saw an engine
leaves HasDocker out, as HTCondor advertises it only for a machine that can run docker jobs);
docker jobs' ads against HTCondor's own submit (the 24.x wheel's ``htcondor.Submit``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pooltools import wait_for

from htcd.classad import parse_old_ads
from htcd.cli.main import main as htcd_main

ROOT = Path(__file__).resolve().parents[2]
ORACLE_PATH = Path(sys.prefix) / "htcondor24"
if not ORACLE_PATH.is_dir():
    ORACLE_PATH = ROOT / ".venv" / "htcondor24"
ORACLE = ROOT / "tests" / "submit" / "oracle_submit.py"


def test_has_docker_follows_the_engine(make_pool, own_engine) -> None:
    engine, stop = own_engine
    pool = make_pool({**engine.knobs(), "DOCKER_PROBE_INTERVAL": "1", "UPDATE_INTERVAL": "1"})
    ads = pool.htcd("status", "-af", "HasDocker", "DockerVersion", "DockerImages").stdout
    assert ads.splitlines()[0].startswith("true Docker version "), ads
    assert "localhost/htcd-busybox:latest" in ads
    assert set(pool.htcd("status", "-af", "StarterAbilityList").stdout.split()) == {"docker,vanilla"}
    stop()
    wait_for(lambda: set(pool.htcd("status", "-af", "HasDocker", "DockerVersion").stdout.splitlines())
             == {"false undefined"}, 60, "HasDocker to turn false once the engine is gone")
    assert set(pool.htcd("status", "-af", "StarterAbilityList").stdout.split()) == {"vanilla"}, \
        "a startd whose engine is gone does not offer the docker universe"
    cluster = pool.submit("universe = docker\ndocker_image = localhost/htcd-busybox:latest\narguments = true\nqueue\n")
    job = f"{cluster}.0"
    req = [line for line in pool.htcd("q", "-l", job).stdout.splitlines() if line.startswith("Requirements = ")]
    assert req and "TARGET.HasDocker" in req[0], "docker jobs require HasDocker"
    # the negotiator finds no slot for it: nothing matches while no slot offers the universe
    analysis = pool.htcd("q", "-better-analyze", job, check=False).stdout
    assert pool.job_attr(job, "JobStatus") == "1"
    assert "no slot offers the docker universe" in analysis, analysis


CASES = {
    "no_executable": "universe = docker\ndocker_image = localhost/img:1\ndocker_network_type = none\n"
                     "docker_pull_policy = missing\narguments = \"-c 'echo hi'\"\nrequest_cpus = 2\n"
                     "request_memory = 64\nqueue\n",
    "image_path": "universe = docker\ndocker_image = busybox\nexecutable = /bin/echo\ntransfer_executable = false\n"
                  "docker_pull_policy = always\nqueue\n",
    "transferred": "universe = docker\ndocker_image = busybox\nexecutable = run.sh\ndocker_network_type = host\n"
                   "docker_pull_policy = never\ntransfer_input_files = in.txt\nqueue\n",
    "named_network": "universe = docker\ndocker_image = busybox\nexecutable = run.sh\n"
                     "docker_network_type = mynet\nqueue\n",
}
IGNORED = {"CondorPlatform", "CondorVersion", "JobSubmitMethod", "Owner", "QDate", "EnteredCurrentStatus"}


@pytest.mark.parametrize("name", list(CASES))
def test_docker_job_ads_match_htcondor(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not (ORACLE_PATH / "htcondor").is_dir():
        pytest.skip(f"HTCondor 24 bindings not installed in {ORACLE_PATH}")
    (tmp_path / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (tmp_path / "in.txt").write_text("x\n")
    sub, cfg, dump = tmp_path / "job.sub", tmp_path / "condor_config", tmp_path / "ads.txt"
    sub.write_text(CASES[name])
    cfg.write_text("FILESYSTEM_DOMAIN = test.domain\nUID_DOMAIN = test.domain\n")
    monkeypatch.setenv("HTCD_CONFIG", str(cfg))
    monkeypatch.setenv("CONDOR_CONFIG", str(cfg))
    assert htcd_main(["submit", "-dump", str(dump), str(sub)]) == 0
    ours = parse_old_ads(dump.read_text())[0]
    request = [{"path": str(sub), "config": str(cfg), "env": {"PATH": "/usr/bin:/bin"}, "cluster": 1,
                "qdate": int(ours.get_value("QDate"))}]
    proc = subprocess.run([sys.executable, str(ORACLE)], input=json.dumps(request), capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ORACLE_PATH)}, timeout=120, check=True)
    theirs = json.loads(proc.stdout)[0]
    assert "error" not in theirs, theirs
    from htcd.classad import parse_expr

    mine = {k: str(parse_expr(ours.expr_text(k))) for k in ours if k not in IGNORED}
    other = {k: str(parse_expr(v)) for k, v in theirs["ads"][0].items() if k not in IGNORED}
    diffs = {k: (mine.get(k), other.get(k)) for k in sorted(set(mine) | set(other)) if mine.get(k) != other.get(k)}
    assert not diffs, f"(htcd, HTCondor) differ: {diffs}"
    for attr in ("DockerImage", "WantDocker"):
        assert attr in mine
