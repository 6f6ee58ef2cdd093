"""The schedd's history over the wire (QUERY_SCHEDD_HISTORY): ``htcd history -name/-pool`` and
``htcd.api.Schedd.history`` on a real pool whose history rotates at every job, asked from a
config that cannot read the HISTORY file; the file order (read locally) is the reference."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pooltools import Pool

from htcd.schedd import history
from htcd.testing import wait_for
from htcd.wire.locate import read_address_file

JOBS = 5


@pytest.fixture(scope="module")
def hpool(module_pool) -> Pool:
    """Five single-job clusters run and leave; every record lands in a new history file (it
    rotates past one byte), so a reader must go through the rotated files."""
    pool = module_pool({"NUM_CPUS": "2", "MAX_HISTORY_LOG": "1", "MAX_HISTORY_ROTATIONS": "20"})
    for i in range(JOBS):
        pool.submit(f"executable = /bin/true\nMy.Nth = {i}\nqueue\n", f"j{i}.sub")
    wait_for(lambda: not pool.schedd_jobs(None, ["ClusterId"]), 120, lambda: "the jobs to leave\n"
             + pool.log("SchedLog")[-2000:])
    return pool


def local_order(pool: Pool) -> list[str]:
    """Job ids newest first, read from the schedd's own files (what the wire answer must equal)."""
    path = pool.tool_config().get("HISTORY")
    return [f"{ad.get_value('ClusterId')}.{ad.get_value('ProcId')}" for ad in history.read(path)]


@pytest.fixture(scope="module")
def remote_env(hpool: Pool, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The pool's tool config, but with HISTORY pointing at a file that does not exist."""
    elsewhere = tmp_path_factory.mktemp("nohistory") / "history"
    yield {**hpool.env, "_CONDOR_HISTORY": str(elsewhere)}


def run(pool: Pool, env: dict[str, str], *args: str, check: bool = True) -> tuple[int, str, str]:
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "htcd", "history", *args], env=env, capture_output=True,
                          text=True, timeout=120, cwd=pool.jobs_dir)
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.returncode, proc.stdout, proc.stderr


def ids(out: str) -> list[str]:
    return [".".join(line.split()) for line in out.splitlines() if line.strip()]


def schedd_name(pool: Pool) -> str:
    ads = wait_for(lambda: pool.collector_ads("Scheduler", ["Name"]), 60, "the schedd's ad in the collector")
    return str(ads[0]["Name"]).strip('"')


def test_the_history_rotated_into_several_files(hpool: Pool) -> None:
    path = hpool.tool_config().get("HISTORY")
    assert path and len(history.rotated(path)) >= JOBS - 1
    assert len(local_order(hpool)) == JOBS


def test_name_lists_newest_first_without_the_local_file(hpool: Pool, remote_env: dict[str, str]) -> None:
    code, _out, err = run(hpool, remote_env, "-af", "ClusterId", "ProcId", check=False)
    assert code != 0 and "no history file" in err  # this config cannot read the history itself
    expected = local_order(hpool)
    name = schedd_name(hpool)
    _, out, _ = run(hpool, remote_env, "-name", name, "-af", "ClusterId", "ProcId")
    assert ids(out) == expected
    _, out, _ = run(hpool, remote_env, "-name", name, "-backwards", "-af", "ClusterId", "ProcId")
    assert ids(out) == expected
    _, out, _ = run(hpool, remote_env, "-name", name, "-forwards", "-af", "ClusterId", "ProcId")
    assert ids(out) == expected[::-1]
    _, out, _ = run(hpool, remote_env, "-name", name, "-match", "2", "-af", "ClusterId", "ProcId")
    assert ids(out) == expected[:2]
    _, out, _ = run(hpool, remote_env, "-name", name, "-limit", "2", "-forwards", "-af", "ClusterId", "ProcId")
    assert ids(out) == expected[::-1][:2]
    _, out, _ = run(hpool, remote_env, "-name", name, "-constraint", "Nth % 2 == 0", "-af", "Nth")
    assert sorted(int(x) for x in out.split()) == [0, 2, 4]
    _, out, _ = run(hpool, remote_env, "-name", name, "-since", expected[3], "-af", "ClusterId", "ProcId")
    assert ids(out) == expected[:3]  # stops before the job named
    cluster = expected[2].split(".")[0]
    _, out, _ = run(hpool, remote_env, "-name", name, "-since", f"ClusterId == {cluster}", "-af", "ClusterId",
                    "ProcId")
    assert ids(out) == expected[:2]
    _, out, _ = run(hpool, remote_env, "-name", name, "-scanlimit", "3", "-constraint", "true", "-af",
                    "ClusterId", "ProcId")
    assert ids(out) == expected[:3]
    _, out, _ = run(hpool, remote_env, "-name", name, "-completedsince", "0", "-af", "ClusterId")
    assert len(ids(out)) == JOBS  # every job completed after time 0
    _, out, _ = run(hpool, remote_env, "-name", name, "-completedsince", "time() + 3600", "-af", "ClusterId")
    assert ids(out) == []  # the newest job completed before then: the scan stops at once
    _, out, _ = run(hpool, remote_env, "-name", name, "-long", "-match", "1")
    assert "ClaimId" not in out and f"ClusterId = {expected[0].split('.')[0]}" in out
    _, out, _ = run(hpool, remote_env, "-name", name)  # the table
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["ID", "OWNER"] and len(lines) == JOBS + 1
    assert [line.split()[0] for line in lines[1:]] == expected


def test_pool_from_another_config(hpool: Pool, tmp_path: Path) -> None:
    """A config that knows nothing of the pool but the collector it is given."""
    tokens = tmp_path / "tokens"
    tokens.mkdir()
    hpool.htcd("token", "create", "-identity", "root", "-scope", "READ", "-token", str(tokens / "reader"))
    other = tmp_path / "other_config"
    other.write_text(f"CONDOR_HOST = 127.0.0.1\nLOCAL_DIR = {tmp_path / 'local'}\nSEC_TOKEN_DIRECTORY = {tokens}\n"
                     f"AUTH_SSL_CLIENT_CAFILE = {hpool.local / 'ssl' / 'trust_domain_ca.pem'}\n")
    env = {**hpool.env, "HTCD_CONFIG": str(other)}
    collector = read_address_file(str(hpool.local / "log" / ".collector_address"))
    assert collector is not None
    host_port = f"{collector.host}:{collector.port}"
    _, out, _ = run(hpool, env, "-pool", host_port, "-af", "ClusterId", "ProcId")
    assert ids(out) == local_order(hpool)
    _, out, _ = run(hpool, env, "-pool", host_port, "-name", schedd_name(hpool), "-match", "1", "-af", "ClusterId",
                    "ProcId")
    assert ids(out) == local_order(hpool)[:1]


def test_mistakes_are_refused_with_the_reason(hpool: Pool, remote_env: dict[str, str]) -> None:
    name = schedd_name(hpool)
    code, _out, err = run(hpool, remote_env, "-name", name, "-constraint", "ClusterId ==", check=False)
    assert code != 0 and "bad constraint" in err and "Traceback" not in err
    code, _out, err = run(hpool, remote_env, "-name", name, "-since", "(", check=False)
    assert code != 0 and "bad -since" in err and "Traceback" not in err
    code, _out, err = run(hpool, remote_env, "-name", "no-such-schedd", check=False)
    assert code != 0 and "no schedd named 'no-such-schedd'" in err and "Traceback" not in err
    code, _out, err = run(hpool, remote_env, "-name", name, "-forwards", "-since", "1.0", check=False)
    assert code != 0 and "-forwards cannot be combined with -since" in err  # condor_history's words
    code, _out, err = run(hpool, remote_env, "-name", name, "-file", "/x", check=False)
    assert code != 0 and "-file reads a local file" in err


def test_api_history_asks_the_schedd(hpool: Pool, remote_env: dict[str, str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import htcd.api

    for k, v in remote_env.items():
        if k.startswith(("_CONDOR_", "HTCD_")):
            monkeypatch.setenv(k, v)
    htcd.api.reload_config()
    try:
        schedd = htcd.api.Schedd()
        expected = local_order(hpool)
        ads = schedd.history(None, ["ClusterId", "ProcId", "Nth"])
        assert [f"{a['ClusterId']}.{a['ProcId']}" for a in ads] == expected
        assert all(set(a.keys()) == {"ClusterId", "ProcId", "Nth"} for a in ads)
        assert len(schedd.history("true", ["ClusterId"], match=2)) == 2
        assert [a["Nth"] for a in schedd.history("Nth >= 3", ["Nth"])] in ([3, 4], [4, 3])
        first_cluster = int(expected[-1].split(".")[0])
        newest_two = schedd.history(None, ["ClusterId"], since=int(expected[2].split(".")[0]))
        assert [a["ClusterId"] for a in newest_two] == [int(e.split(".")[0]) for e in expected[:2]]
        assert len(schedd.history(None, ["ClusterId"], since=expected[1])) == 1
        assert schedd.history(None, ["ClusterId"], since=f"ClusterId == {first_cluster}")[-1]["ClusterId"] != \
            first_cluster
        whole = schedd.history(f"ClusterId == {first_cluster}", [], match=1)
        assert whole[0]["Cmd"] == "/bin/true" and "ClaimId" not in whole[0]
        with pytest.raises(htcd.api.HTCondorException, match="bad constraint"):
            schedd.history("ClusterId ==")
    finally:
        monkeypatch.undo()
        htcd.api.reload_config()


def test_without_read_the_schedd_refuses(make_pool, monkeypatch: pytest.MonkeyPatch) -> None:
    pool = make_pool({"NUM_CPUS": "1", "DENY_READ_SCHEDD": "*"}, slots=0)
    code, _out, err = run(pool, pool.env, "-name", schedd_name(pool), check=False)
    assert code != 0 and "Traceback" not in err
    assert "READ" in err and "DENY_READ_SCHEDD = * matched" in err, err
    import htcd.api

    monkeypatch.setenv("HTCD_CONFIG", pool.env["HTCD_CONFIG"])
    htcd.api.reload_config()
    try:
        with pytest.raises(htcd.api.HTCondorException, match=r"DENY_READ_SCHEDD = \* matched"):
            htcd.api.Schedd().history()
    finally:
        monkeypatch.undo()
        htcd.api.reload_config()
