"""Submit files for the differential test against HTCondor's own submit code.

Each case is one submit file, run in a directory that holds ``run.sh`` (the executable),
``in.txt``, ``data/a.dat``, ``data/b.dat``, ``data/c.txt``, the directories ``d1/`` and
``d2/``, ``items.txt`` (three rows ``x 1``, ``y 2``, ``z 3``) and ``gen.sh`` (prints two rows).
``CONFIG`` holds extra configuration for a case; every case also gets ``BASE_CONFIG``.
"""

from __future__ import annotations

BASE_CONFIG = "FILESYSTEM_DOMAIN = example.org\nUID_DOMAIN = example.org\n"

E = "executable = run.sh\n"

CASES: dict[str, str] = {
    # queue forms
    "queue_plain": E + "queue\n",
    "queue_none": E,
    "queue_n": E + "output = out.$(Process)\nqueue 3\n",
    "queue_n_macro": E + "n = 2\nqueue $(n)\n",
    "queue_in": E + "arguments = $(Item)\nqueue in (a, b, c)\n",
    "queue_in_var": E + "arguments = -x $(color)\nqueue color in (red green blue)\n",
    "queue_in_count": E + "arguments = $(Item) $(Step)\nqueue 2 in (a, b)\n",
    "queue_in_multiline": E + "arguments = $(v)\nqueue v in (\n  one\n  two\n  three\n)\n",
    "queue_in_slice": E + "arguments = $(Item)\nqueue in [1:3] (a, b, c, d)\n",
    "queue_in_slice_step": E + "arguments = $(Item)\nqueue in [::2] (a, b, c, d, e)\n",
    "queue_matching": E + "arguments = $(Item)\nqueue matching (data/*.dat)\n",
    "queue_matching_files": E + "arguments = $(f)\nqueue f matching files (data/* d*)\n",
    "queue_matching_dirs": E + "arguments = $(f)\nqueue f matching dirs (d*)\n",
    "queue_matching_count": E + "arguments = $(Item) $(Step)\nqueue 2 matching files (data/*.dat)\n",
    "queue_from_file": E + "arguments = $(name) $(num)\nqueue name, num from items.txt\n",
    "queue_from_file_slice": E + "arguments = $(name)\nqueue name, num from [1:] items.txt\n",
    "queue_from_inline": E + "arguments = $(a) $(b)\nqueue a b from (\n  p 1\n  q 2\n)\n",
    "queue_from_inline_rest": E + "arguments = \"$(a) '$(b)'\"\nqueue a, b from (\n  p one two\n  q three\n)\n",
    "queue_from_script": E + "arguments = $(a)-$(b)\nqueue a, b from ./gen.sh |\n",
    "queue_var_is_command": E + "request_memory = 512\nqueue request_memory in (1024, 2048)\n",
    "queue_vars_are_commands": E + "arguments = a\nqueue arguments, request_cpus from (\n  x, 2\n  z, 3\n)\n",
    "queue_var_command_unset": E + "queue request_disk from (\n  10MB\n  2GB\n)\n",
    "queue_itemindex_row": E + "arguments = $(ItemIndex) $(Row) $(Step) $(Process)\nqueue 2 in (a, b)\n",
    # macros
    "macro_simple": E + "base = hello\narguments = $(base) world\nqueue\n",
    "macro_default": E + "arguments = $(undefined_thing:fallback) $(other:)\nqueue\n",
    "macro_cluster_proc": E + "output = out.$(Cluster).$(Process)\nerror = err.$(ClusterId).$(ProcId)\nqueue 2\n",
    "macro_nested": E + "a = x\nb = $(a)y\nc = $(b)z\narguments = $(c)\nqueue\n",
    "macro_int": E + "n = 6\narguments = $INT(n) $INT(n,%03d)\nqueue\n",
    "macro_real": E + "r = 2.5\narguments = $REAL(r) $REAL(r,%.3f)\nqueue\n",
    "macro_fparts": E + "path = /data/sub/file.tar.gz\n"
                        "arguments = $Fp(path) $Fn(path) $Fx(path) $Fnx(path) $Fd(path)\nqueue\n",
    "macro_fq": E + "path = /data/x.txt\ndescription = $Fq(path)\nqueue\n",
    "macro_f_quoted_my": E + "x = \"foo/bar.txt\"\nMY.y = \"a/b.c\"\n+z = \"q.r\"\nMY.A1 = \"$F(x)\"\n"
                             "MY.A2 = \"$Fn(x)\"\nMY.A3 = $Fq(x)\nMY.A4 = \"$Fx(MY.y)\"\nMY.A6 = \"$F(MY.z)\"\nqueue\n",
    # dask-jobqueue's submit file (HTCondorCluster): attribute names as commands, MY.JobId through $F
    "client_dask_jobqueue": ("MY.DaskWorkerName = \"htcondor--$F(MY.JobId)--\"\nRequestCpus = MY.DaskWorkerCores\n"
                             "RequestMemory = floor(MY.DaskWorkerMemory / 1048576)\n"
                             "RequestDisk = floor(MY.DaskWorkerDisk / 1024)\nMY.JobId = \"$(ClusterId).$(ProcId)\"\n"
                             "MY.DaskWorkerCores = 1\nMY.DaskWorkerMemory = 1000000000\nMY.DaskWorkerDisk = 1000000000\n"
                             "Stream_Output = True\nStream_Error = True\nbatch_name = dask-worker\n"
                             "Output = worker-$F(MY.JobId).out\nError = worker-$F(MY.JobId).err\n"
                             "Log = worker-$(cluster).log\nExecutable = /bin/sh\n"
                             "Arguments = \"-c '/usr/bin/python3 -m distributed.cli.dask_worker tcp://127.0.0.1:1 "
                             "--name dummy'\"\nEnvironment = \"\"\nQueue\n"),
    "macro_fflags": E + "path = /data/sub/file.tar.gz\narguments = $Fdb(path) $Fxb(path) $Fnxqa(path) $Fu(path) "
                        "$Fpd(path) $Fdn(path) $DIRNAME(path) $BASENAME(path) $Fqa(path)\nqueue\n",
    "macro_ffull": E + "path = rel/x.txt\narguments = $Ff(path) $Ffp(path) $Ffn(path)\nqueue\n",
    "macro_fedges": E + "a = x\nb = /a/b/\narguments = $Fp(a)| $Fd(a)| $Fx(a)| $Fdb(a)| $Fp(b)| $Fd(b)| $Fn(b)| "
                        "$Fdb(b)|\nqueue\n",
    "macro_env": E + "arguments = $ENV(HOME) $ENV(NO_SUCH_VARIABLE_XYZ:none)\nqueue\n",
    "macro_dollar": E + "arguments = cost$(DOLLAR)5\nqueue\n",
    "macro_matchtime": E + "+Site = \"$$(Name)\"\nqueue\n",
    "macro_random_choice": E + "+Pick = $RANDOM_CHOICE(7, 7, 7)\nqueue\n",
    "macro_item_in_attr": E + "+Color = \"$(Item)\"\nqueue in (red, blue)\n",
    # commands
    "universe_vanilla": "universe = vanilla\n" + E + "queue\n",
    "universe_scheduler": "universe = scheduler\n" + E + "queue\n",
    "universe_local": "universe = local\n" + E + "queue\n",
    "universe_docker": "universe = docker\ndocker_image = debian:12\n" + E + "queue\n",
    "universe_container": "universe = container\ncontainer_image = /img/x.sif\n" + E + "queue\n",
    "universe_container_docker": "universe = container\ncontainer_image = docker://debian:12\n" + E + "queue\n",
    "executable_not_transferred": "executable = bin/tool\ntransfer_executable = false\nqueue\n",
    "getenv_list": E + "getenv = HOME, LANG\nqueue\n",
    "random_integer": E + "+N = $RANDOM_INTEGER(4, 4)\nqueue\n",
    "macro_choice_substr": E + "word = abcdef\narguments = $CHOICE(Process, x, y) $SUBSTR(word, 2, 3)\nqueue 2\n",
    "requirements_fsd": E + "requirements = TARGET.FileSystemDomain == \"x\"\nqueue\n",
    "requirements_hft": E + "requirements = HasFileTransfer\nqueue\n",
    "executable_abs": "executable = /bin/echo\ntransfer_executable = false\nqueue\n",
    "args_old": E + "arguments = a   b c\nqueue\n",
    "args_new": E + "arguments = \"one 'two three' four\"\nqueue\n",
    "args_new_quotes": E + "arguments = \"a ''b'' \"\"c\"\"\"\nqueue\n",
    "env_old": E + "environment = A=1;B=two;C=\nqueue\n",
    "env_new": E + "environment = \"A=1 B='x y' C=3\"\nqueue\n",
    "io_files": E + "input = in.txt\noutput = out.txt\nerror = err.txt\nlog = job.log\nqueue\n",
    "io_stream": E + "output = o\nerror = e\nstream_output = false\nstream_error = false\nqueue\n",
    "initialdir": E + "initialdir = d1\nlog = job.log\noutput = out\nqueue\n",
    "transfer_files": E + "should_transfer_files = YES\nwhen_to_transfer_output = ON_EXIT\n"
                          "transfer_input_files = in.txt, data/a.dat\ntransfer_output_files = res, res2\nqueue\n",
    "transfer_no": E + "should_transfer_files = NO\nqueue\n",
    "transfer_remaps": E + "should_transfer_files = YES\ntransfer_output_remaps = \"a=b;c=d\"\nqueue\n",
    "request_units": E + "request_cpus = 4\nrequest_memory = 2G\nrequest_disk = 3 GB\nqueue\n",
    "request_units_k": E + "request_memory = 2048K\nrequest_disk = 100M\nqueue\n",
    "request_plain": E + "request_memory = 512\nrequest_disk = 1000000\nqueue\n",
    "request_t": E + "request_memory = 1T\nrequest_disk = 1T\nqueue\n",
    "request_expr": E + "request_memory = 100 * 2\nrequest_cpus = 1 + 1\nqueue\n",
    "request_gpus": E + "request_gpus = 2\nqueue\n",
    "request_custom": E + "request_foo = 3\nqueue\n",
    "requirements_user": E + "requirements = Memory > 1000 && HasJava\nqueue\n",
    "requirements_arch": E + "requirements = (TARGET.Arch == \"aarch64\")\nqueue\n",
    "requirements_opsys_disk": E + "requirements = OpSys == \"LINUX\" && Disk > 5\nrequest_cpus = 2\nqueue\n",
    "rank": E + "rank = Memory * 2\nqueue\n",
    "priority": E + "priority = 10\nqueue\n",
    "priority_negative": E + "priority = -5\nqueue\n",
    "accounting_group": E + "accounting_group = physics\naccounting_group_user = alice\nqueue\n",
    "concurrency_limits": E + "concurrency_limits = Sw_A, sw_b:2\nqueue\n",
    "getenv_true": E + "getenv = true\nqueue\n",
    "notification": E + "notification = Complete\nnotify_user = a@b.c\nqueue\n",
    "notification_error": E + "notification = error\nqueue\n",
    "batch_name": E + "batch_name = my_batch\nqueue\n",
    "periodic": E + "periodic_hold = NumJobStarts > 3\nperiodic_hold_reason = \"too many starts\"\n"
                    "periodic_hold_subcode = 42\nperiodic_release = HoldReasonSubCode == 42\n"
                    "periodic_remove = JobStatus == 5 && time() - EnteredCurrentStatus > 600\n"
                    "periodic_remove_reason = \"held too long\"\nqueue\n",
    "on_exit": E + "on_exit_hold = ExitCode == 3\non_exit_hold_reason = \"exit 3\"\n"
                   "on_exit_hold_subcode = 3\non_exit_remove = ExitCode =!= 2\nqueue\n",
    "max_retries": E + "max_retries = 5\nqueue\n",
    "max_retries_on_exit": E + "max_retries = 2\non_exit_remove = ExitCode == 7\nqueue\n",
    "max_idle": E + "max_idle = 10\nqueue 3\n",
    "max_materialize": E + "max_materialize = 4\nqueue 3\n",
    "plus_attr": E + "+Project = \"alpha\"\n+Weight = 3.5\n+Flag = true\n+Expr = Weight * 2\nqueue\n",
    "my_attr": E + "MY.Project = \"beta\"\nMY.Count = 7\nqueue\n",
    "hold": E + "hold = true\nqueue\n",
    "leave_in_queue": E + "leave_in_queue = JobStatus == 4\nqueue\n",
    "kill_sig": E + "kill_sig = SIGUSR1\nqueue\n",
    "job_ad_information_attrs": E + "job_ad_information_attrs = Owner, ExitCode\nqueue\n",
    "description": E + "description = a test job\nqueue\n",
    "job_lease": E + "job_lease_duration = 600\nqueue\n",
    "case_fold": "Executable = run.sh\nArguments = A\nREQUEST_MEMORY = 1G\nQueue\n",
    "continuation": E + "arguments = one \\\n   two\nqueue\n",
    "comments": "# header\n" + E + "  # indented comment\narguments = x\n\nqueue\n",
    "submit_attrs": E + "queue\n",
    "submit_attrs_override": E + "+Site = \"mine\"\nqueue\n",
    "realistic": E + "universe = vanilla\narguments = \"-n $(Process) -f '$(Item)'\"\n"
                     "output = logs/$(Cluster).$(Process).out\nerror = logs/$(Cluster).$(Process).err\n"
                     "log = logs/$(Cluster).log\nrequest_cpus = 2\nrequest_memory = 4 GB\nrequest_disk = 1G\n"
                     "should_transfer_files = YES\nwhen_to_transfer_output = ON_EXIT\n"
                     "transfer_input_files = in.txt\n+Project = \"genomics\"\nqueue 2 in (s1, s2)\n",
    # request values that need no slot clause (condor_submit leaves Cpus <= 1, Memory <= 1, Disk 0 out)
    "request_cpus_one": E + "request_cpus = 1\nqueue\n",
    "request_small": E + "request_memory = 1\nrequest_disk = 0\nrequest_cpus = 0\nqueue\n",
    "request_small_expr": E + "request_memory = 0 + 0\nrequest_cpus = 1 + 0\nqueue\n",
    # include (files written by FILES; relative names are relative to the submit directory)
    "include_file": E + "include : common.sub\nqueue\n",
    "include_nested": E + "include : parts/outer.sub\narguments = $(inner) $(outer)\nqueue\n",
    "include_spaces_case": E + "INCLUDE:common.sub\nqueue\n",
    "include_override": E + "include : common.sub\nrequest_memory = 3G\nqueue\n",
    "include_command_pipe": E + "include : ./cmds.sh |\nqueue\n",
    "include_command_kw": E + "include command : echo request_cpus = 3\nqueue\n",
    "include_ifexist": E + "include ifexist : no-such.sub\narguments = still\nqueue\n",
    "include_macro_name": E + "part = common\ninclude : $(part).sub\nqueue\n",
    # if / elif / else / endif
    "if_defined": E + "X = 3\nif defined X\n  arguments = -n $(X)\nelse\n  arguments = -n 1 -debug\nendif\nqueue\n",
    "if_undefined": E + "if defined X\n  arguments = -n $(X)\nelse\n  arguments = -n 1 -debug\nendif\nqueue\n",
    "if_defined_empty": E + "X =\nif defined X\n  arguments = yes\nelse\n  arguments = no\nendif\nqueue\n",
    "if_not_defined": E + "if ! defined X\n  arguments = none\nendif\nqueue\n",
    "if_elif": E + "mode = b\nA = false\nB = true\nif $(A)\n  arguments = a\nelif $(B)\n  arguments = b\n"
                   "elif true\n  arguments = late\nelse\n  arguments = c\nendif\nqueue\n",
    "if_version": E + "if version >= 24.0\n  +New = true\nelif version >= 9.0\n  +New = false\nendif\n"
                      "if version < 8.0\n  +Old = true\nendif\nqueue\n",
    "if_macro_bool": E + "use_big = yes\nif $(use_big)\n  request_memory = 4G\nendif\nqueue\n",
    "if_macro_number": E + "n = 0\nif $(n)\n  arguments = nonzero\nelse\n  arguments = zero\nendif\nqueue\n",
    "if_macro_empty": E + "if $(nothing)\n  arguments = set\nelse\n  arguments = unset\nendif\nqueue\n",
    "if_nested": E + "a = 1\nif defined a\n  if defined b\n    arguments = ab\n  else\n    arguments = a\n  endif\n"
                     "  +InA = true\nelse\n  if true\n    arguments = never\n  endif\nendif\nqueue\n",
    "if_queue_inside": E + "many = 1\narguments = $(Process)\nif defined many\n  queue 3\nelse\n  queue 1\nendif\n",
    "if_env": E + "if defined HOME\n  arguments = var\nelse\n  arguments = $ENV(HOME:none)\nendif\nqueue\n",
    # templates (SUBMIT_TEMPLATE_<Name> in CONFIG) and the built-in STRICT ones
    "template_plain": E + "use template : Big\nqueue\n",
    "template_args": E + "use template : Big(1G, 8)\nqueue\n",
    "template_case": E + "USE Template : big(3G)\nqueue\n",
    "template_arg_forms": E + "use template : Args(a, b c, d)\nqueue\n",
    "template_two": E + "use template : Big, Args(x)\nqueue\n",
    "template_config_macros": E + "bar = B\nuse template : Macros(a1)\nqueue 2\n",
    "template_then_override": E + "use template : Big\nrequest_cpus = 2\nqueue\n",
    "template_strict": E + "use STRICT : TRUE\narguments = $(f)\nqueue f matching files (data/*.dat)\n",
    # JOB_DEFAULT_* from the configuration fill what the submit file leaves unset
    "job_default_all": E + "queue\n",
    "job_default_units_exprs": E + "queue\n",
    "job_default_overridden": E + "request_memory = 1G\nrequest_cpus = 3\nrequest_disk = 5\nnotification = never\n"
                                  "job_lease_duration = 60\nqueue\n",
    "job_default_scheduler": "universe = scheduler\n" + E + "queue\n",
    "job_default_cpus_one": E + "queue\n",
    "job_default_zero": E + "queue\n",
    # commands the daemons act on at run time (deferral, retries, limits, notes...)
    "deferral_time": E + "deferral_time = 1700000000\nqueue\n",
    "deferral_all": E + "deferral_time = 1700000000\ndeferral_window = 60\ndeferral_prep_time = 30\nqueue\n",
    "deferral_expr": E + "deferral_time = time() + 60\nrequest_cpus = 2\nqueue\n",
    "deferral_schedd_interval": E + "deferral_time = 100\nqueue\n",
    "cron": E + "cron_minute = */5\ncron_hour = 2\ncron_day_of_month = 1\ncron_month = 2\n"
                "cron_day_of_week = 3\ncron_window = 10\ncron_prep_time = 5\nqueue\n",
    "retry_until_expr": E + "retry_until = ExitCode == 2\nqueue\n",
    "retry_until_code": E + "max_retries = 3\nretry_until = 2\non_exit_remove = ExitCode == 7\nqueue\n",
    "success_exit_code": E + "success_exit_code = 3\nqueue\n",
    "retries_all": E + "max_retries = 1\nretry_until = 5\nsuccess_exit_code = 4\non_exit_remove = ExitCode > 9\n"
                       "queue\n",
    "durations": E + "allowed_job_duration = 3600\nallowed_execute_duration = 60 * 2\nqueue\n",
    "job_machine_attrs": E + "job_machine_attrs = Machine, Cpus\njob_machine_attrs_history_length = 2 + 1\nqueue\n",
    "email_attributes": E + "email_attributes = Owner ExitCode,  Foo\nnotification = always\nqueue\n",
    "submit_event_notes": E + "submit_event_notes = \"quoted\" notes\nqueue\n",
    "coresize": E + "coresize = 1000\nqueue\n",
    "core_size": E + "core_size = 10 * 2\nqueue\n",
    "nice_user": E + "nice_user = true\nqueue\n",
    "nice_user_user": E + "nice_user = true\naccounting_group_user = bob\nqueue\n",
    "nice_user_false": E + "nice_user = false\nqueue\n",
    "vacate_graceful": E + "job_max_vacate_time = 10 + 5\nwant_graceful_removal = ExitCode == 0\nqueue\n",
    "kill_sig_graceful": E + "kill_sig = SIGINT\nwant_graceful_removal = true\nqueue\n",
    "container_image_alone": E + "container_image = docker://debian:12\nqueue\n",
    "container_image_vanilla": "universe = vanilla\ncontainer_image = /img/x.sif\n" + E + "queue\n",
    "container_no_executable": "universe = container\ncontainer_image = docker://debian:12\narguments = a b\nqueue\n",
    "container_executable_not_sent": "universe = container\ncontainer_image = docker://debian\n"
                                     "transfer_executable = false\nexecutable = /bin/ls\nqueue\n",
    "stream_false": E + "output = o\nstream_output = false\nstream_error = false\nqueue\n",
    "shell": "shell = echo hi\nqueue\n",
    "shell_quotes": "shell = ls -l 'a b' \"c\" > out\narguments = ignored\nqueue\n",
    # self-checkpointing jobs (docs/checkpoint.md)
    "checkpoint_exit_code": E + "checkpoint_exit_code = 85\nshould_transfer_files = yes\n"
                                "transfer_output_files = example.checkpoint\nqueue\n",
    "checkpoint_files": E + "checkpoint_exit_code = 85\ntransfer_checkpoint_files = a, b\nqueue\n",
    "checkpoint_want_ft": E + "+WantFTOnCheckpoint = true\n+SuccessCheckpointExitCode = 85\nqueue\n",
    # condor_submit's other spellings of commands: job attribute names and older keys
    "alias_cmd": "cmd = run.sh\nqueue\n",
    "alias_attributes": E + "LeaveJobInQueue = true\nJobBatchName = bn\nOnExitRemove = ExitCode == 0\n"
                            "RequestCpus = 2\nRequestMemory = 100\nJobPrio = 4\nqueue\n",
    "alias_arguments2": E + "arguments2 = \"a 'b c'\"\nqueue\n",
    "alias_std": E + "stdin = in.txt\nstdout = o\nstderr = e\nqueue\n",
    "alias_keys": E + "prio = 3\npreferences = Memory\njob_iwd = d1\nmaterialize_max_idle = 3\nqueue\n",
    "alias_transfer": E + "should_transfer_files = YES\nTransferInputFiles = in.txt\nTransferOutputFiles = a, b\nqueue\n",
    "alias_not_read": E + "in = in.txt\nout = o\nerr = e\nTransferInput = in.txt\nConcurrencyLimits = x\nqueue\n",
    "alias_iwd": E + "iwd = d1\nqueue\n",
    "alias_initial_dir": E + "initial_dir = d2\nqueue\n",
    "alias_env_args": E + "args = a b\nenv = A=1\nqueue\n",
    "alias_environment2": E + "environment2 = \"B=2 C='x y'\"\nqueue\n",
    "transfer_std_false": E + "input = in.txt\noutput = o\nerror = e\ntransfer_input = false\n"
                              "transfer_output = false\ntransfer_error = false\nqueue\n",
    "concurrency_limits_expr": E + "concurrency_limits_expr = strcat(\"a\", \"b\")\nqueue\n",
    "should_transfer_always": E + "should_transfer_files = ALWAYS\nqueue\n",
    "image_disk_usage": E + "image_size = 2G\ndisk_usage = 3M\nqueue\n",
    "batch_id": E + "batch_id = \"q\"\nqueue\n",
    "skip_filechecks": E + "skip_filechecks = true\nqueue\n",
    # macros
    "macro_self_reference": E + "foo = $(Process)\nfoo = snap $(foo)\nbar = $(bar) shot\narguments = $(foo) $(bar)\n"
                                "queue 2\n",
    "macro_self_reference_functions": E + "foo = a.b\nfoo = $Fn(foo) $(foo:z)\narguments = $(foo)\nqueue\n",
    "macro_node_outside_parallel": E + "arguments = a$(Node)b\nqueue 2\n",
    "macro_env_unset": E + "arguments = $ENV(NO_SUCH_VARIABLE_XYZ) $ENV(NO_SUCH_VARIABLE_XYZ:d)\nqueue\n",
    "macro_predefined": E + "arguments = $(SUBMIT_TIME) $(IsWindows) $(IsLinux) $(ARCH) $(OPSYS) $(OPSYSANDVER) "
                            "$(OPSYSMAJORVER) $(OPSYSVER)\nqueue\n",
    "macro_predefined_dates": E + "arguments = $(JobId) $(Year) $(Month) $(Day)\nqueue 2\n",
    "macro_predefined_overridden": E + "ARCH = mine\narguments = $(ARCH)\nqueue\n",
    "args_old_escaped_quote": E + "arguments = a \\\"b c\\\" d\nqueue\n",
    "executable_matchtime": "executable = $$(OpSys)/run.sh\nqueue\n",
    "executable_matchtime_not_sent": "transfer_executable = false\nexecutable = $$(OpSys)/run.sh\nqueue\n",
    "unused_line_still_submits": E + "reqest_memory = 1G\nqueue\n",
    # all of it together
    "statements_combined": E + "include : common.sub\nif defined big\n  use template : Big(8G)\nelse\n"
                               "  use template : Big\nendif\narguments = $(Item)\nqueue in (p, q)\n",
}

TEMPLATES = """SUBMIT_TEMPLATE_NAMES = Big, Args Macros
SUBMIT_TEMPLATE_Big @=tpl
  request_memory = $(1:2G)
  request_cpus = $(2:4)
  +Big = true
@tpl
SUBMIT_TEMPLATE_Args @=tpl
  if ! $(1?)
    error : Args needs an argument
  endif
  arguments = $(0) / $(1) / $(2) / $(2+) / $(0#) / $(3?)
@tpl
SUBMIT_TEMPLATE_Macros @=tpl
  arguments = $(FOO) $(Process) $(bar) $(1) $(NOPE:dd)
  +Where = "$(FOO)"
@tpl
FOO = fromconfig
"""

CONFIG: dict[str, str] = {
    "submit_attrs": "Site = \"cern\"\nPool = 3\nSUBMIT_ATTRS = Site Pool\n",
    "submit_attrs_override": "Site = \"cern\"\nSUBMIT_EXPRS = Site\n",
    **{name: TEMPLATES for name in CASES if name.startswith("template_") or name == "statements_combined"},
    "job_default_all": "JOB_DEFAULT_REQUESTMEMORY = 256\nJOB_DEFAULT_REQUESTDISK = 2048\nJOB_DEFAULT_REQUESTCPUS = 2\n"
                       "JOB_DEFAULT_NOTIFICATION = ERROR\nJOB_DEFAULT_LEASE_DURATION = 600\n",
    "job_default_units_exprs": "JOB_DEFAULT_REQUESTMEMORY = 1G\nJOB_DEFAULT_REQUESTDISK = 3 * 1024\n"
                               "JOB_DEFAULT_REQUESTCPUS = 1 + 1\nJOB_DEFAULT_NOTIFICATION = complete\n"
                               "JOB_DEFAULT_LEASE_DURATION = 2 * 60\n",
    "job_default_overridden": "JOB_DEFAULT_REQUESTMEMORY = 256\nJOB_DEFAULT_REQUESTDISK = 2048\n"
                              "JOB_DEFAULT_REQUESTCPUS = 2\nJOB_DEFAULT_NOTIFICATION = ERROR\n"
                              "JOB_DEFAULT_LEASE_DURATION = 600\n",
    "job_default_scheduler": "JOB_DEFAULT_LEASE_DURATION = 600\nJOB_DEFAULT_NOTIFICATION = always\n",
    "job_default_cpus_one": "JOB_DEFAULT_REQUESTCPUS = 1\nJOB_DEFAULT_REQUESTMEMORY = 2GB\nJOB_DEFAULT_REQUESTDISK = 1G\n",
    "job_default_zero": "JOB_DEFAULT_REQUESTMEMORY = 0\nJOB_DEFAULT_REQUESTDISK = 0\nJOB_DEFAULT_LEASE_DURATION = 0\n",
    "statements_combined": TEMPLATES + "JOB_DEFAULT_NOTIFICATION = error\n",
    "deferral_schedd_interval": "SCHEDD_INTERVAL = 60\n",
}

# Extra files a case's directory holds (path -> text; a name ending in .sh is made executable).
FILES: dict[str, dict[str, str]] = {
    "include_file": {"common.sub": "arguments = from include\nrequest_memory = 2G\n+FromInclude = true\n"},
    "include_nested": {"parts/outer.sub": "outer = o\ninclude : parts/inner.sub\n",
                       "parts/inner.sub": "inner = i\n"},
    "include_spaces_case": {"common.sub": "arguments = upper\n"},
    "include_override": {"common.sub": "request_memory = 2G\n"},
    "include_command_pipe": {"cmds.sh": "#!/bin/sh\necho 'arguments = generated'\necho '+Gen = 1'\n"},
    "include_macro_name": {"common.sub": "arguments = named by a macro\n"},
    "statements_combined": {"common.sub": "big = yes\n+Shared = \"yes\"\n"},
}
