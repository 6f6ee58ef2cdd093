"""Which universes a pool offers: a third-party universe plugin runs jobs, a universe no execute
point offers keeps its jobs idle, and ``-better-analyze`` says so."""

from __future__ import annotations

import os

from pooltools import wait_for

PLUGIN = '''
import asyncio
import os
import signal

from htcd.hookspecs import hookimpl
from htcd.universe import ExitStatus, RunningJob, Universe


class TaggedJob(RunningJob):
    def __init__(self, proc):
        self.proc = proc
        self.pgid = proc.pid

    async def wait(self):
        code = await self.proc.wait()
        return ExitStatus(exit_code=code) if code >= 0 else ExitStatus(signal=-code)

    def signal(self, signum):
        try:
            os.killpg(self.pgid, signum)
        except ProcessLookupError:
            pass

    def kill(self):
        self.signal(signal.SIGKILL)


class Tagged(Universe):
    name = "tagged"

    def machine_attributes(self):
        return {"TaggedUniverseVersion": 2}

    async def start(self, ctx):
        env = {**ctx.environment, "TAGGED_BY": "the tagged universe"}
        with open(ctx.stdin, "rb") as i, open(ctx.stdout, "ab") as o, open(ctx.stderr, "ab") as e:
            proc = await asyncio.create_subprocess_exec(ctx.executable, *ctx.arguments, cwd=ctx.sandbox, env=env,
                                                        stdin=i, stdout=o, stderr=e, start_new_session=True)
        return TaggedJob(proc)


@hookimpl
def htcd_register_universes(registry):
    registry.add("tagged", Tagged)
'''


def install_plugin(pool) -> None:
    """A third-party package registered through the ``htcd`` entry-point group, as pip would."""
    site = pool.dir / "site"
    site.mkdir()
    (site / "tagged_universe.py").write_text(PLUGIN)
    dist = site / "tagged_universe-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tagged-universe\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[htcd]\ntagged = tagged_universe\n")
    pool.env["PYTHONPATH"] = str(site)


def test_plugin_universe_runs_and_docker_stays_idle(make_pool) -> None:
    pool = make_pool(start=False)
    install_plugin(pool)
    pool.start()
    abilities = pool.htcd("status", "-af", "StarterAbilityList", "TaggedUniverseVersion", "HasDocker").stdout
    assert abilities.splitlines()[0].split() == ["tagged,vanilla", "2", "undefined"]

    # two autoclusters (their Requirements differ, and so does request_memory): the idle docker job
    # must not hold up the tagged one
    docker = pool.submit("universe = docker\ndocker_image = debian:12\nexecutable = /bin/true\nlog = d.log\n"
                         "request_memory = 77M\nqueue\n", "d.sub")
    (pool.jobs_dir / "t.sh").write_text("#!/bin/sh\necho \"$TAGGED_BY\"\n")
    os.chmod(pool.jobs_dir / "t.sh", 0o755)
    tagged = pool.submit("universe = tagged\nexecutable = t.sh\noutput = t.out\nlog = t.log\nqueue\n", "t.sub")
    wait_for(lambda: (pool.jobs_dir / "t.out").exists() and (pool.jobs_dir / "t.out").read_text(), 60,
             "the tagged universe job's output")
    assert (pool.jobs_dir / "t.out").read_text() == "the tagged universe\n", "the plugin ran the job"
    wait_for(lambda: pool.job_ids() == [f"{docker}.0"], 60, "the tagged job to leave the queue")
    history = pool.htcd("history", f"{tagged}.0", "-l").stdout
    assert 'PluginUniverse = "tagged"' in history
    assert 'stringListIMember("tagged",TARGET.StarterAbilityList)' in history, "submit asks for the universe"

    # the negotiator has looked at the docker job by now (it was queued first); it stays idle
    assert pool.job_attr(f"{docker}.0", "JobStatus") == "1"
    assert "TARGET.HasDocker" in pool.htcd("q", f"{docker}.0", "-l").stdout
    report = pool.htcd("q", "-better-analyze", f"{docker}.0").stdout
    assert "no slot offers the docker universe" in report, report
    assert "the slots offer: tagged, vanilla" in report
    assert "Universe: the job needs the docker universe" in report
