"""htcd.dagman.condor_sub against condor_submit_dag's own writer (``htcondor2.Submit.from_dag``,
one subprocess for the module), and the writer's own rules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from htcd.dagman import DagError
from htcd.dagman.condor_sub import SubmitDagOptions, condor_sub_text, insert_env_pairs, write_condor_sub
from htcd.jobenv import split_v2

ORACLE = Path(__file__).with_name("oracle_from_dag.py")
DAG = 'JOB A a.sub\nJOB B a.sub\nPARENT A CHILD B\nSET_JOB_ATTR Foo = "bar"\nENV GET HOME\nENV SET X=1;Y=2\n'

# (name, DAG text, extra files, from_dag's options, htcd's options)
CASES: list[tuple[str, str, dict[str, str], dict[str, object], dict[str, object]]] = [
    ("plain", "JOB A a.sub\n", {}, {}, {}),
    ("dag_statements", DAG, {}, {}, {}),
    ("many_flags", DAG, {},
     {"MaxIdle": 3, "MaxJobs": 7, "MaxPre": 2, "MaxPost": 0, "AutoRescue": 0, "DoRecovery": True, "PostRun": False,
      "SuppressNotification": False, "Notification": "Complete", "SubmitMethod": 1, "DebugLevel": 4,
      "Priority": 5, "BatchName": "x y", "OutfileDir": "outs", "AllowVersionMismatch": True,
      "GetFromEnv": "A,B", "AddToEnv": "Q=1", "Force": True, "UpdateSubmit": True},
     {"maxidle": 3, "maxjobs": 7, "maxpre": 2, "maxpost": 0, "autorescue": 0, "dorecovery": True,
      "always_run_post": False, "suppress_notification": False, "notification": "Complete", "submit_method": 1,
      "debug": 4, "priority": 5, "batch_name": "x y", "outfile_dir": "outs", "allow_version_mismatch": True,
      "include_env": ["A,B"], "insert_env": ["Q=1"], "force": True, "update_submit": True}),
    ("config_and_insert_file", "JOB A a.sub\nCONFIG dag.config\n",
     {"dag.config": "DAGMAN_MAX_JOBS_IDLE = 4\n", "extra.sub": "  request_memory = 64\n\n+Project = \"p\"\n"},
     {"AppendFile": "extra.sub", "PostRun": True, "SuppressNotification": True, "Notification": "Error"},
     {"insert_sub_file": "extra.sub", "always_run_post": True, "suppress_notification": True,
      "notification": "Error"}),
    ("rescue_from", "JOB A a.sub\n", {"d.dag.rescue002": "DONE A\n"},
     {"DoRescueFrom": 2, "UseDagDir": True}, {"do_rescue_from": 2, "usedagdir": True}),
    ("rescue_file", "JOB A a.sub\n", {"my.rescue": "DONE A\n"}, {"RescueFile": "my.rescue", "DoRecovery": True},
     {"rescue_file": "my.rescue", "dorecovery": True}),
    ("save_file", "JOB A a.sub\n", {}, {"SaveFile": "save.A", "MaxPre": 1}, {"load_save": "save.A", "maxpre": 1}),
]


def _words(arguments: str) -> list[str]:
    text = arguments.strip()
    assert text.startswith('"') and text.endswith('"'), arguments
    return split_v2(text[1:-1].replace('""', '"'))


def _normal(desc: dict[str, str], mine: bool) -> dict[str, object]:
    """The description with what is expected to differ made comparable: the executable (htcd's
    launcher; condor_dagman), the version text, htcd's getenv additions, word quoting."""
    out: dict[str, object] = {k: v for k, v in desc.items() if k != "executable"}
    words = _words(desc["arguments"])
    if mine:
        assert words[0] == "dagman", "htcd's launcher runs its dagman subcommand"
        words = words[1:]
    for flag in ("-CsdVersion", "-dagman"):
        words[words.index(flag) + 1] = "<" + flag + ">"
    out["arguments"] = words
    out["environment"] = dict(w.split("=", 1) for w in _words(desc["environment"]))
    if mine:
        out["getenv"] = desc["getenv"].replace(",HTCD_CONFIG,_HTCD_*", "", 1)
    return out


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Every case through both writers: from_dag in one subprocess, htcd here."""
    root = tmp_path_factory.mktemp("condor_sub")
    fake = root / "bin"
    fake.mkdir()
    (fake / "condor_dagman").write_text("#!/bin/sh\nexit 0\n")
    os.chmod(fake / "condor_dagman", 0o755)
    requests, mine = [], {}
    for name, dag, extra, theirs_opts, my_opts in CASES:
        for side in ("theirs", "mine"):
            d = root / name / side
            d.mkdir(parents=True)
            (d / "d.dag").write_text(dag)
            (d / "a.sub").write_text("executable = /bin/true\nqueue\n")
            for fname, text in extra.items():
                (d / fname).write_text(text)
        here = root / name / "mine"
        text = condor_sub_text(["d.dag"], SubmitDagOptions(cwd=str(here), **my_opts))  # type: ignore[arg-type]
        mine[name] = text.replace(str(here), str(root / name / "theirs"))  # (only a CONFIG's absolute path)
        requests.append({"dir": str(root / name / "theirs"), "dags": ["d.dag"], "options": theirs_opts,
                         "mine": mine[name]})
    env = {"PATH": f"{fake}:/usr/bin:/bin", "CONDOR_CONFIG": "/dev/null", "_CONDOR_DAGMAN_DISABLE_PORT": "true",
           "HOME": os.environ.get("HOME", "/root")}
    proc = subprocess.run([sys.executable, str(ORACLE)], input=json.dumps(requests), capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    answers = json.loads(proc.stdout)
    return {c[0]: {**a, "text": mine[c[0]]} for c, a in zip(CASES, answers, strict=True)}


@pytest.mark.parametrize("case", [c[0] for c in CASES])
def test_same_description_as_condor_submit_dag(compared: dict[str, dict], case: str) -> None:
    got = compared[case]
    assert "error" not in got, got.get("error")
    theirs, mine = _normal(got["theirs"], mine=False), _normal(got["mine"], mine=True)
    assert list(mine) == list(theirs), "the same commands in the same order"
    assert mine == theirs
    assert got["mine"]["executable"] == os.path.join(os.path.dirname(sys.executable), "htcd")


def test_the_file_reads_as_htcds_submit_language(compared: dict[str, dict], tmp_path: Path) -> None:
    """What htcd's own submit parser makes of the file: a scheduler job that DAGMan can rely on."""
    from htcd.submit import parse_submit

    desc = parse_submit(compared["many_flags"]["text"], "d.dag.condor.sub", submit_dir=str(tmp_path))
    cluster, procs = desc.make_jobs(12, submit_dir=str(tmp_path), owner="u", qdate=1,
                                    env={"HOME": "/h", "HTCD_CONFIG": "/c", "OTHER": "no"})
    ad = {**cluster, **procs[0]}
    assert ad["JobUniverse"] == "7" and ad["RemoveKillSig"] == '"SIGUSR1"'
    assert ad["OtherJobRemoveRequirements"] == '"DAGManJobId =?= 12"'
    assert ad["JobBatchName"] == '"x y"' and ad["JobNotification"] == "2"
    assert "HTCD_CONFIG=/c" in ad["Environment"] and "OTHER" not in ad["Environment"]
    assert "ExitSignal =?= 11" in ad["OnExitRemove"]
    assert desc.warnings == [] or all("notification" in w for w in desc.warnings), desc.warnings


def test_writer_refuses_bad_input_before_writing(tmp_path: Path) -> None:
    (tmp_path / "a.sub").write_text("executable = /bin/true\nqueue\n")
    (tmp_path / "cyc.dag").write_text("JOB A a.sub\nJOB B a.sub\nPARENT A CHILD B\nPARENT B CHILD A\n")
    with pytest.raises(DagError, match=r"cyc\.dag:1: .*A -> B -> A"):
        write_condor_sub("cyc.dag", SubmitDagOptions(cwd=str(tmp_path)))
    (tmp_path / "ok.dag").write_text("JOB A a.sub\n")
    with pytest.raises(DagError, match=r"Unable to read submit append file nope\.sub"):
        write_condor_sub("ok.dag", SubmitDagOptions(cwd=str(tmp_path), insert_sub_file="nope.sub"))
    with pytest.raises(DagError, match=r"Unable to read config file nope\.conf"):
        write_condor_sub("ok.dag", SubmitDagOptions(cwd=str(tmp_path), config="nope.conf"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.sub", "cyc.dag", "ok.dag"], "nothing written"


def test_several_dags_and_engine_defaults(tmp_path: Path) -> None:
    """Several DAG files: the first names the files, each is a -Dag; the options' defaults are
    condor_submit_dag's (what the DAGMan job uses for a SUBDAG EXTERNAL node)."""
    for name in ("one.dag", "two.dag"):
        (tmp_path / name).write_text("JOB A a.sub\n")
    (tmp_path / "a.sub").write_text("executable = /bin/true\nqueue\n")
    path = write_condor_sub(["one.dag", "two.dag"], SubmitDagOptions(cwd=str(tmp_path), lockfile="x.lock"))
    assert path == str(tmp_path / "one.dag.condor.sub")
    text = Path(path).read_text()
    args = _words(next(ln for ln in text.splitlines() if ln.startswith("arguments")).split("=", 1)[1])
    assert args[:12] == ["dagman", "-p", "0", "-f", "-l", ".", "-Lockfile", "x.lock", "-Dag", "one.dag", "-Dag",
                         "two.dag"]
    assert args[args.index("-AutoRescue") + 1] == "1" and "-DoRescueFrom" not in args
    assert "log         = one.dag.dagman.log" in text and text.endswith("queue\n")


def test_insert_env_delimiters() -> None:
    assert insert_env_pairs("A=1;B=2") == [("A", "1"), ("B", "2")]
    assert insert_env_pairs("|A=1;x|B=2") == [("A", "1;x"), ("B", "2")]
    with pytest.raises(DagError, match="expected key=value"):
        insert_env_pairs("A")
