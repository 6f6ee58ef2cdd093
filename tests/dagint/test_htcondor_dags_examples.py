"""DAGs written by HTCondor's ``htcondor-dags`` package for its documented examples, run to the
end through ``htcd submit_dag`` on a real pool.

The examples (their DAG-building code, restated here with the package's API):
``examples/basic_diamond/make_dag.py`` and ``examples/delayed_diamond/make_{top,analysis}_dag.py``
of the htcondor-dags repository, and the Mandelbrot DAG of HTCondor's tutorial
``docs/apis/python-bindings/tutorials/DAG-Creation-And-Submission.ipynb``.  Their programs
(``split_words.py``, ``count_words.py``, ``combine_counts.py``, ``goatbrot``, ``montage``) do not
exist here: each is replaced by a tiny shell script of the same name doing the file work the
next step needs (split a word list, count, combine; write a tile, concatenate the tiles).
htcondor-dags imports the 24.x ``htcondor`` module, so the DAGs are written by one subprocess
running with ``.venv/htcondor24`` (the delayed diamond's POST script writes its sub-DAG the same way).
basic_diamond's ``child`` and ``dag.write`` are spelled ``child_layer`` and ``write_dag`` as in the
package's 0.2.0 release that the dev extra installs.  The delayed diamond's top DAG is written,
as its make_top_dag.py says, by ``htcondor.dags`` (the package merged into the 24.x bindings):
htcondor-dags 0.2.0 names the SUBDAG node ``analysis:0`` but its edge ``analysis``, a DAG that
HTCondor's parser refuses as htcd's does.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pooltools import Pool

from tests.dagint.dagjob import history_exit, out_text, submit_dag, wait_done, write

ROOT = Path(__file__).resolve().parent.parent.parent
ORACLE_PATH = ROOT / ".venv" / "htcondor24"

WRITER = r'''
import itertools, sys
from pathlib import Path
import htcondor
import htcondor_dags as dags

out = Path(sys.argv[1])

# examples/basic_diamond/make_dag.py
NUM_SPLITS = 10
dag = dags.DAG()
split_words = dag.layer(name="split_words", submit_description=htcondor.Submit({
    "executable": "split_words.py", "arguments": str(NUM_SPLITS), "transfer_input_files": "words.txt",
    "output": "split_words.out", "error": "split_words.err"}))
count_words = split_words.child_layer(name="count_words", submit_description=htcondor.Submit({
    "executable": "count_words.py", "arguments": "$(word_set)", "transfer_input_files": "words_$(word_set).txt",
    "output": "count_words_$(word_set).out", "error": "count_words_$(word_set).err"}),
    vars=[{"word_set": str(n)} for n in range(NUM_SPLITS)])
count_words.child_layer(name="combine_counts", submit_description=htcondor.Submit({
    "executable": "combine_counts.py",
    "transfer_input_files": ", ".join(f"counts_{n}.txt" for n in range(NUM_SPLITS)),
    "output": "combine_counts.out", "error": "combine_counts.err"}))
dags.write_dag(dag, out / "basic_diamond")

# examples/delayed_diamond/make_top_dag.py, with "from htcondor import dags" as it has
from htcondor import dags as merged_dags
top = merged_dags.DAG()
split = top.layer(name="split_words", submit_description=htcondor.Submit({
    "executable": "split_words.py", "transfer_input_files": "words.txt",
    "output": "split_words.out", "error": "split_words.err"}),
    post=merged_dags.Script(executable="make_analysis_dag.py"))
split.child_subdag(name="analysis", dag_file="analysis.dag")
merged_dags.write_dag(top, out / "delayed_diamond", dag_file_name="top_level.dag")

# the tutorial's Mandelbrot DAG: 2 x 2 tiles, then the montage
def make_tile_vars(num_tiles_per_side, width=3):
    width_per_tile = width / num_tiles_per_side
    centers = [width_per_tile * (n + 0.5 - (num_tiles_per_side / 2)) for n in range(num_tiles_per_side)]
    return [dict(w=width_per_tile, x=x, y=-y, tile_x=str(tx).rjust(5, "0"), tile_y=str(ty).rjust(5, "0"))
            for (ty, y), (tx, x) in itertools.product(enumerate(centers), repeat=2)]
tile_vars = make_tile_vars(2)
tile_description = htcondor.Submit(
    executable="goatbrot",
    arguments="-i 10000 -c $(x),$(y) -w $(w) -s 500,500 -o tile_$(tile_x)-$(tile_y).ppm",
    log="mandelbrot.log", output="goatbrot.out.$(tile_x)_$(tile_y)", error="goatbrot.err.$(tile_x)_$(tile_y)",
    request_cpus="1", request_memory="128MB", request_disk="1GB")
inputs = [f'tile_{d["tile_x"]}-{d["tile_y"]}.ppm' for d in tile_vars]
montage_description = htcondor.Submit(
    executable="montage", arguments=f'{" ".join(inputs)} -mode Concatenate -tile 2x2 mandelbrot.png',
    transfer_input_files=", ".join(inputs), log="mandelbrot.log", output="montage.out", error="montage.err",
    request_cpus="1", request_memory="128MB", request_disk="1GB")
mandel = dags.DAG()
tiles = mandel.layer(name="tile", submit_description=tile_description, vars=tile_vars)
tiles.child_layer(name="montage", submit_description=montage_description)
dags.write_dag(mandel, out / "mandelbrot")
'''

# examples/delayed_diamond/make_analysis_dag.py, run as the split step's POST script
ANALYSIS_WRITER = r'''
import glob, sys
sys.path.insert(0, ORACLE)
from pathlib import Path
import htcondor
import htcondor_dags as dags
num_chunks = len(glob.glob("words_*.txt"))
analysis_dag = dags.DAG()
count_words = analysis_dag.layer(name="count_words", submit_description=htcondor.Submit({
    "executable": "count_words.py", "arguments": "$(word_set)", "transfer_input_files": "words_$(word_set).txt",
    "output": "count_words_$(word_set).out", "error": "count_words_$(word_set).err"}),
    vars=[{"word_set": str(n)} for n in range(num_chunks)])
count_words.child_layer(name="combine_counts", submit_description=htcondor.Submit({
    "executable": "combine_counts.py",
    "transfer_input_files": ", ".join(f"counts_{n}.txt" for n in range(num_chunks)),
    "output": "combine_counts.out", "error": "combine_counts.err"}))
dags.write_dag(analysis_dag, Path.cwd(), dag_file_name="analysis.dag")
'''

# stand-ins for the examples' programs
SPLIT_SH = ('#!/bin/sh\nn=${1:-4}\ni=0\nwhile [ $i -lt $n ]; do\n'
            '  awk -v n=$n -v i=$i "NR % n == i" words.txt > words_$i.txt\n  i=$((i + 1))\ndone\n')
COUNT_SH = '#!/bin/sh\nwc -w < words_$1.txt > counts_$1.txt\n'
COMBINE_SH = '#!/bin/sh\ncat counts_*.txt | awk "{s += \\$1} END {print s}" > total.txt\n'
GOATBROT_SH = '#!/bin/sh\nwhile [ "$1" != "-o" ]; do shift; done\necho P3 > "$2"\n'
MONTAGE_SH = '#!/bin/sh\nfor f in tile_*.ppm; do cat "$f"; done > mandelbrot.png\n'
WORDS = "".join(f"word{i}\n" for i in range(40))


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (ORACLE_PATH / "htcondor").is_dir():
        pytest.skip("the htcondor 24 wheel is not in .venv/htcondor24 (make .venv/.dev)")
    if importlib.util.find_spec("htcondor_dags") is None:
        pytest.skip("htcondor-dags is not installed (the dev extra has it)")
    out = tmp_path_factory.mktemp("dags")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ORACLE_PATH), *sys.path[1:]]), CONDOR_CONFIG="/dev/null")
    proc = subprocess.run([sys.executable, "-c", WRITER, str(out)], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    for name in ("basic_diamond", "delayed_diamond"):
        write(out / name, {"words.txt": WORDS, "split_words.py.sh": SPLIT_SH, "count_words.py.sh": COUNT_SH,
                           "combine_counts.py.sh": COMBINE_SH})
    write(out / "mandelbrot", {"goatbrot.sh": GOATBROT_SH, "montage.sh": MONTAGE_SH})
    for script in out.rglob("*.sh"):
        script.rename(script.with_suffix(""))  # the programs' own names (split_words.py, goatbrot)
    analysis = out / "delayed_diamond" / "make_analysis_dag.py"
    analysis.write_text(f"#!{sys.executable}\nORACLE = {str(ORACLE_PATH)!r}\n{ANALYSIS_WRITER}")
    os.chmod(analysis, 0o755)
    return out


def _run(pool: Pool, where: Path, dag: str) -> None:
    cluster = submit_dag(pool, where, dag)
    wait_done(pool, where, dag, cluster, timeout=240)
    assert history_exit(pool, cluster) == ["4", "0"], out_text(where, dag)[-3000:]
    assert out_text(where, dag).rstrip().endswith("EXITING WITH STATUS 0")


def test_basic_diamond(dag_pool: Pool, written: Path) -> None:
    where = written / "basic_diamond"
    _run(dag_pool, where, "dagfile.dag")
    assert (where / "total.txt").read_text().strip() == "40", "every word counted once"


def test_delayed_diamond_with_its_subdag_written_by_a_post_script(dag_pool: Pool, written: Path) -> None:
    where = written / "delayed_diamond"
    _run(dag_pool, where, "top_level.dag")
    assert (where / "analysis.dag").exists() and (where / "analysis.dag.dagman.out").exists()
    assert (where / "total.txt").read_text().strip() == "40"


def test_mandelbrot_tutorial(dag_pool: Pool, written: Path) -> None:
    where = written / "mandelbrot"
    _run(dag_pool, where, "dagfile.dag")
    assert (where / "mandelbrot.png").read_text() == "P3\n" * 4, "the four tiles, then the montage"
