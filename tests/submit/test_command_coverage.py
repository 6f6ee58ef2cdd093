"""Every command condor_submit knows is either handled by htcd or refused with a reason.

The list of commands is a fact taken from HTCondor's manual and sources by
scripts/gen_submit_commands.py (htcd/submit/condor_commands.py); the refusals are
htcd/submit/unsupported.py.  A command added to either list without the other fails here.
"""

from __future__ import annotations

import fnmatch
import os
import subprocess
import sys
from pathlib import Path

import pytest

from htcd.submit import SubmitError, parse_submit
from htcd.submit.commands import KNOWN_COMMANDS
from htcd.submit.condor_commands import ATTRIBUTE_ALIASES, MANUAL_COMMANDS, PATTERNS, SUBMIT_KEYS
from htcd.submit.names import CONDOR_NAMES, is_condor_name, spellings
from htcd.submit.unsupported import (
    REFUSED,
    REFUSED_PATTERNS,
    REFUSED_UNIVERSES,
    REFUSED_WHEN_TRUE,
    WARNED_WHEN_TRUE,
    refusal,
)

ROOT = Path(__file__).resolve().parents[2]
MIRROR = "/work/.mirror/htcondor+htcondor/repo"


def handled(name: str) -> bool:
    return any(n in KNOWN_COMMANDS for n in spellings(name)) or (
        name.startswith("request_") and refusal(name) is None)


def refused(name: str) -> bool:
    return any(refusal(n) is not None for n in spellings(name))


def test_the_lists_are_there() -> None:
    assert len(MANUAL_COMMANDS) > 200 and len(SUBMIT_KEYS) > 250 and len(ATTRIBUTE_ALIASES) > 150
    assert {"executable", "deferral_time", "shell", "retry_request_memory"} <= MANUAL_COMMANDS


@pytest.mark.parametrize("name", sorted(CONDOR_NAMES))
def test_each_command_is_handled_or_refused(name: str) -> None:
    assert handled(name) or refused(name), f"{name}: neither handled nor in htcd/submit/unsupported.py"


@pytest.mark.parametrize("name", sorted(REFUSED) + sorted(REFUSED_WHEN_TRUE) + sorted(WARNED_WHEN_TRUE))
def test_a_refused_command_is_one_condor_submit_knows(name: str) -> None:
    assert is_condor_name(name)


def test_refused_commands_are_not_handled() -> None:
    assert not {n for n in KNOWN_COMMANDS if refusal(n) is not None}


@pytest.mark.parametrize("pattern", PATTERNS)
def test_each_pattern_is_handled_or_refused(pattern: str) -> None:
    sample = pattern.replace("*", "x_y")
    assert handled(sample) or any(fnmatch.fnmatchcase(sample, p) for p, _ in REFUSED_PATTERNS), pattern


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_refused_command_is_refused_at_submit_with_its_reason(name: str) -> None:
    with pytest.raises(SubmitError) as err:
        parse_submit(f"executable = /bin/true\n{name} = 1\nqueue\n", "job.sub")
    assert str(err.value).startswith(f"job.sub:2: {name}: htcd cannot honour this command: {REFUSED[name]}")


@pytest.mark.parametrize("name", sorted(REFUSED_WHEN_TRUE))
def test_a_command_refused_when_true_is_refused_then_only(name: str) -> None:
    def build(value: str) -> None:
        parse_submit(f"executable = /bin/true\ntransfer_executable = false\n{name} = {value}\nqueue\n",
                     "job.sub").make_jobs(1, submit_dir="/", owner="u", qdate=1)

    build("false")
    with pytest.raises(SubmitError) as err:
        build("true")
    assert str(err.value).startswith(f"job.sub:3: {name} = true: htcd cannot honour this command: ")
    assert REFUSED_WHEN_TRUE[name] in str(err.value)


@pytest.mark.parametrize("name", sorted(WARNED_WHEN_TRUE))
def test_a_command_warned_when_true_warns_and_the_job_is_built(name: str) -> None:
    """stream_output = True (dask-jobqueue writes it): the job is made, with a warning saying what
    htcd does instead, and the attribute condor_submit writes."""
    desc = parse_submit(f"executable = /bin/true\ntransfer_executable = false\noutput = o\nerror = e\n{name} = True\n"
                        "queue\n", "job.sub")
    cluster, procs = desc.make_jobs(1, submit_dir="/", owner="u", qdate=1)
    assert len(procs) == 1
    said = [w for w in desc.warnings if w.startswith("job.sub:")]
    assert any(f"{name} = True: {WARNED_WHEN_TRUE[name]}" in w for w in said), desc.warnings
    attr = {"stream_output": "StreamOut", "stream_error": "StreamErr"}[name]
    assert {**cluster, **procs[0]}[attr] == "true"


@pytest.mark.parametrize("universe", sorted(REFUSED_UNIVERSES))
def test_a_refused_universe_is_refused_unless_a_plugin_offers_it(universe: str) -> None:
    desc = parse_submit(f"universe = {universe}\nexecutable = /bin/true\ntransfer_executable = false\nqueue\n",
                        "job.sub")
    with pytest.raises(SubmitError) as err:
        desc.make_jobs(1, submit_dir="/", owner="u", qdate=1, plugin_universes={"vanilla"})
    assert str(err.value) == f"job.sub:1: universe = {universe}: htcd cannot run it: {REFUSED_UNIVERSES[universe]}"
    desc.make_jobs(1, submit_dir="/", owner="u", qdate=1, plugin_universes={"vanilla", universe})


def test_a_universe_no_plugin_offers_is_refused() -> None:
    desc = parse_submit("universe = wasm\nexecutable = /bin/true\ntransfer_executable = false\nqueue\n", "job.sub")
    with pytest.raises(SubmitError, match="job.sub:1: unknown universe 'wasm': neither HTCondor nor an installed "
                                          r"plugin offers it \(plugins offer: docker, vanilla\)"):
        desc.make_jobs(1, submit_dir="/", owner="u", qdate=1, plugin_universes={"vanilla", "docker"})
    cluster, _ = desc.make_jobs(1, submit_dir="/", owner="u", qdate=1, plugin_universes={"wasm"})
    assert cluster["PluginUniverse"] == '"wasm"'


@pytest.mark.skipif(not os.path.isdir(MIRROR), reason="HTCondor's repository is not mirrored here")
def test_the_generated_list_is_up_to_date(tmp_path: Path) -> None:
    out = ROOT / "htcd" / "submit" / "condor_commands.py"
    before = out.read_text()
    subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_submit_commands.py")], check=True,
                   capture_output=True, env={**os.environ, "HTCONDOR_REPO": MIRROR})
    assert out.read_text() == before, "run scripts/gen_submit_commands.py and commit the result"
