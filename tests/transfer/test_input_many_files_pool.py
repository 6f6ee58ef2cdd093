"""Input of many files, more in all than one claim activation can carry, in a real pool: the files
that do not fit the activation's inline budget follow it as a chunk stream, so the input as a whole
has no size limit (before, a job with over 252 MiB of files under 4 MiB each was held, code 13)."""

from __future__ import annotations

import os

from pooltools import peak_rss_mb, wait_for

ONE_SLOT = {"NUM_CPUS": "1"}
MIB = 1024 * 1024
FILES, SIZE = 80, 4 * MIB  # 320 MiB of files no bigger than a chunk each
INLINE = 3  # files that fit the 16 MiB inline budget after the executable (in order); the others stream

CHECK = """#!/bin/sh
ls in | wc -l
stat -c %s in/* | awk '{s += $1} END {print s}'
for f in in/*; do head -c 4 "$f"; tail -c 4 "$f"; done; echo
"""


def run_to_completion(pool, name: str, script: str, submit: str) -> None:
    """Run ``script`` as a one-job cluster (its stderr in NAME.err) and check it exited 0."""
    d = pool.jobs_dir
    (d / f"{name}.sh").write_text(script)
    os.chmod(d / f"{name}.sh", 0o755)
    pool.submit(f"executable = {name}.sh\nerror = {name}.err\nlog = {name}.log\nshould_transfer_files = YES\n"
                f"{submit}request_disk = 1\nqueue\n", name=f"{name}.sub")
    wait_for(lambda: pool.job_ids() == [], 240,
             f"the job to finish\n{pool.log('ShadowLog')[-3000:]}\n{pool.log('StartLog')[-3000:]}")
    assert pool.htcd("history", "-af", "JobStatus", "ExitCode").stdout.split() == ["4", "0"], \
        (d / f"{name}.err").read_text()


def test_input_over_the_activation_limit_streams_and_the_job_runs(make_pool) -> None:
    pool = make_pool(ONE_SLOT, slots=1)
    d = pool.jobs_dir
    (d / "in").mkdir()
    markers = []
    for i in range(FILES):
        mark = f"{i:03d}".encode()
        with open(d / "in" / f"f{i:03d}", "wb") as f:  # sparse: a marker at each end
            f.write(b"<" + mark)
            f.truncate(SIZE)
            f.seek(SIZE - 4)
            f.write(mark + b">")
        markers.append(f"<{i:03d}{i:03d}>")
    run_to_completion(pool, "check", CHECK, "output = check.out\ntransfer_input_files = in\n")
    assert (d / "check.out").read_text().split() == [str(FILES), str(FILES * SIZE), "".join(markers)]
    streamed = (FILES - INLINE) * SIZE
    assert f"sent {streamed} bytes of input as a chunk stream" in pool.log("ShadowLog")
    pids = pool.daemon_pids()
    for daemon in ("SCHEDD", "STARTD"):
        assert peak_rss_mb(pids[daemon]) < 200, f"{daemon} peaked at {peak_rss_mb(pids[daemon]):.0f} MB"
    assert not [p for p in (pool.local / "execute").iterdir() if p.name.startswith(".incoming_")]


MAKE = """#!/bin/sh
mkdir out
i=0
while [ $i -lt {n} ]; do
  f=out/f$(printf %03d $i)
  printf '<%03d' $i > $f
  truncate -s {size} $f
  printf '%03d>' $i | dd of=$f bs=1 seek=$(({size} - 4)) conv=notrunc status=none
  i=$((i + 1))
done
"""


def test_output_of_many_files_comes_back_with_bounded_memory(make_pool) -> None:
    """The same on the way back: 320 MiB of 4 MiB files; those past the reply's inline budget stay
    at the execute point and are fetched as a chunk stream."""
    pool = make_pool(ONE_SLOT, slots=1)
    d = pool.jobs_dir
    run_to_completion(pool, "make", MAKE.format(n=FILES, size=SIZE), "transfer_output_files = out\n")
    got = sorted((d / "out").iterdir())
    assert [p.name for p in got] == [f"f{i:03d}" for i in range(FILES)]
    for i, p in enumerate(got):
        assert p.stat().st_size == SIZE
        with open(p, "rb") as f:
            assert f.read(4) == f"<{i:03d}".encode()
            f.seek(SIZE - 4)
            assert f.read() == f"{i:03d}>".encode()
    pids = pool.daemon_pids()
    for daemon in ("SCHEDD", "STARTD"):
        assert peak_rss_mb(pids[daemon]) < 200, f"{daemon} peaked at {peak_rss_mb(pids[daemon]):.0f} MB"
