"""htcd's expanded values against HTCondor's own config code (the htcondor wheel).

Each layout is a set of files; HTCondor reads them in a subprocess (a config error exits the
process), htcd in this one.  "ERROR" on both sides means both reject the layout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from htcd.config import ConfigError, load

pytest.importorskip("htcondor2")

_ORACLE = r"""
import json, sys
import htcondor2
if sys.argv[1] != "TOOL":
    htcondor2.set_subsystem(sys.argv[1])
p = htcondor2.param
out = {}
for k in sys.argv[2:]:
    try:
        p["__P"] = "$(" + k + ")"
        out[k] = p["__P"]
    except KeyError:
        out[k] = None
print(json.dumps(out))
"""

# (id, files {name: text; "top" is CONDOR_CONFIG; {d} is the folder}, keys, subsystem, extra env)
L = [
    ("plain", {"top": "A = 1\nB = hello world\n"}, ["A", "B", "C"], "TOOL", {}),
    ("case", {"top": "Foo = 1\nfoo = 2\n"}, ["FOO", "foo"], "TOOL", {}),
    ("comments", {"top": "# c\n  # indented\nA = 1 # not a comment\n\n"}, ["A"], "TOOL", {}),
    ("lazy", {"top": "A=1\nB=$(A)\nA=2\n"}, ["A", "B"], "TOOL", {}),
    ("self_append", {"top": "A=1\nA=$(A) 2\nA=$(A) 3\n"}, ["A"], "TOOL", {}),
    ("self_first", {"top": "C=$(C) x\n"}, ["C"], "TOOL", {}),
    ("self_default", {"top": "D=$(D:q) y\n"}, ["D"], "TOOL", {}),
    ("self_table", {"top": "DAEMON_LIST=$(DAEMON_LIST) SCHEDD\n"}, ["DAEMON_LIST"], "TOOL", {}),
    ("self_twice", {"top": "A=1\nA=$(A)$(A)\n"}, ["A"], "TOOL", {}),
    ("default", {"top": "A=$(X:dflt)\nB=$(X:$(Y:z))\nE=\nF=$(E:e)\n"}, ["A", "B", "E", "F"], "TOOL", {}),
    ("undef_ref", {"top": "A=$(NOPE)z\n"}, ["A"], "TOOL", {}),
    ("dollar", {"top": "A=$(DOLLAR)x\nB=$$(Foo)\nC=$$(Foo:bar)z\n"}, ["A", "B", "C"], "TOOL", {}),
    ("env", {"top": "A=$ENV(HOME)\nB=$ENV(NOPE_X)q\nC=$ENV(NOPE_X:dd)\n"}, ["A", "B", "C"], "TOOL", {}),
    ("int_real", {"top": "E=3*4\nD=$INT(E)\nF=$REAL(E)\nG=$INT(1+2)\nH=$INT(E,%03d)\nI=$REAL(E,%.2f)\n"},
     ["D", "F", "G", "H", "I"], "TOOL", {}),
    ("continuation", {"top": "A = x \\\n  y \\\n z\nB = 1\n"}, ["A", "B"], "TOOL", {}),
    ("multiline", {"top": "A @=end\n  line1\n   line2 \n@end\nB @=x\n@x\nC=after\n"}, ["A", "B", "C"],
     "TOOL", {}),
    ("colon_assign", {"top": "FOO : bar\n"}, ["FOO"], "TOOL", {}),
    ("section", {"top": "[sec]\nA=1\n"}, ["A"], "TOOL", {}),
    ("bad_line", {"top": "FOO bar\n"}, ["FOO"], "TOOL", {}),
    ("if_true", {"top": "if true\nA=1\nelse\nA=2\nendif\n"}, ["A"], "TOOL", {}),
    ("if_false", {"top": "if false\nA=1\nelse\nA=2\nendif\n"}, ["A"], "TOOL", {}),
    ("if_defined", {"top": "X=1\nif defined X\nA=1\nendif\nif ! defined Y\nB=1\nendif\n"}, ["A", "B"], "TOOL", {}),
    ("if_defined_order", {"top": "if defined A\nQ=1\nelse\nQ=2\nendif\nA=3\n"}, ["Q"], "TOOL", {}),
    ("if_defined_empty", {"top": "A=\nif defined A\nQ=1\nendif\nif defined LOG\nR=1\nendif\n"}, ["Q", "R"],
     "TOOL", {}),
    ("if_version", {"top": "if version >= 25.0\nA=yes\nelse\nA=no\nendif\nif version > 25.14.1\nB=yes\nelse\n"
                           "B=no\nendif\nif version < 8.0\nC=1\nendif\n"}, ["A", "B", "C"], "TOOL", {}),
    ("if_number", {"top": "A=1\nif $(A)\nQ=1\nendif\nif 0\nR=1\nendif\nif yes\nS=1\nendif\nif FALSE\nT=1\nendif\n"},
     ["Q", "R", "S", "T"], "TOOL", {}),
    ("elif", {"top": "if 0\nA=1\nelif 2\nA=2\nelse\nA=3\nendif\n"}, ["A"], "TOOL", {}),
    ("nested", {"top": "A=1\nif defined A\nif false\nQ=1\nelse\nQ=2\nendif\nendif\nif false\nif true\nR=1\n"
                       "endif\nelse\nR=2\nendif\n"}, ["Q", "R"], "TOOL", {}),
    ("if_complex", {"top": "if 3 > 2\nA=1\nendif\n"}, ["A"], "TOOL", {}),
    ("if_word", {"top": "if foo\nA=1\nendif\n"}, ["A"], "TOOL", {}),
    ("if_unclosed", {"top": "if true\nQ=1\n"}, ["Q"], "TOOL", {}),
    ("endif_alone", {"top": "endif\n"}, ["Q"], "TOOL", {}),
    ("include", {"top": "include : {d}/inc\nB=$(I)b\n", "inc": "I = included\n"}, ["I", "B"], "TOOL", {}),
    ("include_override", {"top": "I=top\ninclude : {d}/inc\n", "inc": "I = $(I) inc\n"}, ["I"], "TOOL", {}),
    ("include_ifexist", {"top": "include ifexist : {d}/nope\nA=1\n"}, ["A"], "TOOL", {}),
    ("include_missing", {"top": "include : {d}/nope\nA=1\n"}, ["A"], "TOOL", {}),
    ("include_macro", {"top": "F={d}/inc\ninclude : $(F)\n", "inc": "I=via macro\n"}, ["I"], "TOOL", {}),
    ("include_command", {"top": "include command : echo X=cmd\n"}, ["X"], "TOOL", {}),
    ("subsys_prefix", {"top": "SCHEDD.A=s\nA=plain\nB=$(A)\n"}, ["A", "B"], "SCHEDD", {}),
    ("subsys_prefix_after", {"top": "A=plain\nschedd.A=s\nB=$(A)\n"}, ["A", "B"], "SCHEDD", {}),
    ("subsys_other", {"top": "STARTD.A=s\nA=plain\n"}, ["A"], "SCHEDD", {}),
    ("local_dir_file", {"top": "LOCAL_CONFIG_FILE={d}/lf\nLOCAL_CONFIG_DIR={d}/cd\n", "lf": "X = file\nZ=$(Y)\n",
                        "cd/a": "X = dir\nY = dir\n", "cd/b.py": "Y = excluded\n", "cd/.h": "Y = hidden\n"},
     ["X", "Y", "Z"], "TOOL", {}),
    ("local_dir_order", {"top": "LOCAL_CONFIG_DIR={d}/cd\n", "cd/10": "A=10\nB=$(A)\n", "cd/2": "A=2\nC=2\n",
                         "cd/b~": "A=tilde\n"}, ["A", "B", "C"], "TOOL", {}),
    ("local_files", {"top": "LOCAL_CONFIG_FILE={d}/a, {d}/b\n", "a": "A=a\nB=a\n", "b": "B=b\n"}, ["A", "B"],
     "TOOL", {}),
    ("local_missing", {"top": "LOCAL_CONFIG_FILE={d}/nope\n"}, ["A"], "TOOL", {}),
    ("local_missing_ok", {"top": "LOCAL_CONFIG_FILE={d}/nope\nREQUIRE_LOCAL_CONFIG_FILE=false\nA=1\n"}, ["A"],
     "TOOL", {}),
    ("env_override", {"top": "A=file\nB=file\n"}, ["A", "B", "C"], "TOOL", {"_CONDOR_A": "env", "_CONDOR_C": "$(B)!"}),
    ("env_local_file", {"top": "X = top\n", "lf": "X = file\n"}, ["X"], "TOOL", {"_CONDOR_LOCAL_CONFIG_FILE": "{d}/lf"}),
    ("defaults_dirs", {"top": "LOCAL_DIR=/x\n"}, ["LOG", "SPOOL", "EXECUTE", "LOCK", "RUN", "SCHEDD_ADDRESS_FILE",
                                                "COLLECTOR_ADDRESS_FILE", "STARTD_ADDRESS_FILE",
                                                "MASTER_ADDRESS_FILE", "JOB_QUEUE_LOG", "HISTORY", "MASTER_LOG",
                                                "SCHEDD_LOG", "STARTER_LOG", "SHADOW_LOG", "PROCD_ADDRESS"],
     "TOOL", {}),
    ("defaults_override", {"top": "LOCAL_DIR=/L\nLOG=/G\nSPOOL=/S\nDETECTED_MEMORY=1000\nMAX_DEFAULT_LOG=1 Mb\n"},
     ["HISTORY", "JOB_QUEUE_LOG", "COLLECTOR_ADDRESS_FILE", "LOCK", "RUN", "EXECUTE", "MAX_JOBS_RUNNING",
      "MAX_SCHEDD_LOG"], "TOOL", {}),
    ("defaults_plain", {"top": ""}, ["DAEMON_LIST", "NETWORK_INTERFACE", "DAEMON_SOCKET_DIR", "MASTER_BACKOFF_CONSTANT",
                                     "MASTER_BACKOFF_FACTOR", "MASTER_BACKOFF_CEILING", "MASTER_RECOVER_FACTOR",
                                     "UPDATE_INTERVAL", "NEGOTIATOR_INTERVAL", "NEGOTIATOR_CYCLE_DELAY",
                                     "SCHEDD_INTERVAL", "CLASSAD_LIFETIME", "START", "SUSPEND", "CONTINUE",
                                     "PREEMPT", "KILL", "WANT_SUSPEND", "WANT_VACATE", "RANK", "EVENT_LOG",
                                     "ALIVE_INTERVAL", "JOB_START_DELAY", "ENABLE_PERSISTENT_CONFIG",
                                     "REQUIRE_LOCAL_CONFIG_FILE", "LOCAL_CONFIG_DIR_EXCLUDE_REGEXP",
                                     "NEGOTIATOR_DEBUG", "SCHEDD_DEBUG", "MASTER_DEBUG", "MAX_STARTD_LOG",
                                     "CONDOR_HOST", "COLLECTOR_HOST", "MEMORY", "MATCH_LOG", "RELEASE_DIR",
                                     "SBIN", "BIN", "LIBEXEC", "COLLECTOR_UPDATE_INTERVAL"], "TOOL", {}),
    ("computed", {"top": ""}, ["FULL_HOSTNAME", "HOSTNAME", "IP_ADDRESS", "DETECTED_CPUS", "DETECTED_MEMORY",
                               "OPSYS", "ARCH", "USERNAME", "UID_DOMAIN", "FILESYSTEM_DOMAIN", "NUM_CPUS",
                               "MAX_JOBS_RUNNING"], "TOOL", {}),
    ("role_personal", {"top": "use ROLE : Personal\n"}, ["CONDOR_HOST", "COLLECTOR_HOST", "DAEMON_LIST",
                                                         "RunBenchmarks"], "TOOL", {}),
    ("role_cm", {"top": "use role:centralmanager\n"}, ["DAEMON_LIST"], "TOOL", {}),
    ("role_submit_execute", {"top": "use ROLE : Submit, Execute\n"}, ["DAEMON_LIST"], "TOOL", {}),
    ("role_after", {"top": "DAEMON_LIST = MASTER X\nuse ROLE : Execute\n"}, ["DAEMON_LIST"], "TOOL", {}),
    ("role_override", {"top": "use ROLE : Personal\nCONDOR_HOST = cm.example\n"},
     ["COLLECTOR_HOST", "DAEMON_LIST"], "TOOL", {}),
    ("policy", {"top": "START=M\nWANT_VACATE=M\nuse POLICY : Always_Run_Jobs\n"},
     ["START", "SUSPEND", "CONTINUE", "PREEMPT", "KILL", "WANT_SUSPEND", "WANT_VACATE", "MaxJobRetirementTime",
      "NEGOTIATOR_CONSIDER_PREEMPTION"], "TOOL", {}),
    ("pslot", {"top": "use FEATURE : PartitionableSlot\n"},
     ["SLOT_TYPE_1", "SLOT_TYPE_1_PARTITIONABLE", "NUM_SLOTS_TYPE_1"], "TOOL", {}),
    ("pslot_args", {"top": "use FEATURE : PartitionableSlot(2, 50%)\nuse feature : partitionableslot(3)\n"},
     ["SLOT_TYPE_2", "SLOT_TYPE_2_PARTITIONABLE", "NUM_SLOTS_TYPE_2", "SLOT_TYPE_3", "SLOT_TYPE_1"], "TOOL", {}),
    ("use_unknown", {"top": "use ROLE : Bogus\n"}, ["A"], "TOOL", {}),
    ("use_unknown_cat", {"top": "use FOO : Bar\n"}, ["A"], "TOOL", {}),
    ("use_then_lazy", {"top": "use ROLE : Personal\nCONDOR_HOST = 10.0.0.1\n"}, ["COLLECTOR_HOST"], "TOOL", {}),
    ("chain", {"top": "A=$(B)/x\nB=$(C)/y\nC=/root\n"}, ["A", "B"], "TOOL", {}),
    ("unused_recursion", {"top": "A=$(B)\nB=$(A)x\nC=ok\n"}, ["C"], "TOOL", {}),
]


def _materialize(tmp: str, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = os.path.join(tmp, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text.replace("{d}", tmp))


def _env(tmp: str, extra: dict[str, str]) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/root"),
           "CONDOR_CONFIG": os.path.join(tmp, "top"), "TZ": "UTC"}
    env.update({k: v.replace("{d}", tmp) for k, v in extra.items()})
    return env


def _oracle(tmp: str, keys: list[str], subsystem: str, extra: dict[str, str]) -> dict | str:
    proc = subprocess.run([sys.executable, "-c", _ORACLE, subsystem, *keys], env=_env(tmp, extra),
                          capture_output=True, text=True, cwd=tmp, timeout=60)
    if proc.returncode != 0:
        return "ERROR"
    return json.loads(proc.stdout)


def _htcd(tmp: str, keys: list[str], subsystem: str, extra: dict[str, str]) -> dict | str:
    cwd = os.getcwd()
    os.chdir(tmp)
    try:
        cfg = load(subsystem, env=_env(tmp, extra))
        return {k: cfg.get(k) for k in keys}
    except ConfigError:
        return "ERROR"
    finally:
        os.chdir(cwd)


@pytest.fixture(scope="module")
def oracle_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, dict | str]]:
    """Run every oracle case once, in parallel subprocesses."""
    dirs = {}
    for case in L:
        tmp = str(tmp_path_factory.mktemp(case[0]))
        _materialize(tmp, case[1])
        dirs[case[0]] = tmp
    with ThreadPoolExecutor(max_workers=4) as pool:
        futs = {c[0]: pool.submit(_oracle, dirs[c[0]], c[2], c[3], c[4]) for c in L}
        return {name: (dirs[name], f.result()) for name, f in futs.items()}


def test_enough_layouts() -> None:
    assert len(L) >= 40
    assert len({c[0] for c in L}) == len(L)


@pytest.mark.parametrize("case", L, ids=[c[0] for c in L])
def test_matches_htcondor(case, oracle_results) -> None:
    name, _files, keys, subsystem, extra = case
    tmp, want = oracle_results[name]
    got = _htcd(tmp, keys, subsystem, extra)
    assert got == want
