"""Unit tests of the config language: sources, syntax, macros, typed getters and errors."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from htcd.config import EMBEDDED_DEFAULT, Config, ConfigError, known_templates, load, table
from htcd.errors import UserError


def cfg_of(tmp_path: Path, text: str, subsystem: str = "TOOL", local_name: str | None = None,
           **env: str) -> Config:
    top = tmp_path / "top"
    top.write_text(text)
    return load(subsystem, local_name, env={"CONDOR_CONFIG": str(top), "HOME": str(tmp_path), **env})


# ----- sources -----------------------------------------------------------------------------------


def test_embedded_default_is_a_personal_pool(tmp_path: Path) -> None:
    cfg = load("MASTER", env={"HOME": str(tmp_path)})
    assert cfg.files == []
    assert cfg.get_list("DAEMON_LIST") == ["MASTER", "COLLECTOR", "NEGOTIATOR", "STARTD", "SCHEDD"]
    assert cfg.get("CONDOR_HOST") == "127.0.0.1"
    assert cfg.get("COLLECTOR_HOST") == "127.0.0.1:0"
    state = f"{tmp_path}/.local/state/htcd"
    assert cfg.get("LOCAL_DIR") == state
    assert cfg.get("LOG") == state + "/log"
    assert cfg.get("SPOOL") == state + "/spool"
    assert cfg.get("EXECUTE") == state + "/execute"
    assert cfg.get("LOCK") == state + "/log"
    assert cfg.get("COLLECTOR_ADDRESS_FILE") == state + "/log/.collector_address"
    assert cfg.where("CONDOR_HOST")[0] == "<embedded default>"
    assert cfg.where("LOG") == ("<param table>", 0)
    assert "use ROLE : Personal" in EMBEDDED_DEFAULT


def test_embedded_default_xdg_and_env_move(tmp_path: Path) -> None:
    cfg = load(env={"HOME": str(tmp_path), "XDG_STATE_HOME": "/xdg"})
    assert cfg.get("LOCAL_DIR") == "/xdg/htcd"
    cfg = load(env={"HOME": str(tmp_path), "_HTCD_LOCAL_DIR": "/tmp/x"})
    assert cfg.get("SPOOL") == "/tmp/x/spool"
    assert cfg.get("SCHEDD_ADDRESS_FILE") == "/tmp/x/spool/.schedd_address"
    assert cfg.where("LOCAL_DIR") == ("<environment>", 0)


def test_htcd_config_beats_condor_config(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("X = a\n")
    (tmp_path / "b").write_text("X = b\n")
    cfg = load(env={"HTCD_CONFIG": str(tmp_path / "a"), "CONDOR_CONFIG": str(tmp_path / "b")})
    assert cfg.get("X") == "a"
    assert cfg.files == [str(tmp_path / "a")]


def test_missing_named_top_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load(env={"CONDOR_CONFIG": str(tmp_path / "nope")})


def test_only_env(tmp_path: Path) -> None:
    cfg = load(env={"CONDOR_CONFIG": "ONLY_ENV", "_CONDOR_A": "1", "HOME": str(tmp_path)})
    assert cfg.files == []
    assert cfg.get("A") == "1"
    assert cfg.get("CONDOR_HOST") is None
    assert cfg.get("DAEMON_LIST") == "MASTER"


@pytest.mark.skipif(os.path.exists("/etc/htcd/htcd_config"), reason="machine has a system config")
def test_user_config_location(tmp_path: Path) -> None:
    user = tmp_path / ".config" / "htcd" / "htcd_config"
    user.parent.mkdir(parents=True)
    user.write_text("X = user\n")
    cfg = load(env={"HOME": str(tmp_path)})
    assert cfg.get("X") == "user"
    assert cfg.files == [str(user)]


def test_local_dir_then_local_file_then_env(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    (d / "20-b").write_text("B = dir20\n")
    (d / "10-a").write_text("A = dir10\nB = dir10\n")
    (d / "skip.sh").write_text("A = never\n")
    (d / "#x").write_text("A = never\n")
    (tmp_path / "lf").write_text("C = file\nA = $(A)+file\n")
    cfg = cfg_of(tmp_path, f"LOCAL_CONFIG_DIR = {d}\nLOCAL_CONFIG_FILE = {tmp_path}/lf\nD = top\n",
                 _CONDOR_D="condor", _HTCD_D="htcd", _CONDOR_E="condor")
    assert cfg.get("A") == "dir10+file"
    assert cfg.get("B") == "dir20"
    assert cfg.get("D") == "htcd"
    assert cfg.get("E") == "condor"
    assert cfg.files == [str(tmp_path / "top"), str(d / "10-a"), str(d / "20-b"), str(tmp_path / "lf")]
    assert cfg.where("C") == (str(tmp_path / "lf"), 1)


def test_local_config_file_missing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"local config file .*nope not found") as ei:
        cfg_of(tmp_path, f"LOCAL_CONFIG_FILE = {tmp_path}/nope\n")
    assert ei.value.source == str(tmp_path / "top") and ei.value.line == 1
    cfg = cfg_of(tmp_path, f"LOCAL_CONFIG_FILE = {tmp_path}/nope\nREQUIRE_LOCAL_CONFIG_FILE = False\n")
    assert cfg.files == [str(tmp_path / "top")]


def test_local_config_file_command(tmp_path: Path) -> None:
    cfg = cfg_of(tmp_path, "LOCAL_CONFIG_FILE = echo X = piped |\n")
    assert cfg.get("X") == "piped"


# ----- syntax ------------------------------------------------------------------------------------


def test_basic_syntax(tmp_path: Path) -> None:
    cfg = cfg_of(tmp_path, "# comment\n  Foo = bar baz  \nfoo=again\nLONG = a \\\n   b \\\n c\n"
                           "M @=end\n  one\n  two\n@end\nOLD : colon\n[section]\n")
    assert cfg.get("FOO") == "again" and cfg.get("fOo") == "again"
    assert cfg.get("LONG") == "a b c"
    assert cfg.get("M") == "one\ntwo"
    assert cfg.get("OLD") == "colon"
    assert cfg.where("foo") == (str(tmp_path / "top"), 3)
    assert cfg.where("M") == (str(tmp_path / "top"), 7)


def test_comment_inside_continuation_is_skipped(tmp_path: Path) -> None:
    cfg = cfg_of(tmp_path, "A = x \\\n# note\n  y\n")
    assert cfg.get("A") == "x y"


def test_empty_is_undefined(tmp_path: Path) -> None:
    cfg = cfg_of(tmp_path, "A =\nLOG =\n")
    assert cfg.get("A") is None and cfg.get("A", "d") == "d"
    assert cfg.get("LOG") is None
    assert cfg.raw("A") == ""


def test_bad_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"top:2: not a valid config line: 'FOO bar'") as ei:
        cfg_of(tmp_path, "A = 1\nFOO bar\n")
    assert isinstance(ei.value, UserError)
    assert ei.value.line == 2


def test_unclosed_multiline(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no closing @end"):
        cfg_of(tmp_path, "A @=end\nx\n")


def test_include_forms(tmp_path: Path) -> None:
    (tmp_path / "inc").write_text("I = $(I) inc\n")
    cfg = cfg_of(tmp_path, f"I = top\nF = {tmp_path}/inc\ninclude : $(F)\ninclude ifexist : {tmp_path}/no\n"
                           "include command : echo C = from command\n")
    assert cfg.get("I") == "top inc"
    assert cfg.get("C") == "from command"
    assert str(tmp_path / "inc") in cfg.files
    assert cfg.where("C") == ("<command: echo C = from command>", 1)


def test_include_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nope not found") as ei:
        cfg_of(tmp_path, f"A=1\ninclude : {tmp_path}/nope\n")
    assert ei.value.line == 2
    with pytest.raises(ConfigError, match="exited with status 3"):
        cfg_of(tmp_path, "include command : exit 3\n")
    (tmp_path / "loop").write_text(f"include : {tmp_path}/loop\n")
    with pytest.raises(ConfigError, match="nested deeper than 20"):
        cfg_of(tmp_path, f"include : {tmp_path}/loop\n")
    with pytest.raises(ConfigError, match="unknown include option 'sometimes'"):
        cfg_of(tmp_path, "include sometimes : x\n")


def test_conditionals(tmp_path: Path) -> None:
    cfg = cfg_of(tmp_path, """
X = 1
if defined X
  if false
    A = no
  elif $(X)
    A = yes
  else
    A = no2
  endif
else
  A = outer-no
endif
if ! defined NOPE
  B = 1
endif
if version >= 8.2
  C = new
endif
if version < 8.2
  C = old
endif
if no
  D @=x
  endif
  @x
endif
""")
    assert (cfg.get("A"), cfg.get("B"), cfg.get("C"), cfg.get("D")) == ("yes", "1", "new", None)


@pytest.mark.parametrize("text,msg", [
    ("if 3 > 2\nendif\n", "complex conditionals are not supported"),
    ("if foo\nendif\n", "not a valid if condition"),
    ("if true\n", "no endif"),
    ("endif\n", "endif without matching if"),
    ("else\n", "else without matching if"),
    ("if true\nelse\nelse\nendif\n", "else after else"),
    ("if version 8\nendif\n", "needs an operator"),
    ("if version >= x.y\nendif\n", "bad version"),
])
def test_conditional_errors(tmp_path: Path, text: str, msg: str) -> None:
    with pytest.raises(ConfigError, match=msg):
        cfg_of(tmp_path, text)


@pytest.mark.parametrize("cond", ["2 > 1", "1 == 1", "$(N) >= 1", "defined A && defined B"])
def test_complex_if_is_rejected_saying_what_is_supported(tmp_path: Path, cond: str) -> None:
    """HTCondor rejects comparisons in ``if`` rather than mangling them; so does htcd, and says
    what an ``if`` may test instead."""
    with pytest.raises(ConfigError) as ei:
        cfg_of(tmp_path, f"N = 2\nif {cond}\nA = 1\nendif\n")
    msg = str(ei.value)
    assert msg.startswith(f"{tmp_path / 'top'}:2: ") and "complex conditionals are not supported" in msg
    assert "'defined NAME'" in msg and "'version OP x.y[.z]'" in msg and "$INT" in msg


def test_local_config_dir_default_exclude(tmp_path: Path) -> None:
    d = tmp_path / "cd"
    d.mkdir()
    for name in (".hidden", "a.py", "b.sh", "c~", "#d", "e.rpmsave", "e.rpmnew", "f.dpkg-old", "f.dpkg-dist",
                 "g.pl", "h.cfsaved"):
        (d / name).write_text(f"SKIPPED = {name}\n")
    (d / "10-site").write_text("A = read\n")
    (d / "20-site.conf").write_text("B = read\n")
    cfg = cfg_of(tmp_path, f"LOCAL_CONFIG_DIR = {d}\n")
    assert cfg.get("SKIPPED") is None
    assert cfg.files[1:] == [str(d / "10-site"), str(d / "20-site.conf")]
    assert cfg.get("LOCAL_CONFIG_DIR_EXCLUDE_REGEXP") == table()["local_config_dir_exclude_regexp"].default


def test_require_local_config_file_false_allows_a_missing_file(tmp_path: Path) -> None:
    cfg = cfg_of(tmp_path, f"LOCAL_CONFIG_FILE = {tmp_path}/gone, {tmp_path}/there\n"
                           "REQUIRE_LOCAL_CONFIG_FILE = false\n")
    assert cfg.files == [str(tmp_path / "top")]
    (tmp_path / "there").write_text("T = 1\n")
    cfg = cfg_of(tmp_path, f"LOCAL_CONFIG_FILE = {tmp_path}/gone, {tmp_path}/there\n"
                           "REQUIRE_LOCAL_CONFIG_FILE = false\n")
    assert cfg.get("T") == "1" and cfg.files[-1] == str(tmp_path / "there")


def test_include_command_output_is_config_text(tmp_path: Path) -> None:
    """Every construct works in a command's output: assignments, if, use, self-reference."""
    script = tmp_path / "gen.sh"
    script.write_text("#!/bin/sh\necho 'A = $(A) generated'\necho 'if defined A'\necho 'B = yes'\necho endif\n"
                      "echo 'use POLICY : Always_Run_Jobs'\n")
    script.chmod(0o755)
    cfg = cfg_of(tmp_path, f"A = top\ninclude command : {script}\n")
    assert cfg.get("A") == "top generated" and cfg.get("B") == "yes" and cfg.get("START") == "True"
    assert cfg.where("B") == (f"<command: {script}>", 3)


# ----- metaknobs ---------------------------------------------------------------------------------


def test_metaknobs(tmp_path: Path) -> None:
    cfg = cfg_of(tmp_path, "use ROLE : CentralManager, Submit\nuse role:execute\n"
                           "use POLICY : Always_Run_Jobs\nuse FEATURE : PartitionableSlot(2, 50%)\n")
    assert cfg.get("DAEMON_LIST") == "MASTER COLLECTOR NEGOTIATOR SCHEDD STARTD"
    assert cfg.get("START") == "True" and cfg.get("WANT_SUSPEND") == "False"
    assert cfg.get("SLOT_TYPE_2") == "50%" and cfg.get("SLOT_TYPE_2_PARTITIONABLE") == "true"
    assert cfg.where("SLOT_TYPE_2") == (str(tmp_path / "top"), 4)


def test_unknown_metaknob_lists_known(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown ROLE template Bogus; known: CentralManager, Execute, "
                                          r"get_htcondor_central_manager, .*Personal, Submit") as ei:
        cfg_of(tmp_path, "\nuse ROLE : Bogus\n")
    assert ei.value.line == 2
    with pytest.raises(ConfigError, match="unknown category FOO; known categories: EXPERIMENTAL, FEATURE, POLICY, ROLE"):
        cfg_of(tmp_path, "use FOO : Bar\n")
    assert "Always_Run_Jobs" in known_templates()["POLICY"]


# ----- macros ------------------------------------------------------------------------------------


def test_macros(tmp_path: Path) -> None:
    cfg = cfg_of(tmp_path, "A=1\nB=$(A)\nA=2\nL=x\nL=$(L) y\nL=$(L) z\nD=$(NOPE:fallback)\n"
                           "M=$$(Memory)\nE=$ENV(MYVAR)\nI=$INT(N)\nN=6*7\nR=$REAL(Q)\nQ=42/4.0\nF=$INT(N,%05d)\n"
                           "U=a$(UNDEF)b\nDL=$(DOLLAR)(x)\nDAEMON_LIST = $(DAEMON_LIST) STARTD\n", MYVAR="mv")
    assert cfg.get("B") == "2"
    assert cfg.get("L") == "x y z"
    assert cfg.raw("B") == "$(A)"
    assert cfg.get("D") == "fallback"
    assert cfg.get("M") == "$$(Memory)"
    assert cfg.get("E") == "mv"
    assert cfg.get("I") == "42"
    assert cfg.get("R") == "10.5"
    assert cfg.get("F") == "00042"
    assert cfg.get("U") == "ab"
    assert cfg.get("DL") == "$(x)"
    assert cfg.get("DAEMON_LIST") == "MASTER STARTD"
    assert cfg.expand("$(LOG)/SchedLog") == cfg.get("LOG") + "/SchedLog"


def test_recursion_is_an_error(tmp_path: Path) -> None:
    cfg = cfg_of(tmp_path, "X = 1\nA = $(B)\nB = $(C)\nC = $(A)\nOK = fine\n")
    assert cfg.get("OK") == "fine"
    with pytest.raises(ConfigError, match=r"top:2: macro recursion: A -> B -> C -> A"):
        cfg.get("A")
    with pytest.raises(ConfigError, match="macro recursion"):
        cfg.expand("$(B)")


def test_int_of_non_number(tmp_path: Path) -> None:
    cfg = cfg_of(tmp_path, "A=$INT(B)\nB=abc\n")
    with pytest.raises(ConfigError, match=r"\$INT\(B\): 'abc' is not a number"):
        cfg.get("A")


def test_subsystem_and_local_name(tmp_path: Path) -> None:
    text = "A = plain\nSCHEDD.A = schedd\nSCHEDD2.A = local\nB = $(A)\nS = $(SUBSYSTEM)\nSCHEDD.C = $(C) more\nC = c\n"
    plain = cfg_of(tmp_path, text)
    assert (plain.get("A"), plain.get("B"), plain.get("S")) == ("plain", "plain", "TOOL")
    schedd = cfg_of(tmp_path, text, "SCHEDD")
    assert (schedd.get("A"), schedd.get("B"), schedd.get("S")) == ("schedd", "schedd", "SCHEDD")
    assert schedd.get("SCHEDD.A") == "schedd" and schedd.get("C") == " more"
    local = cfg_of(tmp_path, text, "SCHEDD", "SCHEDD2")
    assert (local.get("A"), local.get("B")) == ("local", "local")
    assert local.subsystem == "SCHEDD" and local.local_name == "SCHEDD2"


# ----- typed getters -----------------------------------------------------------------------------


def test_typed_getters(tmp_path: Path) -> None:
    cfg = cfg_of(tmp_path, "T = True\nF = no\nI = 12\nE = 2*1024\nR = 2.5\nL = a, b  c,,d\n")
    assert cfg.get_bool("T") is True and cfg.get_bool("F") is False
    assert cfg.get_bool("NOPE", True) is True
    assert cfg.get_int("I") == 12 and cfg.get_int("E") == 2048 and cfg.get_int("NOPE", 7) == 7
    assert cfg.get_int("MAX_JOBS_RUNNING") == min(int(cfg.get("DETECTED_MEMORY")), 10000)
    assert cfg.get_float("R") == 2.5 and cfg.get_float("I") == 12.0
    assert cfg.get_float("MASTER_BACKOFF_FACTOR") == 2.0
    assert cfg.get_list("L") == ["a", "b", "c", "d"] and cfg.get_list("NOPE", ("x",)) == ["x"]


def test_typed_errors(tmp_path: Path) -> None:
    cfg = cfg_of(tmp_path, "\nNUM_CPUS = abc\nB = maybe\nR = 1.x\n")
    with pytest.raises(ConfigError) as ei:
        cfg.get_int("NUM_CPUS")
    assert str(ei.value) == f"{tmp_path}/top:2: NUM_CPUS = abc: not an integer"
    assert ei.value.source == str(tmp_path / "top") and ei.value.line == 2
    with pytest.raises(ConfigError, match="B = maybe: not a boolean"):
        cfg.get_bool("B")
    with pytest.raises(ConfigError, match=r"R = 1\.x: not a number"):
        cfg.get_float("R")


# ----- param table, computed knobs, speed ----------------------------------------------------------


def test_param_table_rows() -> None:
    rows = table()
    for name in ("LOCAL_DIR", "LOG", "SPOOL", "DAEMON_LIST", "LOCAL_CONFIG_DIR_EXCLUDE_REGEXP", "SCHEDD_DEBUG"):
        assert name.lower() in rows
    assert rows["log"].default == "$(LOCAL_DIR)/log"
    assert rows["condor_host"].default is None
    assert rows["update_interval"].type == "int" and rows["update_interval"].reconfig
    assert all(r.description for r in rows.values())


def test_computed_and_names(tmp_path: Path) -> None:
    cfg = cfg_of(tmp_path, "X = 1\nFULL_HOSTNAME = fixed.example\n")
    assert cfg.get("OPSYS") == os.uname().sysname.upper()
    assert int(cfg.get("DETECTED_CPUS")) >= 1 and int(cfg.get("DETECTED_MEMORY")) > 0
    assert cfg.get("IP_ADDRESS").count(".") == 3
    assert cfg.get("FULL_HOSTNAME") == "fixed.example" and cfg.get("UID_DOMAIN") == "fixed.example"
    names = cfg.names()
    assert "X" in names and "LOG" in names and "OPSYS" in names and "CONDOR_HOST" not in names


def test_load_is_fast(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    load(env=env)
    start = time.perf_counter()
    for _ in range(20):
        load("SCHEDD", env=env).get("SCHEDD_LOG")
    assert (time.perf_counter() - start) / 20 < 0.005


# ----- sizes and expressions ---------------------------------------------------------------------


@pytest.mark.parametrize("text,size", [("10 Mb", 10 << 20), ("512K", 512 << 10), ("1.5 GB", 3 << 29),
                                       ("100", 100), ("2t", 2 << 40), ("7 b", 7)])
def test_get_size_units(tmp_path: Path, text: str, size: int) -> None:
    cfg = cfg_of(tmp_path, f"S = {text}\nMAX_SCHEDD_LOG = {text}\n")
    assert cfg.get_size("S") == size
    assert cfg.get_int("MAX_SCHEDD_LOG") == size  # a size knob: get_int takes units too


def test_size_defaults_and_errors(tmp_path: Path) -> None:
    cfg = cfg_of(tmp_path, "S = lots\nN = 10 Mb\n")
    assert cfg.get_size("MAX_DEFAULT_LOG") == 10 << 20
    assert cfg.get_size("NOPE", 5) == 5
    with pytest.raises(ConfigError) as err:
        cfg.get_size("S")
    assert str(err.value).startswith(f"{tmp_path}/top:1: S = lots: not a size")
    with pytest.raises(ConfigError, match=r"top:2: N = 10 Mb: not an integer"):
        cfg.get_int("N")  # not a size knob: units are a mistake


def test_get_int_error_names_file_and_line(tmp_path: Path) -> None:
    cfg = cfg_of(tmp_path, "\nMAX_JOBS_RUNNING = abc\n")
    with pytest.raises(ConfigError) as err:
        cfg.get_int("MAX_JOBS_RUNNING")
    assert str(err.value) == f"{tmp_path}/top:2: MAX_JOBS_RUNNING = abc: not an integer"


def test_get_expr(tmp_path: Path) -> None:
    cfg = cfg_of(tmp_path, "K = 2\nRANK = Memory * $(K)\nSTART = (Owner == \"x\" &&\n")
    assert cfg.get_expr("RANK") == "Memory * 2"
    assert cfg.get_expr("NOPE") is None and cfg.get_expr("NOPE", "true") == "true"
    with pytest.raises(ConfigError) as err:
        cfg.get_expr("START")
    assert str(err.value).startswith(f"{tmp_path}/top:3: START = (Owner == \"x\" &&: not a valid ClassAd")


# ----- metaknobs and plugin templates ------------------------------------------------------------


def test_shipped_templates_are_listed() -> None:
    known = known_templates()
    for name in ("UWCS_Desktop", "Desktop", "Limit_Job_Runtimes", "Preempt_If_Cpus_Exceeded",
                 "Hold_If_Memory_Exceeded", "Preempt_If_Memory_Exceeded", "Want_Hold_If"):
        assert name in known["POLICY"]
    assert {"StaticSlots", "GPUs"} <= set(known["FEATURE"])
    assert {"Recommended", "Strong", "Host_Based"} <= set(known["SECURITY"])


def test_template_argument_errors_name_the_use_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        cfg_of(tmp_path, "A = 1\nuse POLICY : Want_Hold_If(X)\n")
    assert str(err.value).startswith(f"{tmp_path}/top:2: use POLICY : WANT_HOLD_IF requires 3 arguments")


def test_error_and_warning_directives(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ConfigError, match=r"top:2: stop: 1"):
        cfg_of(tmp_path, "A = 1\nerror : stop: $(A)\n")
    cfg = cfg_of(tmp_path, "warning : careful\nA = 2\n")
    assert cfg.get("A") == "2"
    assert "top:1: warning: careful" in capsys.readouterr().err


def test_register_templates(tmp_path: Path) -> None:
    from htcd.config import _core, register_templates

    try:
        register_templates("PLUGIN", "Greeter", "# PLUGIN : Greeter\nGREETING = hello $(1:world)\n")
        register_templates("policy", "Extra_Thing", "EXTRA = $(0)\n")
        cfg = cfg_of(tmp_path, "use plugin : greeter(htcd)\nuse POLICY : Extra_Thing(a, b)\n")
        assert cfg.get("GREETING") == "hello htcd"
        assert cfg.get("EXTRA") == "a, b"
        assert cfg.where("GREETING") == (str(tmp_path / "top"), 1)
        assert "Greeter" in known_templates()["PLUGIN"]
        assert "Extra_Thing" in known_templates()["POLICY"]
        with pytest.raises(ValueError, match="built-in"):
            register_templates("ROLE", "personal", "X = 1\n")
        with pytest.raises(ValueError):
            register_templates("bad cat", "x", "")
    finally:
        _core._REGISTERED.clear()
    with pytest.raises(ConfigError, match="unknown category plugin"):
        cfg_of(tmp_path, "use plugin : greeter\n")


# ----- $ functions -------------------------------------------------------------------------------


def test_unknown_function_is_kept_with_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = cfg_of(tmp_path, "A = 1\nB = x $BOGUS(y) z\nC = $BOGUS no paren\nD = $Fz(A)\nE = $int(3)\n")
    assert cfg.get("B") == "x $BOGUS(y) z"
    assert cfg.get("C") == "$BOGUS no paren"
    assert cfg.get("D") == "$Fz(A)"
    assert cfg.get("E") == "$int(3)"  # names are case-sensitive, as in HTCondor
    err = capsys.readouterr().err
    assert f"{tmp_path}/top:2: warning: unknown function $BOGUS(y) is kept as written" in err
    assert f"{tmp_path}/top:4: warning: unknown function $Fz(A)" in err
    assert "$BOGUS no paren" not in err
    cfg.get("B")
    assert capsys.readouterr().err == ""  # once per definition


def test_function_arguments_may_hold_macros(tmp_path: Path) -> None:
    cfg = cfg_of(tmp_path, "S = abcdef\nI = 2\nL = x, y, z\nA = $SUBSTR(S, $(I))\nB = $CHOICE($(I), L)\n"
                           "P = /d/f.txt\nC = $Fn($(P))\n")
    assert cfg.get("A") == "cdef"  # HTCondor ends the arguments at the first ')'
    assert cfg.get("B") == "z"
    assert cfg.get("C") == "f"


@pytest.mark.parametrize("text,message", [
    ("$CHOICE(3, a, b)", "index 3 is outside the list of 2"),
    ("$CHOICE(x, a, b)", "'x' is not an integer"),
    ("$CHOICE(1)", "expected an index and a list"),
    ("$SUBSTR(S)", "expected a knob, a start"),
    ("$SUBSTR(S, q)", "'q' is not an integer"),
    ("$RANDOM_INTEGER(5, 1)", "needs min <= max"),
    ("$RANDOM_INTEGER(1, 5, 0)", "positive step"),
    ("$RANDOM_INTEGER(x)", "expected min, max"),
    ("$RANDOM_CHOICE()", "at least one item"),
])
def test_function_mistakes_are_errors(tmp_path: Path, text: str, message: str) -> None:
    cfg = cfg_of(tmp_path, f"S = abc\nA = {text}\n")
    with pytest.raises(ConfigError, match=r"top:2: ") as err:
        cfg.get("A")
    assert message in str(err.value)


def test_random_values_are_in_range_and_stable(tmp_path: Path) -> None:
    cfg = cfg_of(tmp_path, "A = $RANDOM_INTEGER(10, 50, 10)\nB = $RANDOM_CHOICE(x, y, z)\nL = p, q\n"
                           "C = $RANDOM_CHOICE(L)\n")
    a = cfg.get("A")
    assert a in {"10", "20", "30", "40", "50"}
    assert cfg.get("B") in {"x", "y", "z"} and cfg.get("C") in {"p", "q"}
    assert all(cfg.get("A") == a for _ in range(20))  # chosen once per loaded config


# ----- the config.d snippets htcd ships ----------------------------------------------------------

CONFIG_D = Path(__file__).resolve().parents[2] / "config.d"


def test_shipped_snippets_read_cleanly(tmp_path: Path) -> None:
    snippets = sorted(p for p in CONFIG_D.iterdir() if p.suffix == ".conf")
    assert snippets and all(p.name[:2].isdigit() and p.name[2] == "-" for p in snippets)
    for p in snippets:
        assert p.read_text().startswith(f"# {p.name} -- ")  # each says what it does
    cfg = cfg_of(tmp_path, f"LOCAL_CONFIG_DIR = {CONFIG_D}\n"
                           "LOCAL_CONFIG_DIR_EXCLUDE_REGEXP = \\.md$\n")
    assert cfg.files[1:] == [str(p) for p in snippets]
    assert cfg.get("SECURITY_MODEL") == "24.0"
    assert cfg.get("SEC_DEFAULT_AUTHENTICATION") == "required"
    assert cfg.get("ALLOW_READ") == "*"


def test_random_picks_are_stable_per_host_and_knob(tmp_path: Path) -> None:
    text = "A = $RANDOM_INTEGER(1, 1000000)\nB = $RANDOM_INTEGER(1, 1000000)\n"
    first, second = cfg_of(tmp_path, text), cfg_of(tmp_path, text)
    assert first.get("A") == second.get("A") and first.get("B") == second.get("B")
    assert first.get("A") != first.get("B")  # another knob, another draw
    cfg = cfg_of(tmp_path, "use POLICY : UWCS_Desktop\n")
    assert -30 * 60 <= int(cfg.get("UWCS_PERIODIC_CHECKPOINT").split("+ ")[1].split(" *")[0]) * 60 <= 30 * 60


# ----- HTCondor 25 forms -------------------------------------------------------------------------


def test_words_before_the_operator_are_skipped_with_a_warning(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    cfg = cfg_of(tmp_path, "A = x\nA -= y\nB foo : z\n")
    assert (cfg.get("A"), cfg.get("B")) == ("y", "z")  # as HTCondor reads them
    err = capsys.readouterr().err
    assert f"{tmp_path}/top:2: warning: A - = ...: the words before '=' are ignored" in err
    assert f"{tmp_path}/top:3: warning: B foo : ...: the words before ':' are ignored" in err


def test_append_operators(tmp_path: Path) -> None:
    cfg = cfg_of(tmp_path, "A = x\nA += y\nB = x\nB +,= y\nC = x\nC +&&= y\nD += d\nE = $(F)\nE += e\nF = 2\n")
    assert [cfg.get(k) for k in "ABCDE"] == ["x y", "x,y", "x && y", "d", "2 e"]
    assert cfg.raw("E") == "$(F) e"  # appended as written: macros stay lazy


def test_include_command_into_caches_the_output(tmp_path: Path) -> None:
    (tmp_path / "cmd.sh").write_text("echo Z=first\n")
    text = f"include command into {tmp_path}/cache : sh {tmp_path}/cmd.sh\n"
    assert cfg_of(tmp_path, text).get("Z") == "first"
    assert (tmp_path / "cache").read_text() == "Z=first\n"
    (tmp_path / "cmd.sh").write_text("echo Z=second\n")
    assert cfg_of(tmp_path, text).get("Z") == "first"  # the cache is read, the command not run
    with pytest.raises(ConfigError, match=r"top:1: .*command 'false' exited with status 1"):
        cfg_of(tmp_path, "include command : false\n")
    assert cfg_of(tmp_path, "include ifexist command : false\nA = 1\n").get("A") == "1"


def test_macro_in_a_template_knob_name_is_refused(tmp_path: Path) -> None:
    from htcd.config import _core, register_templates

    try:
        register_templates("TESTING", "Named", "K_$(X) = 1\n")
        with pytest.raises(ConfigError, match=r"top:1: illegal knob name in a template line: K_\$\(X\) = 1"):
            cfg_of(tmp_path, "use TESTING : Named\n")
        assert cfg_of(tmp_path, "X = a\nK_$(X) = 1\n").get("K_a") == "1"  # outside templates it is expanded
    finally:
        _core._REGISTERED.pop(("testing", "named"), None)


def test_local_config_file_chains_and_user_file(tmp_path: Path) -> None:
    (tmp_path / "a").write_text(f"LOCAL_CONFIG_FILE = {tmp_path}/b\nA = a\n")
    (tmp_path / "b").write_text("B = b\n")
    (tmp_path / "u").write_text("U = $(A)$(B)\n")
    cfg = cfg_of(tmp_path, f"LOCAL_CONFIG_FILE = {tmp_path}/a\nUSER_CONFIG_FILE = {tmp_path}/u\n")
    assert cfg.get("U") == "ab"
    assert cfg.files == [f"{tmp_path}/top", f"{tmp_path}/a", f"{tmp_path}/b", f"{tmp_path}/u"]
    assert cfg.get("CONFIG_ROOT") == str(tmp_path)
