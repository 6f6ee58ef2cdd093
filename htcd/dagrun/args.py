"""condor_dagman's command line, as ``<dag>.condor.sub`` passes it to the DAGMan job.

Flags are case-insensitive and take one leading dash (``-Dag F``, ``-MaxIdle 10``); an unknown
flag, a missing value or a non-integer where a number goes is refused with the flag named.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from htcd.errors import UserError

# flag (lower case) -> (attribute, kind): "int", "str", "list", or a constant stored when present
_VALUED: dict[str, tuple[str, str]] = {
    "-l": ("log_dir", "str"), "-lockfile": ("lock_file", "str"), "-autorescue": ("auto_rescue", "int"),
    "-dorescuefrom": ("do_rescue_from", "int"), "-dag": ("dag_files", "list"),
    "-csdversion": ("csd_version", "str"), "-dagman": ("dagman_path", "str"),
    "-maxidle": ("max_idle", "int"), "-maxjobs": ("max_jobs", "int"), "-maxpre": ("max_pre", "int"),
    "-maxpost": ("max_post", "int"), "-outfile_dir": ("outfile_dir", "str"),
    "-priority": ("priority", "int"), "-batch-name": ("batch_name", "str"),
    "-debug": ("debug", "int"), "-notification": ("notification", "str"),
    "-p": ("port", "int"), "-config": ("config", "str"), "-load_save": ("load_save", "str"),
    "-rescuefile": ("rescue_file", "str"), "-include_env": ("include_env", "list"),
    "-insert_env": ("insert_env", "list"), "-submitmethod": ("submit_method", "int"),
}
_SWITCHES: dict[str, tuple[str, object]] = {
    "-f": ("foreground", True), "-suppress_notification": ("suppress_notification", True),
    "-dont_suppress_notification": ("suppress_notification", False),
    "-dorecov": ("do_recovery", True), "-dorecovery": ("do_recovery", True), "-force": ("force", True), "-usedagdir": ("use_dag_dir", True),
    "-allowversionmismatch": ("allow_version_mismatch", True), "-import_env": ("import_env", True),
    "-verbose": ("verbose", True), "-dontalwaysrunpost": ("always_run_post", False),
    "-alwaysrunpost": ("always_run_post", True), "-no_submit": ("no_submit", True),
    "-do_recurse": ("do_recurse", True), "-update_submit": ("update_submit", True),
}


@dataclass
class DagmanArgs:
    dag_files: list[str] = field(default_factory=list)
    log_dir: str = "."
    lock_file: str | None = None
    auto_rescue: int | None = None
    do_rescue_from: int = 0
    csd_version: str = ""
    dagman_path: str = ""
    max_idle: int | None = None
    max_jobs: int | None = None
    max_pre: int | None = None
    max_post: int | None = None
    outfile_dir: str | None = None
    priority: int = 0
    batch_name: str | None = None
    debug: int | None = None
    notification: str | None = None
    port: int = 0
    config: str | None = None
    load_save: str | None = None
    foreground: bool = False
    suppress_notification: bool | None = None
    do_recovery: bool = False
    force: bool = False
    use_dag_dir: bool = False
    allow_version_mismatch: bool = False
    import_env: bool = False
    verbose: bool = False
    always_run_post: bool | None = None  # None: DAGMAN_ALWAYS_RUN_POST decides
    no_submit: bool = False
    rescue_file: str | None = None
    include_env: list[str] = field(default_factory=list)  # names: already in the job's environment
    insert_env: list[str] = field(default_factory=list)  # K=V;K=V pairs set in DAGMan's environment
    submit_method: int | None = None  # condor_submit or direct: htcd always submits directly
    do_recurse: bool = False  # SUBDAG submit files are made when the node runs, either way
    update_submit: bool = False  # condor_submit_dag's concern

    def overrides(self) -> dict[str, str]:
        """The DAGMAN_* knobs the command line sets (``{"DAGMAN_MAX_JOBS_IDLE": "10"}``)."""
        out: dict[str, str] = {}
        for attr, knob in (("max_idle", "max_jobs_idle"), ("max_jobs", "max_jobs_submitted"),
                           ("max_pre", "max_pre_scripts"), ("max_post", "max_post_scripts"),
                           ("debug", "verbosity")):
            value = getattr(self, attr)
            if value is not None:
                out["DAGMAN_" + knob.upper()] = str(value)
        for attr in ("auto_rescue", "suppress_notification"):  # same-named knobs
            value = getattr(self, attr)
            if value is not None:
                out["DAGMAN_" + attr.upper()] = "true" if value else "false"
        return out


def parse_args(argv: list[str]) -> DagmanArgs:
    out = DagmanArgs()
    i = 0
    while i < len(argv):
        word = argv[i]
        key = word.lower()
        if key.startswith("--"):
            key = key[1:]
        if key in _SWITCHES:
            attr, value = _SWITCHES[key]
            setattr(out, attr, value)
            i += 1
            continue
        if key not in _VALUED:
            raise UserError(f"htcd dagman: unknown argument {word!r} (condor_dagman's arguments: "
                            f"{' '.join(sorted(set(_VALUED) | set(_SWITCHES)))})")
        if i + 1 >= len(argv):
            raise UserError(f"htcd dagman: {word} needs a value")
        attr, kind = _VALUED[key]
        value = argv[i + 1]
        if kind == "int":
            try:
                setattr(out, attr, int(value))
            except ValueError:
                raise UserError(f"htcd dagman: {word} takes an integer, not {value!r}") from None
        elif kind == "list":
            getattr(out, attr).append(value)
        else:
            setattr(out, attr, value)
        i += 2
    if not out.dag_files:
        raise UserError("htcd dagman: no DAG file given (-Dag FILE)")
    return out
