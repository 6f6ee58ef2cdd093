"""A cluster sent as a submit digest: every proc the schedd builds from the digest and the item
data is the proc a plain submit of the same description builds ($(Process), $(Item), queue
in/from/matching, $(Step), $ENV, configuration macros); $RANDOM_INTEGER is drawn once, at submit,
as in HTCondor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from htcd.submit import parse_submit
from htcd.submit.digest import make_factory, proc_builder

CONFIG = {"FULL_HOSTNAME": "ap.example.org", "JOB_DEFAULT_REQUESTMEMORY": "256"}
ENV = {"HOME": "/home/u", "PATH": "/usr/bin", "PROJECT": "alpha"}


def _both(text: str, tmp_path: Path, cid: int = 17) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(plain full ads, ads rebuilt from the digest after a trip through JSON) for every proc."""
    def build(kind: str):
        desc = parse_submit(text, str(tmp_path / "job.sub"), submit_dir=str(tmp_path), env=ENV)
        args = dict(submit_dir=str(tmp_path), owner="u", qdate=1_700_000_000, config_get=CONFIG.get, env=ENV,
                    submit_file="job.sub", plugin_universes=())
        if kind == "plain":
            common, procs = desc.make_jobs(cid, **args)
            return [{**common, **p} for p in procs]
        factory = make_factory(desc, cid, **args)
        assert factory is not None
        digest, items = json.loads(json.dumps(factory.digest)), json.loads(json.dumps(factory.items))
        jobs = proc_builder(digest, items, cid)
        assert jobs.total == factory.total
        return [{**factory.cluster_ad, **jobs.build(n)} for n in range(jobs.total)]

    return build("plain"), build("factory")


@pytest.mark.parametrize("queue", [
    "queue 7",
    "queue 2 in (a, b c, d)",
    "queue name, size from (\n  x 1\n  y 2\n  z 3\n)",
    "queue 3 name from items.txt",
    "queue input matching files *.dat",
    "queue item in [1:3] (p, q, r, s)",
])
def test_digest_procs_equal_plain_procs(tmp_path: Path, queue: str) -> None:
    (tmp_path / "items.txt").write_text("one\ntwo\nthree\n")
    for n in ("b.dat", "a.dat", "c.dat"):
        (tmp_path / n).write_text("")
    text = ("executable = /bin/echo\n"
            "arguments = $(Process) $(Item:none) $(Step) $(ItemIndex) $(name:-) $(size:0) $(input:)\n"
            "output = out.$(Cluster).$(Process)\nerror = err.$(Process)\nlog = f.log\n"
            "environment = \"HOME=$ENV(HOME) P=$ENV(PROJECT)\"\n"
            "+Where = \"$(FULL_HOSTNAME)\"\n+Index = $(Process) * 2\n"
            "request_memory = $(Process) + 100\nmax_idle = 2\n" + queue + "\n")
    plain, digest = _both(text, tmp_path)
    assert len(plain) == len(digest) > 1
    assert plain == digest


def test_random_integer_is_drawn_once(tmp_path: Path) -> None:
    text = ("executable = /bin/true\n+Seed = $RANDOM_INTEGER(1, 1000000000)\n"
            "+PerProc = $(Process)\nmax_materialize = 3\nqueue 50\n")
    _, digest = _both(text, tmp_path)
    assert len({ad["Seed"] for ad in digest}) == 1, "HTCondor: the same value for every proc of a factory"
    assert [ad["PerProc"] for ad in digest] == [str(p) for p in range(50)]


def test_without_limits_or_with_two_queues_no_factory(tmp_path: Path) -> None:
    args = dict(submit_dir=str(tmp_path), owner="u", qdate=1, config_get=CONFIG.get, env=ENV)
    assert make_factory(parse_submit("executable = /bin/true\nqueue 5\n"), 1, **args) is None
    two = parse_submit("executable = /bin/true\nmax_idle = 1\nqueue 2\narguments = x\nqueue 2\n")
    assert make_factory(two, 1, **args) is None


def test_factory_jobs_by_default(tmp_path: Path) -> None:
    """SUBMIT_FACTORY_JOBS_BY_DEFAULT: every submit of more than one proc is a factory (condor_submit)."""
    args = dict(submit_dir=str(tmp_path), owner="u", qdate=1, config_get=CONFIG.get, env=ENV, by_default=True)
    made = make_factory(parse_submit("executable = /bin/true\narguments = $(Process)\nqueue 5\n"), 1, **args)
    assert made is not None and made.total == 5 and "JobMaterializeMaxIdle" not in made.cluster_ad
    assert make_factory(parse_submit("executable = /bin/true\nqueue 1\n"), 1, **args) is None
