"""``htcd install-condor-names``: the condor_* names run htcd's tools, are never put over (or in
front of) a real HTCondor without --force, and --uninstall removes only htcd's own; the option
conventions every tool shares (prefixes, - and _, ambiguity, --name whole)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from htcd.cli import install_condor_names as icn
from htcd.cli.condor_names import CONDOR_NAMES, WRAPPER_MARK, words_for
from htcd.cli.main import build_parser
from htcd.errors import UserError

REPO = Path(__file__).resolve().parents[2]


def _path_without_condor() -> str:
    return os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                           if d and not any((Path(d) / n).exists() for n in CONDOR_NAMES))


def test_install_runs_htcd_under_condor_names_and_uninstall_removes_them(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", _path_without_condor())
    assert icn.install(tmp_path) == 0
    bindir = tmp_path / "bin"
    assert sorted(p.name for p in bindir.iterdir()) == sorted(CONDOR_NAMES)
    assert all(os.access(bindir / n, os.X_OK) and icn.is_ours(bindir / n) for n in CONDOR_NAMES)
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}")
    # under its condor name the tool names itself so, and answers -version as HTCondor's does
    v = subprocess.run(["condor_q", "-version"], env=env, capture_output=True, text=True, timeout=60)
    assert v.returncode == 0 and v.stdout.startswith("$CondorVersion: ") and "$CondorPlatform: " in v.stdout
    bad = subprocess.run(["condor_rm", "-forcex", "1"], env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1, bad  # HTCondor's tools exit 1 on a bad command line
    assert "condor_rm: error: -forcex: condor_rm's option -forcex is not implemented by htcd" in bad.stderr
    assert "Traceback" not in bad.stderr
    missing = subprocess.run(["condor_token_fetch"], env=env, capture_output=True, text=True, timeout=60)
    assert missing.returncode == 1 and "htcd has no token fetch" in missing.stderr
    # a file that is not htcd's stays on uninstall
    (bindir / "condor_q").write_text("#!/bin/sh\necho real\n")
    assert icn.uninstall(tmp_path) == 0
    assert [p.name for p in bindir.iterdir()] == ["condor_q"]


def test_a_real_htcondor_is_never_shadowed_without_force(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "real" / "bin"
    real.mkdir(parents=True)
    (real / "condor_submit").write_text("#!/bin/sh\necho real condor_submit\n")
    monkeypatch.setenv("PATH", f"{real}{os.pathsep}{_path_without_condor()}")
    prefix = tmp_path / "prefix"
    with pytest.raises(UserError, match=f"not htcd's:\n  {real}/condor_submit\nnothing was installed"):
        icn.install(prefix)
    assert not (prefix / "bin").exists()
    # one in the prefix itself is refused too, and --force replaces it
    monkeypatch.setenv("PATH", _path_without_condor())
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "condor_q").write_text("#!/bin/sh\necho real condor_q\n")
    with pytest.raises(UserError, match="condor_q"):
        icn.install(prefix)
    assert "real condor_q" in (prefix / "bin" / "condor_q").read_text()
    assert icn.install(prefix, force=True) == 0
    assert WRAPPER_MARK in (prefix / "bin" / "condor_q").read_text()


def test_the_command_line_refuses_without_a_traceback(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "condor_status").write_text("#!/bin/sh\n")
    env = dict(os.environ, PATH=f"{real}{os.pathsep}{os.environ['PATH']}")
    r = subprocess.run([sys.executable, "-m", "htcd", "install-condor-names", "--prefix", str(tmp_path / "p")],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and f"{real}/condor_status" in r.stderr and "Traceback" not in r.stderr


def test_words_for_program_names() -> None:
    assert words_for("/usr/local/bin/condor_q") == ("q",)
    assert words_for("condor_token_create") == ("token", "create")
    assert words_for("condor_submit_dag") == ("submit_dag",)
    assert words_for("condor_master") == ("master",)
    assert words_for("htcd") is None


def test_the_role_installs_them_on_request_only() -> None:
    defaults = yaml.safe_load((REPO / "roles/htcd/defaults/main.yml").read_text())
    assert defaults["htcd_condor_names"] is False
    spec = yaml.safe_load((REPO / "roles/htcd/meta/argument_specs.yml").read_text())
    options = spec["argument_specs"]["main"]["options"]
    assert options["htcd_condor_names"]["type"] == "bool" and options["htcd_condor_names"]["default"] is False
    tasks = (REPO / "roles/htcd/tasks/install.yml").read_text()
    assert "install-condor-names" in tasks and "htcd_condor_names | bool" in tasks


def _spell(tool: str, *argv: str) -> list[str]:
    parser, _ = build_parser(tool)
    assert parser.chosen is not None
    return parser.chosen.condor_spelling(list(argv))


def test_htcondor_option_spellings(capsys: pytest.CaptureFixture[str]) -> None:
    assert _spell("q", "-nob", "-const", "x", "-l") == ["-nobatch", "-constraint", "x", "-l"]
    assert _spell("q", "-better_analyze", "1.0") == ["-better-analyze", "1.0"]
    assert _spell("q", "-better_an") == ["-better-analyze"]
    assert _spell("q", "-af", "-1") == ["-af", "-1"]  # a value is never taken for an option
    assert _spell("q", "--nob") == ["--nob"]  # HTCondor: a double-dash option is spelled out
    assert _spell("q", "--nobatch") == ["-nobatch"]
    with pytest.raises(SystemExit):
        _spell("q", "-n")
    assert "ambiguous option -n: it could be -name, -nobatch" in capsys.readouterr().err


def test_words_after_a_rest_positional_are_left_alone() -> None:
    parser, _ = build_parser("fleet")
    ns, extra = parser.parse_known_args(["fleet", "run", "status", "-t", "-af", "Name"])
    assert ns.tool == ["status", "-t", "-af", "Name"] and not extra  # not -t -> fleet's -timeout
