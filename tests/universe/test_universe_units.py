"""The universe parts of submit, the startd's choice of plugin and -better-analyze, without a pool."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcd.classad import ClassAd, parse_expr
from htcd.classad.analyze import analyze, universe_asked
from htcd.cli.analyze import report
from htcd.startd.daemon import Startd
from htcd.submit import SubmitError, parse_submit


def job(text: str, tmp_path: Path) -> dict[str, str]:
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    cluster_ad, procs = parse_submit(text + "executable = run.sh\nqueue\n", "job.sub").make_jobs(
        3, submit_dir=str(tmp_path), owner="bob", qdate=1000, env={},
        config_get=lambda k: {"ARCH": "X86_64", "OPSYS": "LINUX"}.get(k))
    return {**cluster_ad, **procs[0]}


def test_submit_names_a_plugin_universe_and_requires_it(tmp_path: Path) -> None:
    ad = job("universe = Tagged\n", tmp_path)
    assert ad["JobUniverse"] == "5" and ad["PluginUniverse"] == '"tagged"'
    assert 'stringListIMember("tagged",TARGET.StarterAbilityList)' in ad["Requirements"].replace(" ", "")
    own = job("universe = tagged\nrequirements = stringListMember(\"tagged\", StarterAbilityList)\n", tmp_path)
    assert own["Requirements"].count("StarterAbilityList") == 1, "the user's own test replaces ours"
    java, _ = parse_submit("universe = java\nexecutable = run.sh\nqueue\n", "job.sub").make_jobs(
        3, submit_dir=str(tmp_path), owner="bob", qdate=1000, env={}, plugin_universes={"java"})
    assert "TARGET.HasJava" in java["Requirements"], "java runs where a plugin offers it"
    with pytest.raises(SubmitError, match="htcd runs no java universe"):
        job("universe = java\n", tmp_path)
    vanilla = job("", tmp_path)
    assert "PluginUniverse" not in vanilla and "StarterAbilityList" not in vanilla["Requirements"]
    for bad in ("standard", "globus", "two words", "x-y"):
        with pytest.raises(SubmitError, match="unknown universe"):
            job(f"universe = {bad}\n", tmp_path)


def test_startd_picks_the_plugin_by_the_job_ad() -> None:
    def ad(**attrs: object) -> ClassAd:
        a = ClassAd()
        for k, v in attrs.items():
            a[k] = v
        return a

    assert Startd._universe_name(ad(JobUniverse=5)) == "vanilla"
    assert Startd._universe_name(ad(JobUniverse=5, PluginUniverse="Tagged")) == "tagged"
    assert Startd._universe_name(ad(JobUniverse=5, WantDocker=True)) == "docker"
    assert Startd._universe_name(ad(JobUniverse=5, WantContainer=True)) == "container"
    assert Startd._universe_name(ad(JobUniverse=10)) == "java"
    assert Startd._universe_name(ad(JobUniverse=12)) == "local"


def _slots(n: int, abilities: str) -> list[ClassAd]:
    out = []
    for i in range(n):
        s = ClassAd()
        s["Name"], s["Arch"], s["Memory"], s["StarterAbilityList"] = f"slot{i}", "X86_64", 1024, abilities
        s["Requirements"] = True
        out.append(s)
    return out


def test_analysis_names_the_universe_no_slot_offers() -> None:
    docker = ClassAd()
    docker.set_expr("Requirements", '(TARGET.Arch == "X86_64") && TARGET.HasDocker && (TARGET.Memory >= 10)')
    docker["JobStatus"], docker["ClusterId"], docker["ProcId"], docker["JobUniverse"] = 1, 4, 0, 5
    a = analyze(docker, _slots(3, "vanilla"))
    assert [c.matched for c in a.conditions] == [3, 0, 3]
    assert a.verdict.startswith("no slot offers the docker universe") and "the slots offer: vanilla" in a.verdict
    text = report(docker, a)
    assert "Universe: the job needs the docker universe (step [1], TARGET.HasDocker)" in text

    plugin = ClassAd()
    plugin.set_expr("Requirements", 'stringListIMember("tagged", TARGET.StarterAbilityList)')
    plugin["JobStatus"] = 1
    assert analyze(plugin, _slots(2, "vanilla")).verdict.startswith("no slot offers the tagged universe")
    assert analyze(plugin, _slots(2, "tagged,vanilla")).summary.available == 2
    assert universe_asked(None, parse_expr("TARGET.Memory > 3")) is None


def test_analysis_of_a_local_universe_job() -> None:
    local = ClassAd()
    local.set_expr("Requirements", '(TARGET.Arch == "X86_64")')
    local["JobStatus"], local["ClusterId"], local["ProcId"], local["JobUniverse"] = 1, 5, 0, 12
    a = analyze(local, _slots(1, "vanilla"))
    assert "START_LOCAL_UNIVERSE" in a.verdict and "access point" in a.verdict
    assert "Universe: local." in report(local, a)
