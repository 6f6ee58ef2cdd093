"""The DAG job's submit description (``<dag>.condor.sub``), as condor_submit_dag writes it.

Pure: it reads the DAG files for the statements that change the DAG job (CONFIG,
SET_JOB_ATTR, ENV) and writes one file; it never talks to a daemon.  ``htcd submit_dag``
calls it, and so does the DAGMan job for a SUBDAG EXTERNAL node.  The commands and their
order are condor_submit_dag's (HTCondor's ``DagmanUtils::writeSubmitFile``); the executable
is htcd's own launcher, run as ``htcd dagman ...`` with condor_dagman's arguments.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field

from htcd.dagman.errors import DagError
from htcd.dagman.model import Dag
from htcd.dagman.parser import parse_dag
from htcd.version import version_string

# condor_submit_dag's getenv for the DAG job: what DAGMan needs of the submitter's environment
GETENV = ("CONDOR_CONFIG,_CONDOR_*,PATH,PYTHONPATH,PERL*,PEGASUS_*,TZ,HOME,USER,LANG,LC_ALL,ASAN_OPTIONS,"
          "LSAN_OPTIONS,BEARER_TOKEN,BEARER_TOKEN_FILE")
# ... and htcd's own names for the configuration, so the DAG job reads the submitter's
HTCD_GETENV = ",HTCD_CONFIG,_HTCD_*"
# condor_submit_dag's on_exit_remove: a DAGMan that exits 0..2 (success, failure, abort) or
# crashes with SIGSEGV leaves the queue; one killed otherwise (a reboot) is requeued
DEFAULT_ON_EXIT_REMOVE = "(ExitSignal =?= 11 || (ExitCode =!= UNDEFINED && ExitCode >=0 && ExitCode <= 2))"
SUBMIT_SUFFIX = ".condor.sub"
NOTIFICATIONS = ("never", "always", "complete", "error")


@dataclass
class SubmitDagOptions:
    """condor_submit_dag's options, named like its flags, with its defaults.

    ``None`` for a number means "not given" (condor_dagman then reads its DAGMAN_* knob);
    ``suppress_notification`` and ``always_run_post`` are None when neither of the flag pair
    was given.  ``cwd`` is where relative names resolve (the directory submit_dag runs in)."""

    maxidle: int | None = None
    maxjobs: int | None = None
    maxpre: int | None = None
    maxpost: int | None = None
    maxhold: int | None = None
    force: bool = False
    no_submit: bool = False
    update_submit: bool = False
    do_rescue_from: int = 0
    rescue_file: str = ""
    load_save: str = ""
    autorescue: int = 1
    dorecovery: bool = False
    batch_name: str = ""
    batch_id: str = ""
    notification: str = ""
    suppress_notification: bool | None = None
    append: list[str] = field(default_factory=list)
    insert_sub_file: str = ""
    usedagdir: bool = False
    outfile_dir: str = ""
    config: str = ""
    priority: int = 0
    debug: int | None = None
    verbose: bool = False
    allow_version_mismatch: bool = False
    import_env: bool = False
    include_env: list[str] = field(default_factory=list)
    insert_env: list[str] = field(default_factory=list)
    dagman: str = ""
    lockfile: str = ""
    always_run_post: bool | None = None
    do_recurse: bool = False
    submit_method: int | None = None
    schedd_daemon_ad_file: str = ""
    schedd_address_file: str = ""
    on_exit_remove: str = DEFAULT_ON_EXIT_REMOVE  # DAGMAN_ON_EXIT_REMOVE
    append_getenv: str = ""  # DAGMAN_MANAGER_JOB_APPEND_GETENV
    cwd: str = ""


@dataclass(frozen=True)
class DagFiles:
    """The files of a DAG submission, named after the first (primary) DAG file."""

    submit: str
    debug_log: str  # <dag>.dagman.out
    lib_out: str
    lib_err: str
    sched_log: str  # <dag>.dagman.log: the DAG job's own event log
    lock: str

    @classmethod
    def of(cls, primary: str, options: SubmitDagOptions) -> DagFiles:
        debug = os.path.join(options.outfile_dir, os.path.basename(primary)) if options.outfile_dir else primary
        return cls(submit=primary + SUBMIT_SUFFIX, debug_log=debug + ".dagman.out", lib_out=primary + ".lib.out",
                   lib_err=primary + ".lib.err", sched_log=primary + ".dagman.log",
                   lock=options.lockfile or primary + ".lock")


def launcher() -> str:
    """The absolute path of this installation's ``htcd`` console script (the DAG job's executable)."""
    beside = os.path.join(os.path.dirname(sys.executable), "htcd")
    if os.access(beside, os.X_OK):
        return os.path.abspath(beside)
    found = shutil.which("htcd")
    if found is None:
        raise DagError("cannot find the htcd command (neither beside the Python interpreter nor on PATH)")
    return os.path.abspath(found)


def _quote_args(args: list[str]) -> str:
    """condor_submit's arguments syntax: plain words when no word needs quoting, else the
    double-quoted form with single quotes around words (a ``'`` doubled, a ``"`` doubled)."""
    if all(a and not any(c in a for c in " \t'\"") for a in args):
        return " ".join(args)
    words = []
    for a in args:
        if a and not any(c in a for c in " \t'\""):
            words.append(a.replace('"', '""'))
        else:
            words.append("'" + a.replace("'", "''").replace('"', '""') + "'")
    return '"' + " ".join(words) + '"'


def _env_text(env: dict[str, str]) -> str:
    """The environment command's double-quoted form (``"K=V K2='v w'"``)."""
    items = []
    for k, v in env.items():
        item = f"{k}={v}"
        if any(c in item for c in " \t'\""):
            item = f"{k}='" + v.replace("'", "''").replace('"', '""') + "'"
        items.append(item)
    return '"' + " ".join(items) + '"'


def insert_env_pairs(text: str) -> list[tuple[str, str]]:
    """``-insert_env`` and ``ENV SET``: ``K=V;K=V``, or any delimiter given as the first
    character when it is not a letter, digit or ``_`` (``|K=V|K2=V2``)."""
    delim = ";"
    if text and not (text[0].isalnum() or text[0] == "_"):
        delim, text = text[0], text[1:]
    pairs = []
    for item in text.split(delim):
        item = item.strip()
        if not item:
            continue
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise DagError(f"-insert_env: expected key=value, not {item!r}")
        pairs.append((key.strip(), value))
    return pairs


def dag_arguments(dag_files: list[str], options: SubmitDagOptions, files: DagFiles, dagman_path: str) -> list[str]:
    """condor_dagman's command line in the DAG job, in condor_submit_dag's order."""
    args = ["-p", "0", "-f", "-l", "."]  # htcd's DAGMan has no command port, as with DAGMAN_DISABLE_PORT
    if options.debug is not None:
        args += ["-Debug", str(options.debug)]
    args += ["-Lockfile", files.lock]
    for dag in dag_files:
        args += ["-Dag", dag]
    for flag, value in (("-MaxIdle", options.maxidle), ("-MaxJobs", options.maxjobs),
                        ("-MaxPre", options.maxpre), ("-MaxPost", options.maxpost)):
        if value is not None and value >= 0:
            args += [flag, str(value)]
    if options.always_run_post is not None:
        args.append("-AlwaysRunPost" if options.always_run_post else "-DontAlwaysRunPost")
    if options.dorecovery:
        args.append("-DoRecov")
    args += ["-CsdVersion", version_string()]
    if options.priority:
        args += ["-Priority", str(options.priority)]
    if options.load_save:
        args += ["-load_save", options.load_save]
    if options.rescue_file:
        args += ["-RescueFile", options.rescue_file]
    args += deep_arguments(options, dagman_path, in_submit_file=True)
    return args


def deep_arguments(options: SubmitDagOptions, dagman_path: str, in_submit_file: bool = True) -> list[str]:
    """The options condor_dagman passes down to the submit_dag of its SUBDAG EXTERNAL nodes."""
    args: list[str] = []
    if options.verbose:
        args.append("-verbose")
    if options.notification:
        args += ["-notification", "never" if options.suppress_notification else options.notification]
    if dagman_path:
        args += ["-dagman", dagman_path]
    if options.usedagdir:
        args.append("-UseDagDir")
    if options.outfile_dir:
        args += ["-outfile_dir", options.outfile_dir]
    args += ["-AutoRescue", str(options.autorescue)]
    if options.do_rescue_from:
        args += ["-DoRescueFrom", str(options.do_rescue_from)]
    if options.allow_version_mismatch:
        args.append("-AllowVersionMismatch")
    if options.import_env:
        args.append("-import_env")
    for names in options.include_env:
        args += ["-include_env", names]
    for pairs in options.insert_env:
        args += ["-insert_env", pairs]
    if options.do_recurse:
        args.append("-do_recurse")
    if options.suppress_notification:
        args.append("-suppress_notification")
    elif options.suppress_notification is not None:
        args.append("-dont_suppress_notification")
    if options.submit_method is not None and options.submit_method >= 0:
        args += ["-SubmitMethod", str(options.submit_method)]
    if in_submit_file:
        if options.force:
            args.append("-force")
        if options.update_submit:
            args.append("-update_submit")
    return args


DEEP_FIELDS = ("verbose", "notification", "dagman", "usedagdir", "outfile_dir", "autorescue", "do_rescue_from",
               "allow_version_mismatch", "import_env", "include_env", "insert_env", "do_recurse",
               "suppress_notification", "submit_method", "on_exit_remove", "append_getenv", "schedd_address_file")


def nested_options(options: SubmitDagOptions, cwd: str) -> SubmitDagOptions:
    """The options of a SUBDAG EXTERNAL node's submit description: the flags condor_submit_dag
    passes down (its "deep" options), as ``-no_submit -update_submit`` run in the node's directory."""
    kept = {name: getattr(options, name) for name in DEEP_FIELDS}
    return SubmitDagOptions(**kept, no_submit=True, update_submit=True, cwd=cwd)


def read_dags(dag_files: list[str], options: SubmitDagOptions) -> list[Dag]:
    """The DAG files, parsed and checked (a bad DAG raises DagError with file:line)."""
    cwd = options.cwd or os.getcwd()
    return [parse_dag(d, cwd=cwd, use_dag_dir=options.usedagdir) for d in dag_files]


def _config_file(dags: list[Dag], dag_files: list[str], options: SubmitDagOptions, cwd: str) -> str:
    """The one DAGMan configuration file: -config, or the DAGs' CONFIG (absolute); two differ: refused."""
    found: set[str] = set()
    for dag, name in zip(dags, dag_files, strict=True):
        if dag.config:
            base = os.path.dirname(os.path.join(cwd, name)) if options.usedagdir else cwd
            found.add(os.path.normpath(os.path.join(base, dag.config)))
    if len(found) > 1:
        raise DagError(f"Multiple ({len(found)}) configuration files provided: {', '.join(sorted(found))}")
    conf = next(iter(found), "")
    given = os.path.join(cwd, options.config) if options.config else ""
    if given and conf and os.path.normpath(given) != conf:
        raise DagError(f"Conflicting DAGMan config files specified: {options.config} and {conf}")
    chosen = given or conf
    if chosen and not os.path.exists(chosen):
        raise DagError(f"Unable to read config file {options.config or chosen}: no such file")
    return options.config or conf


def condor_sub_text(dag_files: list[str], options: SubmitDagOptions, dags: list[Dag] | None = None) -> str:
    """The text of the DAG job's submit description."""
    if not dag_files:
        raise DagError("no DAG file given")
    cwd = options.cwd or os.getcwd()
    if dags is None:
        dags = read_dags(dag_files, options)
    files = DagFiles.of(dag_files[0], options)
    dagman_path = options.dagman or launcher()
    include_env = list(options.include_env) + [",".join(d.env_get) for d in dags if d.env_get]
    insert_env = list(options.insert_env) + [";".join(f"{k}={v}" for k, v in d.env_set) for d in dags if d.env_set]
    resolved = SubmitDagOptions(**{**vars(options), "include_env": include_env, "insert_env": insert_env})
    getenv = GETENV + HTCD_GETENV
    if options.append_getenv.strip().lower() == "true":
        getenv = "true"
    else:
        getenv += "".join("," + v for v in include_env if v)
        if options.append_getenv.strip():
            getenv += "," + options.append_getenv.strip()
    config = _config_file(dags, dag_files, options, cwd)
    env: dict[str, str] = {}
    if options.import_env:
        env.update({k: v for k, v in os.environ.items() if k and not any(c in k + v for c in "=;\n")})
    for text in insert_env:
        env.update(insert_env_pairs(text))
    env["_CONDOR_DAGMAN_LOG"] = files.debug_log
    env["_CONDOR_MAX_DAGMAN_LOG"] = "0"
    if options.schedd_daemon_ad_file:
        env["_CONDOR_SCHEDD_DAEMON_AD_FILE"] = options.schedd_daemon_ad_file
    if options.schedd_address_file:
        env["_CONDOR_SCHEDD_ADDRESS_FILE"] = options.schedd_address_file
    if config:
        env["_CONDOR_DAGMAN_CONFIG_FILE"] = config
    lines = [f"# Filename: {files.submit}",
             "# Generated by htcd submit_dag " + "".join(f"{d} " for d in dag_files),
             "universe    = scheduler",
             f"executable  = {launcher() if not options.dagman else dagman_path}",
             f"getenv      = {getenv}",
             f"output      = {files.lib_out}",
             f"error       = {files.lib_err}",
             f"log         = {files.sched_log}"]
    if options.batch_name:
        lines.append(f'My.JobBatchName = "{options.batch_name}"')
    if options.batch_id:
        lines.append(f'My.JobBatchId = "{options.batch_id}"')
    lines += ["remove_kill_sig = SIGUSR1",
              'My.OtherJobRemoveRequirements = "DAGManJobId =?= $(cluster)"',
              "# Note: default on_exit_remove expression:",
              f"# {DEFAULT_ON_EXIT_REMOVE}",
              "# attempts to ensure that DAGMan is automatically",
              "# requeued by the schedd if it exits abnormally or",
              "# is killed (e.g., during a reboot).",
              f"on_exit_remove = {options.on_exit_remove or DEFAULT_ON_EXIT_REMOVE}",
              "arguments = " + _quote_args(["dagman", *dag_arguments(dag_files, resolved, files, dagman_path)]),
              f"environment = {_env_text(env)}"]
    if options.notification:
        lines.append(f"notification = {options.notification}")
    if options.insert_sub_file:
        path = os.path.join(cwd, options.insert_sub_file)
        try:
            with open(path, encoding="utf-8") as f:
                lines += [s.strip() for s in f.read().splitlines() if s.strip()]
        except OSError as exc:
            raise DagError(f"Unable to read submit append file {options.insert_sub_file}: {exc.strerror}") from None
    for dag in dags:
        lines += [f"My.{name} = {value}" for name, value in dag.set_job_attrs]
    lines += list(options.append)
    lines.append("queue")
    return "\n".join(lines) + "\n"


def write_condor_sub(dag_files: str | list[str], options: SubmitDagOptions | None = None,
                     dags: list[Dag] | None = None) -> str:
    """Write ``<first dag>.condor.sub`` for the DAG file(s); its path.  Raises DagError (a bad
    DAG, a missing insert or config file) before anything is written."""
    names = [dag_files] if isinstance(dag_files, str) else list(dag_files)
    options = options or SubmitDagOptions()
    text = condor_sub_text(names, options, dags)
    path = os.path.join(options.cwd or os.getcwd(), DagFiles.of(names[0], options).submit)
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise DagError(f"Unable to create submit file {path}: {exc.strerror}") from None
    return path
