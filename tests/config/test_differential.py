"""htcd's expanded values against HTCondor's own config code (the htcondor wheel).

Each layout is a set of files; HTCondor reads them in a subprocess (a config error exits the
process), htcd in this one.  "ERROR" on both sides means both reject the layout.
"""

from __future__ import annotations

import os

import pytest

from htcd.config import ConfigError, load, table
from tests.config.oracle import Case, run_all

pytest.importorskip("htcondor2")

pytestmark = pytest.mark.slow  # HTCondor reads 190 layouts (one subprocess, more when one exits)

_DESKTOP = ["START", "SUSPEND", "CONTINUE", "PREEMPT", "KILL", "WANT_SUSPEND", "WANT_VACATE", "MaxJobRetirementTime",
            "CLAIM_WORKLIFE", "SLOTS_CONNECTED_TO_KEYBOARD", "IS_OWNER", "STARTD_LATCH_EXPRS", "CpuBusyTimer",
            "KeyboardBusy", "ConsoleBusy", "KeyboardNotBusy", "JustCPU", "MachineBusy", "CpuIdle", "CpuBusy",
            "ActivationTimer", "LastCkpt", "PolicyExprFragments"]
_PREEMPT_IF = ["PREEMPT", "MAXJOBRETIREMENTTIME", "WANT_SUSPEND"]
_HOLD = ["WANT_HOLD", "WANT_HOLD_SUBCODE", "WANT_HOLD_REASON"]
_LIMIT = ["MAX_JOB_RUNTIME", "MaxJobRetirementTime", "PREEMPT"]
_SEC = ["SEC_DEFAULT_AUTHENTICATION", "SEC_DEFAULT_ENCRYPTION", "SEC_DEFAULT_INTEGRITY", "SEC_READ_AUTHENTICATION",
        "SEC_CLIENT_AUTHENTICATION"]
_ALLOW = ["ALLOW_ADMINISTRATOR", "ALLOW_DAEMON", "ALLOW_NEGOTIATOR", "ALLOW_WRITE", "ALLOW_READ"]

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
    ("if_int_equal", {"top": "if 1 == 1\nA=1\nendif\n"}, ["A"], "TOOL", {}),
    ("if_int_via_macro", {"top": "N = 2\nif $(N) > 1\nA=1\nendif\n"}, ["A"], "TOOL", {}),
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
    # metaknobs: the knobs each expansion sets
    ("mk_limit_runtime", {"top": "use POLICY : Limit_Job_Runtimes(3600)\n"}, _LIMIT, "TOOL", {}),
    ("mk_limit_runtime_default", {"top": "use POLICY : Limit_Job_Runtimes\n"}, _LIMIT, "TOOL", {}),
    ("mk_preempt_mem", {"top": "use POLICY : Preempt_If_Memory_Exceeded\n"}, [*_PREEMPT_IF, "MEMORY_EXCEEDED"],
     "TOOL", {}),
    ("mk_hold_mem", {"top": "use POLICY : Hold_If_Memory_Exceeded\n"},
     _PREEMPT_IF + _HOLD + ["MEMORY_EXCEEDED", "HOLD_REASON_MEMORY_EXCEEDED"], "TOOL", {}),
    ("mk_hold_mem_subcode", {"top": "HOLD_SUBCODE_MEMORY_EXCEEDED = 9\nPREEMPT = Foo\nWANT_SUSPEND = Bar\n"
                                    "use POLICY : Hold_If_Memory_Exceeded\n"}, _PREEMPT_IF + _HOLD, "TOOL", {}),
    ("mk_preempt_cpus", {"top": "use POLICY : Preempt_If_Cpus_Exceeded\n"},
     [*_PREEMPT_IF, "CPU_EXCEEDED", "CpusUsage", "STARTD_ATTRS"], "TOOL", {}),
    ("mk_want_hold_if", {"top": "X = Foo > 1\nuse POLICY : Want_Hold_If(X, 7, too big)\n"}, _PREEMPT_IF + _HOLD,
     "TOOL", {}),
    ("mk_want_hold_if_twice", {"top": "X = Foo > 1\nY = Bar\nuse POLICY : Want_Hold_If(X, 7, big)\n"
                                      "use POLICY : Want_Hold_If(Y, 8, bar, really)\n"}, _PREEMPT_IF + _HOLD,
     "TOOL", {}),
    ("mk_want_hold_if_args", {"top": "use POLICY : Want_Hold_If(X)\n"}, ["WANT_HOLD"], "TOOL", {}),
    ("mk_policy_stack", {"top": "use POLICY : Preempt_If_Memory_Exceeded, Preempt_If_Cpus_Exceeded\n"},
     _PREEMPT_IF, "TOOL", {}),
    ("mk_static_slots", {"top": "use FEATURE : StaticSlots\n"},
     ["NUM_SLOTS_TYPE_1", "SLOT_TYPE_1_PARTITIONABLE", "SLOT_TYPE_1"], "TOOL", {}),
    ("mk_static_slots_args", {"top": "use FEATURE : StaticSlots(2, 4, cpus=1, memory=25%)\n"},
     ["NUM_SLOTS_TYPE_2", "SLOT_TYPE_2_PARTITIONABLE", "SLOT_TYPE_2", "NUM_SLOTS_TYPE_1"], "TOOL", {}),
    ("mk_gpus", {"top": "STARTD_CRON_JOBLIST = X\nuse FEATURE : GPUs\n"},
     ["STARTD_CRON_JOBLIST", "STARTD_CRON_GPUs_MONITOR_MODE", "STARTD_CRON_GPUs_MONITOR_PERIOD",
      "STARTD_CRON_GPUs_MONITOR_METRICS", "STARTD_CRON_GPUs_MONITOR_CONDITION", "STARTD_JOB_ATTRS",
      "ENVIRONMENT_FOR_AssignedGPUs", "ENVIRONMENT_VALUE_FOR_UnAssignedGPUs"], "TOOL", {}),
    ("mk_sec_strong", {"top": "use SECURITY : Strong\n"}, _SEC, "TOOL", {}),
    ("mk_sec_recommended", {"top": "use SECURITY : Recommended\n"}, _SEC + _ALLOW + ["SECURITY_MODEL"], "TOOL", {}),
    ("mk_sec_recommended_args", {"top": "use SECURITY : Recommended(htcd, admin@x, a@b, c@d)\n"}, _ALLOW, "TOOL",
     {}),
    # (HTCondor ignores a file's FULL_HOSTNAME / IPV4_ADDRESS, so ALLOW_WRITE/DAEMON are not compared)
    ("mk_sec_host_based", {"top": "CONDOR_HOST = cm.example\nFLOCK_FROM = f.example\n"
                                  "FLOCK_NEGOTIATOR_HOSTS = n.example\nuse SECURITY : Host_Based\n"},
     ["ALLOW_ADMINISTRATOR", "ALLOW_NEGOTIATOR", "ALLOW_READ", "ALLOW_NEGOTIATOR_SCHEDD", "ALLOW_READ_COLLECTOR",
      "ALLOW_READ_STARTD", "LEGACY_ALLOW_SEMANTICS"], "TOOL", {}),
    ("mk_desktop", {"top": "use POLICY : Desktop\n"}, [*_DESKTOP, "SLOTS_CONNECTED_TO_CONSOLE"], "TOOL", {}),
    ("mk_uwcs_desktop", {"top": "use POLICY : UWCS_Desktop\n"},
     [*_DESKTOP, "PREEMPTION_REQUIREMENTS", "PREEMPTION_RANK", "NEGOTIATOR_PRE_JOB_RANK", "NEGOTIATOR_POST_JOB_RANK", "UWCS_START", "UWCS_PREEMPTION_RANK"], "TOOL", {}),
    ("mk_desktop_tuned", {"top": "StartIdleTime = 60\nHighLoad = 0.9\nMINUTE = 61\nuse POLICY : UWCS_Desktop\n"},
     _DESKTOP, "TOOL", {}),
    # $ functions
    ("f_parts", {"top": "P = /a/b/c/file.tar.gz\nA=$Fp(P)\nB=$Fd(P)\nC=$Fdd(P)\nD=$Fn(P)\nE=$Fx(P)\nF=$Fnx(P)\n"
                        "G=$Fpn(P)\nH=$Fdn(P)\nI=$F(P)\n"}, list("ABCDEFGHI"), "TOOL", {}),
    ("f_quote_slash", {"top": "P = /a/b/c/file.tar.gz\nS = /a b/c d/x y.txt\nA=$Fq(P)\nB=$Fpq(P)\nC=$Fxq(P)\n"
                              "D=$Fw(P)\nE=$Fu(P)\nF=$Fa(S)\nG=$Fq(S)\nH=$Fpb(P)\nI=$Fdb(P)\nJ=$Fb(P)\n"},
     list("ABCDEFGHIJ"), "TOOL", {}),
    ("f_edges", {"top": "D = /a/b/c/\nN = plain\nR = rel/dir/x.txt\nA=$Fp(D)\nB=$Fd(D)\nC=$Fn(D)\nE=$Fp(N)\n"
                        "F=$Fn(N)\nG=$Fx(N)\nH=$Fd(R)\nI=$Fp(R)\nJ=$Fn(/x/y.z)\nK=$Fn(NOPE)\nL=$Fp(/top)\n"
                        "M=$Fd(/top)\nO=$Fn(.hidden)\nQ=$Fx(.hidden)\nS=$Fn(a.b/c)\nT=$Fdd(/a/b/c/d/e)\n"
                        "U=$Fn(R) tail\n"}, list("ABCEFGHIJKLMOQSTU"), "TOOL", {}),
    ("f_lazy", {"top": "A = $Fn(P)\nP = /x/first.txt\nP = /y/second.txt\n"}, ["A"], "TOOL", {}),
    ("substr", {"top": "S = abcdefgh\nA1=$SUBSTR(S, 2)\nA2=$SUBSTR(S, 2, 3)\nA3=$SUBSTR(S, -3)\n"
                       "A4=$SUBSTR(S, 1, -2)\nA5=$SUBSTR(S, 20)\nA6=$SUBSTR(S, -20, 2)\nA7=$SUBSTR(S, 0, 0)\n"
                       "A8=$SUBSTR(NOPE, 1)\n"},
     ["A1", "A2", "A3", "A4", "A5", "A6", "A7", "A8"], "TOOL", {}),
    ("choice", {"top": "L = red, green, blue\nI = 2\nB1=$CHOICE(1, L)\nB2=$CHOICE(I, L)\nB3=$CHOICE(0, a, b, c)\n"
                       "B4=$CHOICE(I, a,b ,c)\n"}, ["B1", "B2", "B3", "B4"], "TOOL", {}),
    ("random_fixed", {"top": "A=$RANDOM_INTEGER(5, 5)\nB=$RANDOM_INTEGER(-3, -3, 1)\nC=$RANDOM_CHOICE(only)\n"
                             "D=$RANDOM_CHOICE( a b )\nE=$RANDOM_INTEGER(7, 8, 5)\n"}, list("ABCDE"), "TOOL", {}),
    ("dollar_no_paren", {"top": "A = $BOGUS\nB = cost $5 (x)\nC = a$\n"}, ["A", "B", "C"], "TOOL", {}),
    # more constructs
    ("blank_value", {"top": "A =\nB = $(A)x\nC = \t\n"}, ["A", "B", "C"], "TOOL", {}),
    ("spaces_in_value", {"top": "A =   a   b   \nB=$(A)|\n"}, ["A", "B"], "TOOL", {}),
    ("equals_in_value", {"top": "A = x = y\nB = ==\n"}, ["A", "B"], "TOOL", {}),
    ("hash_in_value", {"top": "A = a#b\nB = #c\n"}, ["A", "B"], "TOOL", {}),
    ("dotted_name", {"top": "A.B = 1\nA.B.C = 2\n"}, ["A.B", "A.B.C"], "TOOL", {}),
    ("underscore_names", {"top": "_A = 1\nA_1 = 2\nB = $(_A)$(A_1)\n"}, ["_A", "A_1", "B"], "TOOL", {}),
    ("macro_case", {"top": "Foo = bar\nA = $(FOO)$(foo)$(fOo)\n"}, ["A"], "TOOL", {}),
    ("macro_spaces", {"top": "A = 1\nB = $( A )\n"}, ["B"], "TOOL", {}),
    ("macro_nested_name", {"top": "N = A\nA = deep\nB = $($(N))\n"}, ["B"], "TOOL", {}),
    ("macro_default_empty", {"top": "A = $(X:)\nB = [$(X:)]\n"}, ["A", "B"], "TOOL", {}),
    ("macro_default_colon", {"top": "A = $(X:a:b)\n"}, ["A"], "TOOL", {}),
    ("macro_unclosed", {"top": "A = $(B\n"}, ["A"], "TOOL", {}),
    ("dollar_dollar_plain", {"top": "A = $$\nB = x$$(Y)\n"}, ["A", "B"], "TOOL", {}),
    # (HTCondor hangs on SCHEDD.A = $(A) more: see docs/config.md, deliberate deviations)
    ("redefine_many", {"top": "".join(f"A = {i}\n" for i in range(50))}, ["A"], "TOOL", {}),
    ("long_chain", {"top": "".join(f"K{i} = $(K{i + 1})\n" for i in range(30)) + "K30 = end\n"}, ["K0"],
     "TOOL", {}),
    ("continuation_macro", {"top": "X = 1\nA = $(X) \\\n  $(X)\n"}, ["A"], "TOOL", {}),
    ("multiline_macro", {"top": "X = v\nA @=end\n $(X)\n  b\n@end\n"}, ["A"], "TOOL", {}),
    ("multiline_unclosed", {"top": "A @=end\nx\n"}, ["A"], "TOOL", {}),
    ("if_else_if", {"top": "if false\nA=1\nelif false\nA=2\nelif true\nA=3\nelse\nA=4\nendif\n"}, ["A"],
     "TOOL", {}),
    ("if_not_version", {"top": "if ! version >= 99.0\nA=1\nendif\nif version == 25.14.1\nB=1\nendif\n"},
     ["A", "B"], "TOOL", {}),
    ("if_defined_table", {"top": "if defined SPOOL\nA=1\nendif\nif defined NOPE_KNOB\nB=1\nendif\n"},
     ["A", "B"], "TOOL", {}),
    ("if_defined_prefixed", {"top": "SCHEDD.X = 1\nif defined SCHEDD.X\nA=1\nendif\n"}, ["A"], "TOOL", {}),
    ("if_macro_number", {"top": "N = 0\nif $(N)\nA=1\nelse\nA=2\nendif\n"}, ["A"], "TOOL", {}),
    ("if_expands_to_nothing", {"top": "if $(UNSET)\nA=1\nelse\nA=2\nendif\nif ! $(UNSET)\nB=1\nendif\n"},
     ["A", "B"], "TOOL", {}),
    ("if_empty", {"top": "if\nendif\n"}, ["A"], "TOOL", {}),
    ("if_in_include", {"top": "X=1\ninclude : {d}/inc\n", "inc": "if defined X\nA = yes\nendif\n"}, ["A"],
     "TOOL", {}),
    ("else_twice", {"top": "if true\nelse\nelse\nendif\n"}, ["A"], "TOOL", {}),
    ("elif_after_else", {"top": "if true\nelse\nelif true\nendif\n"}, ["A"], "TOOL", {}),
    ("include_nested", {"top": "include : {d}/a\n", "a": "A = a\ninclude : {d}/b\n", "b": "B = $(A)b\n"},
     ["A", "B"], "TOOL", {}),
    ("include_relative_macro", {"top": "DIR = {d}\ninclude : $(DIR)/inc\n", "inc": "I = 1\n"}, ["I"], "TOOL", {}),
    ("include_no_colon", {"top": "include {d}/inc\n", "inc": "I=1\n"}, ["I"], "TOOL", {}),
    ("local_dir_missing", {"top": "LOCAL_CONFIG_DIR = {d}/nope\nA=1\n"}, ["A"], "TOOL", {}),
    ("local_dir_two", {"top": "LOCAL_CONFIG_DIR = {d}/d1, {d}/d2\n", "d1/x": "A = 1\n", "d2/x": "A = 2\nB=2\n"},
     ["A", "B"], "TOOL", {}),
    ("local_dir_default_exclude", {"top": "LOCAL_CONFIG_DIR = {d}/cd\n", "cd/.hidden": "A = hidden\n",
                                   "cd/a.py": "A = py\n", "cd/b.sh": "A = sh\n", "cd/c~": "A = tilde\n",
                                   "cd/#d": "A = hash\n", "cd/e.rpmsave": "A = rpm\n",
                                   "cd/f.dpkg-dist": "A = dpkg\n", "cd/g.pl": "A = pl\n",
                                   "cd/10-keep": "B = kept\n", "cd/20-keep.conf": "C = kept\n"},
     ["A", "B", "C"], "TOOL", {}),
    ("local_dir_exclude", {"top": "LOCAL_CONFIG_DIR = {d}/cd\nLOCAL_CONFIG_DIR_EXCLUDE_REGEXP = ^skip\n",
                           "cd/skip1": "A = skipped\n", "cd/keep": "B = kept\n"}, ["A", "B"], "TOOL", {}),
    ("local_file_overrides_dir", {"top": "LOCAL_CONFIG_DIR = {d}/cd\nLOCAL_CONFIG_FILE = {d}/lf\n",
                                  "cd/a": "A = dir\n", "lf": "A = $(A) file\n"}, ["A"], "TOOL", {}),
    ("local_file_command", {"top": "LOCAL_CONFIG_FILE = echo A=piped |\n"}, ["A"], "TOOL", {}),
    ("subsys_collector", {"top": "COLLECTOR.X = c\nSCHEDD.X = s\nX = p\n"}, ["X"], "COLLECTOR", {}),
    ("subsys_negotiator", {"top": "NEGOTIATOR.X = n\nX = p\nY = $(X)\n"}, ["X", "Y"], "NEGOTIATOR", {}),
    ("subsys_startd_macro", {"top": "STARTD.A = s\nB = [$(A)]\n"}, ["B"], "STARTD", {}),
    ("subsys_master_list", {"top": "MASTER.DAEMON_LIST = MASTER SCHEDD\n"}, ["DAEMON_LIST"], "MASTER", {}),
    ("subsys_tool_prefix", {"top": "TOOL.A = t\nA = p\n"}, ["A"], "TOOL", {}),
    ("subsys_case", {"top": "schedd.a = s\n"}, ["A"], "SCHEDD", {}),
    ("subsys_prefixed_default", {"top": "SCHEDD.LOG = /slog\nLOCAL_DIR = /l\n"}, ["LOG", "SCHEDD_LOG", "SPOOL"],
     "SCHEDD", {}),
    ("env_htcd_like", {"top": "A = file\n"}, ["A"], "TOOL", {"_CONDOR_A": "c"}),
    ("env_expands", {"top": "B = bee\n"}, ["A"], "TOOL", {"_CONDOR_A": "[$(B)]"}),
    ("env_self", {"top": "A = file\n"}, ["A"], "TOOL", {"_CONDOR_A": "$(A) env"}),
    ("env_prefixed", {"top": "A = file\n"}, ["A"], "SCHEDD", {"_CONDOR_SCHEDD.A": "env"}),
    ("env_lower", {"top": "A = file\n"}, ["A"], "TOOL", {"_condor_A": "lower"}),
    ("env_empty", {"top": "A = file\n"}, ["A"], "TOOL", {"_CONDOR_A": ""}),
    ("env_fn", {"top": "A = x\n"}, ["B"], "TOOL", {"_CONDOR_B": "$ENV(HOME)"}),
    ("env_in_default", {"top": "A = $ENV(NOPE_X:$(B))\nB = bb\n"}, ["A"], "TOOL", {}),
    ("real_div", {"top": "A = $REAL(7/2)\nB = $INT(7/2)\nC = $INT(7%3)\n"}, ["A", "B", "C"], "TOOL", {}),
    ("mk_policy_subsys", {"top": "STARTD.PREEMPT = Custom\nuse POLICY : Preempt_If_Memory_Exceeded\n"},
     _PREEMPT_IF, "STARTD", {}),
    ("mk_policy_env", {"top": "use POLICY : Limit_Job_Runtimes(100)\n"}, _LIMIT, "TOOL",
     {"_CONDOR_MAX_JOB_RUNTIME": "50"}),
    ("mk_policy_in_if", {"top": "if version >= 25.0\nuse POLICY : Hold_If_Memory_Exceeded\nendif\n"}, _HOLD,
     "TOOL", {}),
    ("mk_policy_in_include", {"top": "include : {d}/inc\n", "inc": "use SECURITY : Strong\n"}, _SEC, "TOOL", {}),
    ("mk_role_and_policy", {"top": "use ROLE : Personal\nuse POLICY : Always_Run_Jobs\n"
                                   "use POLICY : Preempt_If_Cpus_Exceeded\n"},
     ["DAEMON_LIST", "START", *_PREEMPT_IF], "TOOL", {}),
    ("mk_static_then_override", {"top": "use FEATURE : StaticSlots\nNUM_SLOTS_TYPE_1 = 3\n"}, ["NUM_SLOTS_TYPE_1"],
     "TOOL", {}),
    ("error_directive", {"top": "A = 1\nerror : stop here\n"}, ["A"], "TOOL", {}),
    ("error_directive_skipped", {"top": "if false\nerror : not reached\nendif\nA = 1\n"}, ["A"], "TOOL", {}),
    # the language of HTCondor 25 that htcd gained with the generated templates
    ("at_use", {"top": "use ROLE : Personal\n@use FEATURE : GPUs\n"}, ["DAEMON_LIST", "STARTD_CRON_JOBLIST"],
     "TOOL", {}),
    ("at_use_unknown", {"top": "@use FEATURE : Bogus\nA = 1\n"}, ["A"], "TOOL", {}),
    ("eval_manual", {"top": 'slist = "a,B,c"\nlcslist = tolower($(slist))\nlist = split($(slist))\n'
                            'clist = size($(list)) * 10\nsemilist = join(";",split($(lcslist)))\nA=$EVAL(slist)\n'
                            'B=$EVAL(lcslist)\nC=$EVAL(list)\nD=$EVAL(clist)\nE=$EVAL(semilist)\n'
                            'list2 = {1,2.5,"s"}\nF=$EVAL(list2)\nG=$EVAL(1.5)\nH=$EVAL(true)\nI=$EVAL(undefined)\n'
                            'J=$EVAL(1/0)\nK=$EVAL("x")\nL=$EVAL([a=1])\nM=$EVAL(NOPE_ATTR)\n'},
     list("ABCDEFGHIJKLM"), "TOOL", {}),
    ("string_manual", {"top": 'slist = "a,B,c"\nclist = size(split($(slist))) * 10\nA=$STRING(slist)\n'
                              'B=$STRING(slist,Name: %s)\nC=$STRING(clist)\nD=$STRING("a" + 1)\nE=$STRING("q")\n'},
     list("ABCDE"), "TOOL", {}),
    ("int_real_classad", {"top": 'X = 2\nY = 6\nXYArea = $(X) * $(Y)\nA=$INT(XYArea)\nB=$INT(XYArea,%04d)\n'
                                 'C=$INT(XYArea,Area=%d)\nD=$INT("a"=="a")\nE=$INT(3.7)\nF=$REAL(1.0/3)\n'
                                 'G=$REAL(1e20)\nH=$INT(true)\nI=$REAL(2.5)\nJ=$REAL(0.1)\nK=$INT(1e3)\n'
                                 'L=$REAL(100000000.0)\nM=$INT(-3)\nN=$INT(3,%5d|)\nO=$REAL(XYArea,%.1f)\n'},
     list("ABCDEFGHIJKLMNO"), "TOOL", {}),
    ("basename_dirname", {"top": "P = /a/b/c.tar.gz\nE=$BASENAME(P)\nF=$DIRNAME(P)\nG=$BASENAME(P, .gz)\n"
                                 "H=$BASENAME(P,.tar.gz)\nI=$BASENAME(/x/y/)\nJ=$DIRNAME(file)\nK=$BASENAME(P, gz)\n"
                                 "L=$BASENAME(P, .zip)\nO=$DIRNAME(/)\nQ=$DIRNAME(/a/b/c)\n"},
     list("EFGHIJKLOQ"), "TOOL", {}),
    ("f_b_x_a_q", {"top": "P = /a/b/c.tar.gz\nA=$Fbx(P)\nB=$Fqa(P)\nC=$Fnbx(P)\nD=$Fpqa(P)\n"}, list("ABCD"),
     "TOOL", {}),
    ("unknown_function_kept", {"top": "P = /a\nA=$FOO(x)\nB=x $BOGUS(y) z\nC=$Fz(P)\nD=$int(3)\nE=$Env(HOME)\n"
                                      "F=$fp(P)\n"}, list("ABCDEF"), "TOOL", {}),
    ("dollar_forms", {"top": "A=$(DOLLAR)(x)\nB=$DOLLAR\nC=$(DOLLAR)$(DOLLAR)\nD=cost $(DOLLAR)5\n"},
     list("ABCD"), "TOOL", {}),
    ("macro_in_name", {"top": "PFX = MY\n$(PFX)_KNOB = 1\nA_$(PFX) = 2\n$(PFX).X = 3\n$(NOPE)Z = 4\n"
                              "$(PFX)_L @=e\nx\n@e\n$(PFX)_K += 5\n"},
     ["MY_KNOB", "A_MY", "MY.X", "Z", "MY_L", "MY_K"], "TOOL", {}),
    ("macro_in_name_read_then", {"top": "PFX = MY\n$(PFX)_KNOB = 1\nPFX = OTHER\n"}, ["MY_KNOB", "OTHER_KNOB"],
     "TOOL", {}),
    ("macro_in_name_bad", {"top": "N = A B\n$(N) = 1\n"}, ["A"], "TOOL", {}),
    ("local_file_chain", {"top": "LOCAL_CONFIG_FILE = {d}/a\n", "a": "LOCAL_CONFIG_FILE = {d}/b\nA = a\n",
                          "b": "B = b\nLOCAL_CONFIG_FILE = {d}/c\n", "c": "C = c\nA = $(A) c\n"},
     ["A", "B", "C", "LOCAL_CONFIG_FILE"], "TOOL", {}),
    ("local_file_chain_list", {"top": "LOCAL_CONFIG_FILE = {d}/a, {d}/b\n",
                               "a": "LOCAL_CONFIG_FILE = {d}/a, {d}/c, {d}/b\nA = a\n", "b": "B = b\n",
                               "c": "C = c\nB = c\n"}, ["A", "B", "C"], "TOOL", {}),
    ("local_file_sets_dir", {"top": "LOCAL_CONFIG_FILE = {d}/a\n", "a": "LOCAL_CONFIG_DIR = {d}/cd\nA = a\n",
                             "cd/x": "A = dir\nX = x\n"}, ["A", "X"], "TOOL", {}),
    ("user_config_file", {"top": "USER_CONFIG_FILE = {d}/u\nA = top\nB = top\n", "u": "A = user\nU = $(B)\n"},
     ["A", "U"], "TOOL", {}),
    ("user_config_after_local", {"top": "USER_CONFIG_FILE = {d}/u\nLOCAL_CONFIG_FILE = {d}/l\n",
                                 "l": "A = local\n", "u": "A = $(A) user\n"}, ["A"], "TOOL", {}),
    ("config_root", {"top": "R = $(CONFIG_ROOT)\ninclude : $(CONFIG_ROOT)/inc\n", "inc": "I = inc\n"},
     ["R", "I", "CONFIG_ROOT"], "TOOL", {}),
    ("multiline_comment_lines", {"top": "A @= e\n  foo\n   # c\nbar # x\n#\n  baz\n@e\nB @=e\n#only\n@e\n"},
     ["A", "B"], "TOOL", {}),
    ("plus_equals", {"top": "A = x\nA += y\nB += z\nC =\nC += w\nDAEMON_LIST += FOO\nD = $(E)\nD += y\nE = 2\n"
                            "F = x\nF +=\nG = 1\nG += 2\nG += 3\n"}, [*"ABCDFG", "DAEMON_LIST"], "TOOL", {}),
    ("plus_equals_prefixed", {"top": "A = q\nSCHEDD.A += z\nSCHEDD.B = b\nSCHEDD.B += c\n"},
     ["SCHEDD.A", "SCHEDD.B"], "TOOL", {}),
    ("plus_equals_in_if", {"top": "A = x\nif true\n  A += y\nendif\nif false\n  A += no\nendif\n"}, ["A"], "TOOL",
     {}),
    ("other_op_equals", {"top": "A = x\nA -= y\nB ?= z\nC *= w\nD != q\nE |= e\nF &= f\nG /= g\nH %= h\n"
                                "I ^= i\nJ ~= j\nK <= k\nL >= l\nM .= m\n"}, list("ABCDEFGHIJKLM"), "TOOL", {}),
    ("op_without_blank", {"top": "A = x\nA+=y\n"}, ["A"], "TOOL", {}),
    ("op_double", {"top": "A = x\nA ++= y\n"}, ["A"], "TOOL", {}),
    ("self_ref_prefixed_default", {"top": "SCHEDD.COLLECTOR_HOST = $(COLLECTOR_HOST) more\n"},
     ["SCHEDD.COLLECTOR_HOST"], "TOOL", {}),
    ("self_ref_prefixed_file", {"top": "COLLECTOR_HOST = c\nSCHEDD.COLLECTOR_HOST = $(COLLECTOR_HOST) more\n"},
     ["SCHEDD.COLLECTOR_HOST"], "TOOL", {}),
    ("template_blank_args", {"top": "use EXPERIMENTAL : HADReplication(, b, 1, 2)\n"}, ["HAD_LIST", "HAD_CONTROLLEE"],
     "TOOL", {}),
    ("template_blank_first_arg", {"top": "use FEATURE : PartitionableSlot(, 50%)\n"}, ["SLOT_TYPE_1"], "TOOL", {}),
    ("template_runtime_policies", {"top": "use POLICY : Preempt_If_Runtime_Exceeds(100)\n"
                                          "use POLICY : Hold_If_Runtime_Exceeds(200)\nuse POLICY : Hold_If_Cpus_Exceeded\n"
                                          "use POLICY : Preempt_If_Disk_Exceeded\nuse POLICY : Hold_If_Disk_Exceeded\n"},
     ["PREEMPT", "WANT_HOLD", "WANT_HOLD_REASON", "WANT_HOLD_SUBCODE", "MAX_JOB_RUNTIME", "MAXJOBRETIREMENTTIME",
      "WANT_SUSPEND", "DISK_EXCEEDED", "CPU_EXCEEDED"], "TOOL", {}),
    ("plus_separators", {"top": "A = x\nA +,= b\nB = x\nB +&&= b\nC = x\nC +||= b\nD=x\nD +;= b\nE +,= e\n"
                                "G=x\nG +|= y\nI=x\nI +&= y\nJ=x\nJ +*= y\nK=x\nK +**= y\nL = x\nL +,,= y\n"},
     list("ABCDEGIJKL"), "TOOL", {}),
    ("plus_bad_forms", {"top": "A = x\nA + = y\n"}, ["A"], "TOOL", {}),
    ("plus_equals_equals", {"top": "F=f\nF +== g\n"}, ["F"], "TOOL", {}),
    ("words_before_equals", {"top": "A foo = y\nB a b c = z\n"}, ["A", "B"], "TOOL", {}),
    ("at_include_warning", {"top": "@include : {d}/inc\n@warning : hey\nB = 1\n", "inc": "I = inc\n"}, ["I", "B"],
     "TOOL", {}),
    ("at_error", {"top": "A = 1\n@error : stop\n"}, ["A"], "TOOL", {}),
    ("use_blank_separated", {"top": "use ROLE : Execute Submit\n"}, ["DAEMON_LIST"], "TOOL", {}),
    ("use_mixed_separators", {"top": "use POLICY : Preempt_If_Memory_Exceeded Hold_If_Cpus_Exceeded, "
                                     "Limit_Job_Runtimes(50)\n"}, ["PREEMPT", "WANT_HOLD", "MAX_JOB_RUNTIME"],
     "TOOL", {}),
    ("template_macro_arg_in_name", {"top": "use EXPERIMENTAL : HADSharedPort\n"}, ["HAD_LIST"], "TOOL", {}),
    ("template_args_nested_brackets", {"top": "use FEATURE : StaticSlots(2, 1, cpus=min([1, 2]), memory=(25%))\n"},
     ["SLOT_TYPE_2", "NUM_SLOTS_TYPE_2"], "TOOL", {}),
    ("include_command_into", {"top": "include command into {d}/cache.conf : sh {d}/cmd.sh\nY = $(Z)\n",
                              "cmd.sh": "echo Z=cmd\n"}, ["Z", "Y"], "TOOL", {}),
    ("include_command_into_cached", {"top": "include command into {d}/cache.conf : sh {d}/cmd.sh\n",
                                     "cmd.sh": "echo Z=cmd\n", "cache.conf": "Z = cached\n"}, ["Z"], "TOOL", {}),
    ("include_pipe", {"top": "include : sh {d}/cmd.sh |\n", "cmd.sh": "echo Z=piped\n"}, ["Z"], "TOOL", {}),
    ("include_ifexist_command_fails", {"top": "include ifexist command : false\nA = 1\n"}, ["A"], "TOOL", {}),
    ("include_ifexist_into_fails", {"top": "include ifexist command into {d}/nope/x : false\nA = 1\n"}, ["A"],
     "TOOL", {}),
    ("include_into_extra_words", {"top": "include command into {d}/x | : echo A=1\n"}, ["A"], "TOOL", {}),
    ("include_bad_option", {"top": "include sideways : {d}/x\n", "x": "A = 1\n"}, ["A"], "TOOL", {}),
    ("multiline_blank_and_continued", {"top": "A @= e\n a \\\n   b\n\n c \\\n d \n@e\nB @= e\n a \\\n\n b\n@e\n"},
     ["A", "B"], "TOOL", {}),
    ("not_macro_names", {"top": "A.B = 3\nX = [$(A-B)][$(A/B)][$(A.B)][$(1#)][$(0+)][$(A@B)][$(A:B)][$(1?)]\n"},
     ["X"], "TOOL", {}),
    ("words_before_colon", {"top": "SCITOKENS ^https://phys.uz.edu, PLUGIN:A\nX junk : y\n"}, ["SCITOKENS", "X"],
     "TOOL", {}),
    ("condor_host_only", {"top": "CONDOR_HOST = cm.example.org\n"},
     ["COLLECTOR_HOST", "NEGOTIATOR_HOST", "CONDOR_VIEW_HOST"], "TOOL", {}),
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
    """Every layout read by the wheel, all in one subprocess (tests/config/oracle.py)."""
    dirs = {}
    cases = []
    for name, files, keys, subsystem, extra in L:
        tmp = str(tmp_path_factory.mktemp(name))
        _materialize(tmp, files)
        dirs[name] = tmp
        env = {k: v.replace("{d}", tmp) for k, v in extra.items()}
        cases.append(Case(name, os.path.join(tmp, "top"), subsystem, list(keys), env, tmp))
    results = run_all(cases)
    return {name: (dirs[name], results[name]) for name in dirs}


#: (layout, knob) -> why htcd's value differs from HTCondor's; each must still differ.
DEVIATIONS = {
    ("dollar_forms", "C"): "HTCondor rescans after $(DOLLAR), so $(DOLLAR)$(DOLLAR) reads as the match-time "
                           "escape $$(DOLLAR); htcd expands left to right once and gives $$",
}


#: Layouts htcd gets wrong for a reason outside the config language, with that reason.
XFAIL = {
    "condor_host_only": "htcd's param table gives COLLECTOR_HOST and the others no default yet",
} if table()["collector_host"].default is None else {}


def test_enough_layouts() -> None:
    assert len(L) >= 150
    assert len({c[0] for c in L}) == len(L)


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.xfail(reason=XFAIL[c[0]], strict=True))
                                  if c[0] in XFAIL else c for c in L], ids=[c[0] for c in L])
def test_matches_htcondor(case, oracle_results) -> None:
    name, _files, keys, subsystem, extra = case
    tmp, want = oracle_results[name]
    got = _htcd(tmp, keys, subsystem, extra)
    for (layout, knob), reason in DEVIATIONS.items():
        if layout == name and isinstance(got, dict) and isinstance(want, dict):
            assert reason and got[knob] != want[knob], f"{name} {knob} now agrees: drop the deviation"
            got = {k: v for k, v in got.items() if k != knob}
            want = {k: v for k, v in want.items() if k != knob}
    assert got == want
