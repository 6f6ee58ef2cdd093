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
    "io_stream": E + "output = o\nerror = e\nstream_output = true\nstream_error = false\nqueue\n",
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
}

CONFIG: dict[str, str] = {
    "submit_attrs": "Site = \"cern\"\nPool = 3\nSUBMIT_ATTRS = Site Pool\n",
    "submit_attrs_override": "Site = \"cern\"\nSUBMIT_EXPRS = Site\n",
}
