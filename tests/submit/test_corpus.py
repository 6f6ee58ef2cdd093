"""``htcd submit -dump`` against HTCondor 24's submit code on every file of tests/corpus/submit/:
HTCondor's own test-suite submit files and its manual's examples (scripts/harvest_submit_corpus.py,
origins in tests/corpus/submit/SOURCES).

Each file runs in a directory of its own, with stand-ins for the executables it names (created
when a first try says the file is missing), through the CLI as a user would run it, and through
the 24.x bindings in ONE oracle subprocess (tests/submit/oracle_submit.py).  The outcome of a file
is one of:

* ``agree``: both build the same ads (apart from test_differential's IGNORED attributes);
* ``both reject``: neither builds a job;
* ``refused``: htcd refuses a command or universe it cannot honour (htcd/submit/unsupported.py),
  with its reason;
* ``agree (first queue)``: a file with several queue statements, of which the bindings' Submit.jobs()
  builds only the first: htcd's jobs of that statement are the same;
* anything else is a deviation, and must be listed in ``DEVIATIONS`` with its reason.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from htcd.plugins import PluginManager
from htcd.submit import SubmitError, parse_submit

sys.path.insert(0, str(Path(__file__).parent))
from test_differential import IGNORED, ORACLE, ORACLE_PATH, normal

pytestmark = pytest.mark.slow  # ~40 s: 434 files through htcd and HTCondor's code

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "submit"
FILES = sorted(p.name for p in CORPUS.iterdir() if p.name != "SOURCES")
CONFIG = "FILESYSTEM_DOMAIN = example.org\nUID_DOMAIN = example.org\n"
STAND_IN = "#!/bin/sh\necho stand-in\n"
# What a file needs that the corpus does not hold: an executable, an initial directory.
_QUEUE = re.compile(r"^\s*queue\b(?!\s*=)", re.IGNORECASE | re.MULTILINE)
_MISSING = re.compile(r"executable '([^']+)' does not exist|initialdir: no such directory: (.+)$")

# Files whose outcome differs from HTCondor's for a reason; the test fails when one stops differing.
_RANDOM = "$RANDOM_CHOICE() picks at random"
_ENV_DOLLAR = ("an old-syntax environment holding $$() stays in condor_submit's legacy Env attribute; htcd writes "
               "every environment as Environment (docs/submit.md)")
_NO_MATCH = ("a queue ... matching that matches nothing: htcd queues no job; the 24 bindings' Submit.jobs() "
             "makes one with the item empty")
DEVIATIONS: dict[str, str] = {
    "job_core_macros_sched.cmd": _RANDOM,
    "job_core_macros-dollardollar_van.cmd": _ENV_DOLLAR,
    "win_core_macros-dollardollar_van.cmd": _ENV_DOLLAR,
    "job_dagman_submit_glob-A-nodeB.cmd": _NO_MATCH,
    "job_dagman_submit_glob-B-nodeB.cmd": _NO_MATCH,
}


def _htcd(sub: Path, universes: set[str]) -> tuple[list[dict[str, str]], str]:
    """(ads, error message) of the submit file as ``htcd submit`` builds them, creating stand-in
    executables and directories it asks for.  (The library, not ``-dump``: htcd's old-format printing of strings
    with backslashes does not read back, see docs/submit.md.)"""
    config = {"FILESYSTEM_DOMAIN": "example.org", "UID_DOMAIN": "example.org"}
    text = sub.read_text(errors="surrogateescape")
    error = ""
    for _ in range(200):  # one missing directory per try: the quick-start guide's run0..run99
        try:
            desc = parse_submit(text, sub.name, submit_dir=str(sub.parent), path=str(sub))
            cluster, procs = desc.make_jobs(1, submit_dir=str(sub.parent), owner="corpus", qdate=1000,
                                            config_get=config.get, submit_file=sub.name, plugin_universes=universes)
            return [{**cluster, **p} for p in procs], ""
        except SubmitError as err:
            error = str(err)
        missing = _MISSING.search(error)
        if not missing or os.path.exists(missing.group(2) or missing.group(1)):
            break
        if missing.group(1):
            path = Path(missing.group(1))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(STAND_IN)
            path.chmod(0o755)
        else:
            Path(missing.group(2)).mkdir(parents=True)
    return [], error


def _compare(ours: list[dict[str, str]], theirs: list[dict[str, str]]) -> dict[str, tuple[object, object]]:
    if len(ours) != len(theirs):
        return {"procs": (len(ours), len(theirs))}
    diffs: dict[str, tuple[object, object]] = {}
    for proc, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
        mine_n = {k: normal(v) for k, v in mine.items() if k not in IGNORED}
        other_n = {k: normal(v) for k, v in other.items() if k not in IGNORED}
        diffs.update({f"{proc}.{k}": (mine_n.get(k), other_n.get(k)) for k in sorted(set(mine_n) | set(other_n))
                      if mine_n.get(k) != other_n.get(k)})
    return diffs


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, object]]:
    if not (ORACLE_PATH / "htcondor").is_dir():
        pytest.skip(f"HTCondor 24 bindings not installed in {ORACLE_PATH} (run `make .venv/.dev`)")
    base = tmp_path_factory.mktemp("corpus")
    universes = set(PluginManager().load_entry_points().universe_names())
    ours: dict[str, tuple[list[dict[str, str]], str]] = {}
    requests = []
    saved = {k: os.environ.get(k) for k in ("HTCD_CONFIG", "CONDOR_CONFIG")}
    cwd = os.getcwd()
    try:
        for name in FILES:
            d = base / name
            d.mkdir()
            cfg = d / "condor_config"
            cfg.write_text(CONFIG)
            sub = d / name
            sub.write_bytes((CORPUS / name).read_bytes())
            os.environ["HTCD_CONFIG"] = os.environ["CONDOR_CONFIG"] = str(cfg)
            os.chdir(d)  # condor_submit resolves what a file names against its working directory
            ours[name] = _htcd(sub, universes)
            requests.append({"path": str(sub), "config": str(cfg), "env": dict(os.environ), "cluster": 1,
                             "qdate": 1000})
    finally:
        os.chdir(cwd)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    proc = subprocess.run([sys.executable, str(ORACLE)], input=json.dumps(requests), capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ORACLE_PATH)}, timeout=900, check=True)
    out: dict[str, tuple[str, object]] = {}
    for name, answer in zip(FILES, json.loads(proc.stdout), strict=True):
        ads, error = ours[name]
        if "htcd cannot" in error:
            out[name] = ("refused", error)
        elif error and "error" in answer:
            out[name] = ("both reject", (error, answer["error"]))
        elif error:
            out[name] = ("htcd rejects", (error, None))
        elif "error" in answer:
            out[name] = ("HTCondor rejects", answer["error"])
        else:
            theirs = answer["ads"]
            several = len(_QUEUE.findall((CORPUS / name).read_text(errors="replace"))) > 1
            if several and 0 < len(theirs) < len(ads):
                diffs = _compare(ads[:len(theirs)], theirs)
                out[name] = ("differ", diffs) if diffs else ("agree (first queue)", None)
            else:
                diffs = _compare(ads, theirs)
                out[name] = ("differ", diffs) if diffs else ("agree", None)
    report = os.environ.get("HTCD_CORPUS_REPORT")  # outcomes as JSON, for a person reading them all
    if report:
        Path(report).write_text(json.dumps(out, indent=1, default=str))
    return out


def test_the_corpus_is_there() -> None:
    sources = (CORPUS / "SOURCES").read_text().splitlines()[1:]
    assert len(FILES) >= 400 and sorted(line.split("\t")[0] for line in sources) == FILES
    assert any("quick-start-guide" in name for name in FILES)


@pytest.mark.parametrize("name", FILES)
def test_corpus_file(name: str, outcomes: dict[str, tuple[str, object]]) -> None:
    kind, detail = outcomes[name]
    if name in DEVIATIONS:
        # a random pick may agree by chance; any other deviation that agrees has become stale
        assert DEVIATIONS[name] == _RANDOM or kind not in ("agree", "agree (first queue)", "both reject"), \
            f"no longer a deviation ({kind}): drop it from DEVIATIONS"
        return
    assert kind in ("agree", "agree (first queue)", "both reject", "refused"), f"{kind}: {detail}"


@pytest.mark.parametrize("name", [n for n in FILES if n.startswith(("users-manual_quick-start-guide",
                                                                     "man-pages_condor_submit"))])
def test_the_manuals_first_examples_are_accepted(name: str, outcomes: dict[str, tuple[str, object]]) -> None:
    assert outcomes[name][0] in ("agree", "agree (first queue)"), outcomes[name]


def test_most_files_agree(outcomes: dict[str, tuple[str, object]]) -> None:
    counts = Counter(kind for kind, _ in outcomes.values())
    assert counts["agree"] >= len(FILES) // 2, counts
