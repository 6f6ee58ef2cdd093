"""Starting the DAGMan job: arguments, the DAG, the lock file (recovery), rescue DAGs, settings."""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import time
from typing import TextIO

from htcd.config import Config
from htcd.dagman import DagError, parse_dag
from htcd.dagman.errors import DagWarning
from htcd.dagman.multi import check_one_directory, combine_dags, one_config, rescue_base
from htcd.dagman.rescue import apply_rescue, last_rescue, rescue_name
from htcd.dagman.settings import DagmanSettings
from htcd.dagrun import files
from htcd.dagrun.args import parse_args
from htcd.dagrun.engine import Engine
from htcd.dagrun.journal import JournalState, read_journal
from htcd.errors import UserError

EXIT_ERROR = 1


def dagman_job_id() -> tuple[int, int]:
    """The DAGMan job's own id from CONDOR_ID (set by the schedd); (0, 0) when run by hand."""
    text = os.environ.get("CONDOR_ID", "")
    cluster, _, proc = text.partition(".")
    try:
        return int(cluster), int(proc or 0)
    except ValueError:
        return 0, 0


def start_dagman(argv: list[str], cfg: Config, err: TextIO) -> int:
    args = parse_args(argv)
    if args.load_save:
        raise UserError(f"-load_save {args.load_save}: htcd's DAGMan writes and loads no save point files "
                        "(SAVE_POINT_FILE)")
    dag_files = list(args.dag_files)
    dag_file = dag_files[0]  # the primary: it names dagman.out, the lock, the nodes log, the rescue DAGs
    if args.use_dag_dir and os.path.dirname(dag_file):
        try:
            check_one_directory(dag_files)
        except DagError as exc:
            raise UserError(str(exc)) from None
        os.chdir(os.path.dirname(dag_file))
        dag_files = [os.path.basename(f) for f in dag_files]
        dag_file = dag_files[0]
    for pairs in args.insert_env:
        os.environ.update(insert_env_pairs(pairs))
    base_dir = os.getcwd()
    started = time.perf_counter()
    try:
        dags = [parse_dag(f, cwd=base_dir) for f in dag_files]
        dag_config = one_config(dags)
    except DagError as exc:
        raise UserError(f"cannot run the DAG: {exc}") from None
    except OSError as exc:
        raise UserError(f"cannot read the DAG file {dag_file}: {exc.strerror}") from None
    # the DAG's CONFIG, else -config, else what the .condor.sub put in the environment
    config_file = (os.path.join(base_dir, dag_config) if dag_config else args.config
                   or os.environ.get("_CONDOR_DAGMAN_CONFIG_FILE") or None)
    try:
        settings = DagmanSettings.load(cfg.get, config_file, args.overrides())
    except (DagError, ValueError) as exc:
        raise UserError(f"DAGMan settings: {exc}") from None
    try:  # combined once the settings are known: DAGMAN_MUNGE_NODE_NAMES may be in the CONFIG file
        dag = combine_dags(dags, munge=settings.munge_node_names)
    except DagError as exc:
        raise UserError(f"cannot run the DAG: {exc}") from None
    paths = files.dag_paths(dag_file, args.lock_file, args.outfile_dir, settings.default_node_log,
                            out=os.environ.get("_CONDOR_DAGMAN_LOG") or None)
    max_log = os.environ.get("_CONDOR_MAX_DAGMAN_LOG", "0").strip()
    if max_log not in ("", "0"):
        settings.warnings.append(DagWarning(f"MAX_DAGMAN_LOG = {max_log}: htcd's DAGMan never rotates "
                                            f"{paths.out} (as with 0)"))
    if args.no_submit:  # parse and check only: nothing is submitted, no file is written
        seconds = time.perf_counter() - started
        rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(f"{dag_file}: {len(dag.nodes)} nodes, {dag.edge_count()} edges parsed in {seconds:.2f} s; "
              f"max RSS {rss_kb} KB")
        return 0
    recovering = files.take_lock(paths.lock) or args.do_recovery
    try:
        journal_state = read_journal(paths.journal) if recovering else JournalState()
        if not recovering:
            _apply_rescue(dag, rescue_base(dag_files), args.do_rescue_from, settings, err, args.rescue_file)
            open(paths.nodes_log, "w").close()  # a fresh run starts a fresh nodes log
        cluster, proc = dagman_job_id()
        batch_name = args.batch_name or f"{os.path.basename(dag_file)}+{cluster}"
        engine = Engine(dag, dag_file, base_dir, cfg, settings, paths, recovering=recovering,
                        journal_state=journal_state, dagman_id=(cluster, proc), batch_name=batch_name,
                        dag_priority=args.priority, schedd_address=None,
                        always_run_post=settings.always_run_post if args.always_run_post is None
                        else args.always_run_post, dag_files=dag_files)
        code = asyncio.run(engine.main())
    except BaseException:
        # a crash leaves the lock file: the next start recovers
        raise
    if not engine.shutdown:  # after SIGTERM the lock file stays, so the restarted job recovers
        with contextlib.suppress(FileNotFoundError):
            os.unlink(paths.lock)
    return code


def insert_env_pairs(text: str) -> dict[str, str]:
    """``-insert_env``: ``K=V;K=V``, or any delimiter given as the first character when it is
    not a letter, digit or ``_`` (``|K=V|K2=V2``)."""
    delim = ";"
    if text and not (text[0].isalnum() or text[0] == "_"):
        delim, text = text[0], text[1:]
    out: dict[str, str] = {}
    for item in text.split(delim):
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UserError(f"-insert_env: {item!r} is not NAME=VALUE")
        out[name.strip()] = value
    return out


def _apply_rescue(dag: object, dag_file: str, number: int, settings: DagmanSettings, err: TextIO,
                  rescue_file: str | None = None) -> None:
    from htcd.dagman.model import Dag

    assert isinstance(dag, Dag)
    path: str | None
    if rescue_file:
        path = rescue_file
        if not os.path.exists(path):
            raise UserError(f"-RescueFile: rescue DAG {path} does not exist")
    elif number > 0:
        path = rescue_name(dag_file, number)
        if not os.path.exists(path):
            raise UserError(f"-DoRescueFrom {number}: rescue DAG {path} does not exist")
    elif settings.auto_rescue:
        path = last_rescue(dag_file, settings.max_rescue_num)
    else:
        path = None
    if path is None:
        return
    with open(path) as f:
        text = f.read()
    try:
        apply_rescue(dag, text, path)
    except DagError as exc:
        raise UserError(f"cannot apply rescue DAG: {exc}") from None
    print(f"Running rescue DAG {path}", file=err)
