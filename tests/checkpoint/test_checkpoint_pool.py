"""Self-checkpointing jobs on a real pool (docs/checkpoint.md), with the manual's example: a job
that counts to N, keeps its counter in a file and exits 85 every K steps.

It runs to the end restarted in place (one execute event, the same slot at each start, its
output continued), each checkpoint kept in the spool; vacated after its second checkpoint it
resumes from that checkpoint on its next run, not from 0; the spooled checkpoint is gone once
the job has left the queue."""

from __future__ import annotations

import os
import re
from pathlib import Path

from pooltools import Pool, wait_for

N, K = 9, 3
COUNTER = """#!/bin/sh
v=0
[ -e count.ckpt ] && v=$(cat count.ckpt)
echo "start $v on $_CONDOR_SLOT"
{gate}
while [ $v -lt {n} ]; do
  sleep 0.2
  v=$((v + 1))
  echo $v > count.ckpt
  if [ $((v % {k})) -eq 0 ] && [ $v -lt {n} ]; then exit 85; fi
done
echo "done $v"
"""


def events(log: Path) -> list[str]:
    text = log.read_text() if log.exists() else ""
    return [line[:3] for line in text.splitlines() if line[:3].isdigit() and " (" in line]


def submit(pool: Pool, name: str, body: str, extra: str) -> int:
    script = pool.jobs_dir / f"{name}.sh"
    script.write_text(body)
    script.chmod(0o755)
    return pool.submit(f"executable = {name}.sh\noutput = {name}.out\nerror = {name}.err\nlog = {name}.log\n"
                       f"should_transfer_files = YES\n{extra}\nqueue\n", name=f"{name}.sub")


def wait_event(pool: Pool, name: str, code: str, timeout: float = 120) -> None:
    log = pool.jobs_dir / f"{name}.log"
    wait_for(lambda: code in events(log), timeout, lambda: f"event {code} in {log.name}: {events(log)}\n"
             f"{pool.log('ShadowLog')[-3000:]}\n{pool.log('StarterLog.slot1_1')[-3000:]}")


def checkpoint_dir(pool: Pool, cluster: int) -> Path:
    return pool.local / "spool" / str(cluster) / "0" / f"cluster{cluster}.proc0.checkpoint"


def history(pool: Pool, cluster: int, *attrs: str) -> list[str]:
    out = pool.htcd("history", str(cluster), "-af", *attrs).stdout.split()
    assert len(out) == len(attrs), out
    return out


def test_a_job_checkpoints_and_restarts_in_place_to_the_end(make_pool) -> None:
    pool = make_pool(slots=None)
    cluster = submit(pool, "count", COUNTER.format(gate="", n=N, k=K),
                     "checkpoint_exit_code = 85\ntransfer_output_files = count.ckpt")
    wait_event(pool, "count", "005")
    starts = re.findall(r"^start (\d+) on (\S+)$", (pool.jobs_dir / "count.out").read_text(), re.M)
    assert [int(v) for v, _ in starts] == [0, 3, 6], starts  # each restart went on from the checkpoint
    assert len({slot for _, slot in starts}) == 1, f"restarted in place, on one slot: {starts}"
    assert (pool.jobs_dir / "count.out").read_text().rstrip().endswith(f"done {N}")
    assert (pool.jobs_dir / "count.ckpt").read_text().strip() == str(N)
    assert events(pool.jobs_dir / "count.log").count("001") == 1, "restarts in place are not new executions"
    assert events(pool.jobs_dir / "count.log").count("004") == 0
    number, starts_n, committed = history(pool, cluster, "CheckpointNumber", "NumJobStarts", "CommittedTime")
    assert (int(number), int(starts_n)) == (1, 1)  # checkpoints 0 and 1 (at 3 and 6), one start
    assert int(committed) >= 1
    shadow = pool.log("ShadowLog")
    assert f"({cluster}.0) checkpoint 0 stored in the spool" in shadow
    assert f"({cluster}.0) checkpoint 1 stored in the spool" in shadow
    wait_for(lambda: not checkpoint_dir(pool, cluster).exists(), 30, "the checkpoint leaving the spool")


def test_a_vacated_job_resumes_from_its_last_checkpoint(make_pool) -> None:
    pool = make_pool(slots=None)
    os.chmod(pool.jobs_dir, 0o777)  # the job (run as nobody) leaves its mark here
    waiting = pool.jobs_dir / "waiting"
    # after its second checkpoint (at 6) the job waits to be vacated, once
    gate = f'if [ $v -eq 6 ] && [ ! -e {waiting} ]; then touch {waiting}; while true; do sleep 0.1; done; fi'
    cluster = submit(pool, "vac", COUNTER.format(gate=gate, n=N, k=K),
                     "+WantFTOnCheckpoint = true\n+SuccessCheckpointExitCode = 85\n"
                     "transfer_checkpoint_files = count.ckpt\ntransfer_output_files = count.ckpt")
    wait_for(waiting.exists, 120, lambda: f"the job's second checkpoint\n{pool.log('ShadowLog')[-3000:]}")
    ckpt = checkpoint_dir(pool, cluster)
    current = (ckpt / "CURRENT").read_text().strip()
    assert current == "1"
    assert (ckpt / current / "count.ckpt").read_text().strip() == "6"  # the checkpoint is in the spool
    assert "start 3" in (ckpt / current / "_condor_stdout").read_text()
    pool.htcd("vacate_job", f"{cluster}.0")
    wait_event(pool, "vac", "004")
    wait_event(pool, "vac", "005")
    out = (pool.jobs_dir / "vac.out").read_text()
    starts = [int(v) for v in re.findall(r"^start (\d+) on ", out, re.M)]
    assert starts == [0, 3, 6], f"the second run began at the checkpoint, not at 0: {out}"
    assert out.rstrip().endswith(f"done {N}")
    assert events(pool.jobs_dir / "vac.log").count("001") == 2
    number, starts_n = history(pool, cluster, "CheckpointNumber", "NumJobStarts")
    assert (int(number), int(starts_n)) == (1, 2)
    wait_for(lambda: not ckpt.exists(), 30, "the checkpoint leaving the spool")
