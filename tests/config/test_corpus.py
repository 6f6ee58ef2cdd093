"""HTCondor's own configuration texts (tests/corpus/config/, harvested by
scripts/harvest_config_corpus.py) read by htcd and by the htcondor wheel.

Each corpus file is included from a small top file that first pins the install- and
host-dependent directories and a few defaults (tests/config/oracle.PINS; the file may set them
again) and lets local config files be missing (the examples name some).  The wheel
reads all of them in one subprocess (tests/config/oracle.py; a file that makes it exit is
read alone).  Compared: every knob the file assigns and every knob the templates it uses
assign, expanded, with host names, addresses and the reader's PID normalised.  A file both
reject agrees; a file only one rejects is a difference.
"""

from __future__ import annotations

import os
import re
import socket
from contextlib import redirect_stderr, suppress
from io import StringIO
from pathlib import Path

import pytest

from htcd.config import Config, ConfigError, load
from tests.config.oracle import PINS, Case, _env, assigned_names, run_all

pytest.importorskip("htcondor2")

pytestmark = pytest.mark.slow  # the wheel reads 400 configs

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "config"
FILES = sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.glob("*/*"))

#: Knobs that describe the reading process or draw random numbers, never compared.
UNSTABLE = {"pid", "ppid", "__p"}

#: top file -> the knobs whose definition (the file's or a template's) draws a random number
_RANDOM: dict[str, set[str]] = {}
_PINNED = {line.split("=")[0].strip().lower() for line in PINS.splitlines()} | {"require_local_config_file"}

#: file -> why htcd and HTCondor disagree on it: "*" for the whole file (one rejects it),
#: or a knob name.  Every entry must still disagree (test_deviations_are_current).
DEVIATIONS: dict[tuple[str, str], str] = {
    ("manual/admin-manual__introduction-to-configuration-220.conf", "*"):
        "A = $(B), B = $(A): htcd stops with 'macro recursion: A -> B -> A'; HTCondor loops forever "
        "on the lookup (the wheel is ended after its time limit)",
    ("manual/admin-manual__introduction-to-configuration-428.conf", "*"):
        "a '# $(C)' line inside a '\\' continuation: htcd skips the comment line and goes on with the "
        "value; HTCondor ends the value there, leaks the comment's last character and then rejects "
        "the next line",
    ("manual/admin-manual__introduction-to-configuration-928.conf", "FULL_HOSTNAME"):
        "htcd lets a file override FULL_HOSTNAME (and what is built on it); HTCondor ignores the file",
    ("manual/admin-manual__introduction-to-configuration-928.conf", "LCFullHostname"):
        "built on FULL_HOSTNAME, see there",
}
if Config("TOOL").get("LOCALNAME") is None:
    for _knob in (".ALLOW_ADVERTISE_MASTER", ".ALLOW_ADVERTISE_STARTD"):
        DEVIATIONS[("manual/faq__admins__collector-tree-20.conf", _knob)] = (
            "HTCondor computes LOCALNAME (here TOOL), so $(LOCALNAME).ALLOW_... names "
            "TOOL.ALLOW_...; htcd's param table gives LOCALNAME no value and the name begins with '.'")


def _host_strings() -> dict[str, str]:
    names = {socket.gethostname(), socket.getfqdn()}
    with suppress(OSError):
        names |= {a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None)}
    return {n: "<HOST>" for n in sorted(names, key=len, reverse=True) if n}


def _top(tmp: Path, rel: str) -> Path:
    top = tmp / (rel.replace("/", "__") + ".top")
    # the example configs name local files this machine does not have
    top.write_text(PINS + f"REQUIRE_LOCAL_CONFIG_FILE = false\ninclude : {CORPUS / rel}\n")
    return top


def _keys(rel: str) -> set[str]:
    text = (CORPUS / rel).read_text(errors="replace")
    return {k for k in assigned_names(text) if k not in UNSTABLE}


def _htcd(top: Path, keys: set[str]) -> tuple[dict[str, str | None] | str, set[str]]:
    """htcd's values, or "ERROR"; with the names the file defined (templates included)."""
    try:
        with redirect_stderr(StringIO()):  # warnings of illustrative snippets
            cfg = load("TOOL", env={**_env(), "CONDOR_CONFIG": str(top)})
            defined = {e.name.lower() for e in cfg.definitions() if e.source not in ("<param table>",)}
            names = keys | (defined - UNSTABLE - _PINNED)
            _RANDOM[str(top)] = {e.name.lower() for e in cfg.definitions() if "$RANDOM_" in e.raw}
            return {k: cfg.get(k) for k in names}, names
    except ConfigError:
        return "ERROR", keys


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict | str, dict | str]]:
    tmp = tmp_path_factory.mktemp("corpus")
    tops, keys, htcd_side = {}, {}, {}
    for rel in FILES:
        tops[rel] = _top(tmp, rel)
        got, names = _htcd_env(tops[rel], _keys(rel))
        keys[rel] = sorted(names)
        htcd_side[rel] = got
    cases = [Case(rel, str(tops[rel]), keys=keys[rel], cwd=str(tmp)) for rel in FILES]
    wheel = run_all(cases)
    hosts = _host_strings()
    v6 = run_all([Case("v6", str(tops[FILES[0]]), keys=["IPV6_ADDRESS"], cwd=str(tmp))])["v6"]
    if isinstance(v6, dict) and v6.get("IPV6_ADDRESS"):
        # htcd computes no IPV6_ADDRESS (docs/config.md): HTCondor's value is the host's
        hosts = {**hosts, v6["IPV6_ADDRESS"]: ""}
    out = {}
    for rel in FILES:
        random = _RANDOM.get(str(tops[rel]), set())
        out[rel] = (_normal(htcd_side[rel], hosts, random), _normal(wheel[rel], hosts, random))
    return out


def _htcd_env(top: Path, keys: set[str]) -> tuple[dict[str, str | None] | str, set[str]]:
    cwd = os.getcwd()
    os.chdir(top.parent)  # as the wheel's reader: relative includes from the same folder
    try:
        return _htcd(top, keys)
    finally:
        os.chdir(cwd)


def _normal(values: dict | str, hosts: dict[str, str], random: set[str]) -> dict | str:
    if not isinstance(values, dict):
        return values
    out = {}
    for k, v in values.items():
        if isinstance(v, str):
            for h, rep in hosts.items():
                v = v.replace(h, rep)
            if k.lower() in random:  # a random draw: compare the text around the numbers
                v = re.sub(r"-?\d+", "N", v)
            if v.lower() in ("true", "false"):
                v = v.lower()  # the wheel gives HTCondor's spelling of a boolean knob it knows
        out[k.upper()] = v
    return out


def test_corpus_is_there() -> None:
    assert len(FILES) >= 400
    sources = (CORPUS / "SOURCES").read_text().splitlines()
    listed = {line.split("\t")[0] for line in sources if not line.startswith("#")}
    assert listed == set(FILES)


@pytest.mark.parametrize("rel", FILES)
def test_corpus_file_matches_htcondor(rel: str, corpus) -> None:
    got, want = corpus[rel]
    if (rel, "*") in DEVIATIONS:
        return
    if isinstance(got, dict) and isinstance(want, dict):
        skip = {knob.upper() for (f, knob) in DEVIATIONS if f == rel}
        got = {k: v for k, v in got.items() if k not in skip}
        want = {k: v for k, v in want.items() if k not in skip}
    assert got == want


def test_deviations_are_current(corpus) -> None:
    for (rel, knob), reason in DEVIATIONS.items():
        assert reason
        got, want = corpus[rel]
        if knob == "*":
            assert (got == "ERROR") != (want == "ERROR"), f"{rel} is now read alike: drop the deviation"
        else:
            assert isinstance(got, dict) and isinstance(want, dict)
            assert got.get(knob.upper()) != want.get(knob.upper()), f"{rel} {knob} now agrees: drop it"
