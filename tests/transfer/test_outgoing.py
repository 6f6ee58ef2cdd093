"""Streamed output without a pool: what the starter leaves to stream and moves out of the sandbox,
what the shadow accepts from a stream (only the announced files, whole, never outside their
destinations) and that a broken or damaged stream leaves no file that looks complete."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from htcd.classad import ClassAd
from htcd.transfer import chunks, entries, outgoing
from htcd.transfer.entries import Inline
from htcd.transfer.paths import TransferError
from htcd.transfer.starter_side import collect_output
from htcd.wire.errors import WireError

CHUNK = chunks.CHUNK


def sparse(path: Path, size: int, head: bytes = b"HEAD") -> None:
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)


def parts(d: Path) -> list[Path]:
    return [p for p in d.rglob("*") if outgoing.PART in p.name]


def test_the_starter_leaves_big_files_to_stream_and_moves_them_out_of_the_sandbox(tmp_path: Path) -> None:
    box, execute = tmp_path / "box", tmp_path / "execute"
    (box / "results" / "deep").mkdir(parents=True)
    execute.mkdir()
    sparse(box / "big.bin", CHUNK + 1)
    (box / "small.txt").write_text("small")
    sparse(box / "results" / "deep" / "blob", 2 * CHUNK)
    (box / "results" / "r.txt").write_text("r")
    sparse(box / "_condor_stdout", CHUNK + 5)
    (box / "_condor_stderr").write_text("err")
    ad = ClassAd({"TransferOutput": "big.bin,small.txt,results"})
    files, missing, failure = collect_output(str(box), ad, {}, set(), set(), "slot1@ep", Inline(CHUNK, 1 << 30))
    assert failure is None and missing == []
    assert files["small.txt"]["data"] == b"small" and files["results/r.txt"]["data"] == b"r"
    assert files["big.bin"] == {"stream": True, "size": CHUNK + 1, "mode": 0o644, "local": "big.bin",
                                "src": "big.bin"}
    assert files["results/deep/blob"]["local"] == "results/deep/blob"
    staging = outgoing.Staging(str(execute), "slot1@ep")
    files, failure = staging.files(str(box), files, None)
    assert failure is None and "local" not in files["big.bin"] and files["big.bin"]["key"] == "out/big.bin"
    assert staging.std(str(box), "_condor_stderr", "stderr") == b"err"
    assert staging.std(str(box), "_condor_stdout", "stdout") == {"stream": True, "key": "stdout",
                                                                 "size": CHUNK + 5, "mode": 0o644}
    note = staging.note()
    assert note is not None and note["keys"] == ["out/big.bin", "out/results/deep/blob", "stdout"]
    assert note["bytes"] == 4 * CHUNK + 6 and note["root"].startswith(str(execute / outgoing.STAGING_PREFIX))
    root = Path(note["root"])
    assert (root / "out" / "results" / "deep" / "blob").stat().st_size == 2 * CHUNK
    assert not (box / "big.bin").exists() and not (box / "_condor_stdout").exists(), "moved, not copied"
    staging.discard()
    assert not root.exists()


def test_the_inline_budget_and_a_file_that_cannot_be_moved(tmp_path: Path) -> None:
    box = tmp_path / "box"
    box.mkdir()
    for name in ("a", "b", "c"):
        (box / name).write_bytes(b"x" * 8)
    files, _, _ = collect_output(str(box), ClassAd({}), {}, set(), set(), "ep", Inline(stream_over=10, budget=15))
    assert "data" in files["a"] and files["b"]["stream"] and files["c"]["stream"], "past the budget: streamed"
    (box / "b").unlink()
    staging = outgoing.Staging(str(tmp_path), "slot1@ep")
    files, failure = staging.files(str(box), files, None)
    assert failure and "(errno 2)" in failure["message"] and failure["subcode"] == 2 and "b" not in files
    staging.discard()
    # a stdout the job replaced with a link gives nothing back through it
    (box / "_condor_stdout").symlink_to(tmp_path / "box" / "a")
    assert outgoing.Staging(str(tmp_path), "ep").std(str(box), "_condor_stdout", "stdout") == b""


def stream_of(root: Path, keys: list[str], edit: Any = None, tail: Any = "done") -> outgoing.Frames:
    """The frames the startd sends for ``keys`` under ``root`` (``edit`` may change each frame;
    ``tail``: "done", a final map, or an exception once the files are sent)."""
    def frames(asked: list[str]) -> AsyncIterator[Any]:
        async def gen() -> AsyncIterator[Any]:
            count = size = 0
            for key in keys:
                fd = os.open(root / key, os.O_RDONLY)
                for frame in chunks.file_frames(fd, key, 0o644):
                    if "end" in frame:
                        count, size = count + 1, size + frame["size"]
                    yield edit(frame) if edit else frame
            if isinstance(tail, BaseException):
                raise tail
            yield chunks.done_frame(count, size) if tail == "done" else tail
        assert set(keys) <= set(asked), "the shadow asks for what it has a place for"
        return gen()
    return frames


@pytest.fixture
def staged(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "staged"
    (root / "out").mkdir(parents=True)
    (root / "out" / "big.bin").write_bytes(os.urandom(CHUNK + 100))
    (root / "stdout").write_bytes(b"o" * (CHUNK + 1))
    yield root


def job(iwd: Path, **attrs: str) -> Any:
    return {"Iwd": str(iwd), **attrs}.get


def result_for(root: Path) -> dict[str, Any]:
    return {"stdout": {"stream": True, "key": "stdout", "size": CHUNK + 1, "mode": 0o644},
            "files": {"big.bin": {"stream": True, "key": "out/big.bin", "size": CHUNK + 100, "mode": 0o640,
                                  "src": "big.bin"},
                      "note.txt": entries.file(b"note")}}


def test_streamed_output_lands_in_place_remapped_and_counted(tmp_path: Path, staged: Path) -> None:
    iwd = tmp_path / "iwd"
    (iwd / "sub").mkdir(parents=True)
    get = job(iwd, Out="job.out", TransferOutputRemaps="big.bin = sub/renamed.bin")
    n = asyncio.run(outgoing.write_output(get, result_for(staged), None, stream_of(staged, ["out/big.bin", "stdout"])))
    assert n == (2 * CHUNK + 101 + 4, 2 * CHUNK + 101)
    assert (iwd / "sub" / "renamed.bin").read_bytes() == (staged / "out" / "big.bin").read_bytes()
    assert (iwd / "job.out").read_bytes() == b"o" * (CHUNK + 1) and (iwd / "note.txt").read_bytes() == b"note"
    assert not (iwd / "big.bin").exists() and not parts(iwd)


def run_failing(iwd: Path, staged: Path, frames: outgoing.Frames) -> TransferError:
    with pytest.raises(TransferError) as exc:
        asyncio.run(outgoing.write_output(job(iwd, Out="job.out"), result_for(staged), None, frames))
    assert exc.value.code == 12
    assert not parts(iwd), "no temporary file is left"
    assert not (iwd / "big.bin").exists() and not (iwd / "job.out").exists() and not (iwd / "note.txt").exists()
    return exc.value


def test_a_damaged_truncated_or_hostile_stream_writes_nothing(tmp_path: Path, staged: Path) -> None:
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    keys = ["out/big.bin", "stdout"]

    def damage(frame: dict[str, Any]) -> dict[str, Any]:
        return {**frame, "sha256": "0" * 64} if frame.get("end") == "stdout" else frame

    exc = run_failing(iwd, staged, stream_of(staged, keys, edit=damage))
    assert isinstance(exc, outgoing.StreamBroken) and "stdout arrived damaged" in str(exc)
    exc = run_failing(iwd, staged, stream_of(staged, keys[:1], tail=WireError("the startd closed the connection")))
    assert isinstance(exc, outgoing.StreamBroken) and "closed the connection" in str(exc)

    def escape(frame: dict[str, Any]) -> dict[str, Any]:
        return {**frame, "file": "../../escape"} if "file" in frame else frame

    exc = run_failing(iwd, staged, stream_of(staged, keys, edit=escape))
    assert "would leave the sandbox" in str(exc) and not (tmp_path / "escape").exists()

    def other(frame: dict[str, Any]) -> dict[str, Any]:
        return {**frame, "file": "out/other"} if frame.get("file") == "stdout" else frame

    exc = run_failing(iwd, staged, stream_of(staged, keys, edit=other))
    assert "'out/other' is not one of the files announced" in str(exc)
    failed = {"error": "Transfer output files failure at execution point ep: reading big.bin: (errno 2) gone",
              "subcode": 2}
    exc = run_failing(iwd, staged, stream_of(staged, [], tail=failed))
    assert not isinstance(exc, outgoing.StreamBroken) and exc.subcode == 2 and "gone" in str(exc)


def test_a_planted_link_is_refused_before_anything_is_sent(tmp_path: Path, staged: Path) -> None:
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (iwd / "big.bin").symlink_to(victim)

    def never(keys: list[str]) -> AsyncIterator[Any]:
        raise AssertionError("nothing is fetched for a destination that cannot be written")

    with pytest.raises(TransferError, match=r"writing .*big.bin: \(errno 40\)") as exc:
        asyncio.run(outgoing.write_output(job(iwd), result_for(staged), None, never))
    assert exc.value.code == 12 and victim.read_text() == "keep" and not (iwd / "note.txt").exists()


def test_kept_output_streams_into_the_spool(tmp_path: Path, staged: Path) -> None:
    spool = tmp_path / "spool" / "1" / "0" / "cluster1.proc0.evicted"
    result = {"files": {"d": entries.directory(), "d/big.bin": {"stream": True, "key": "out/big.bin",
                                                                "size": CHUNK + 100, "mode": 0o600},
                        "small": entries.file(b"s")}}
    n = asyncio.run(outgoing.keep_evicted(str(spool), result, stream_of(staged, ["out/big.bin"])))
    assert n == (CHUNK + 101, CHUNK + 100)
    assert hashlib.sha256((spool / "d" / "big.bin").read_bytes()).digest() == \
        hashlib.sha256((staged / "out" / "big.bin").read_bytes()).digest()
    assert (spool / "small").read_bytes() == b"s" and not parts(spool)


def test_the_store_expires_and_startup_removes_leftovers(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = outgoing.Store(logging.getLogger("test"))
        root = tmp_path / ".outgoing_x"
        root.mkdir()
        note = store.add({"root": str(root), "keys": ["stdout"], "bytes": 5, "where": "ep"}, ttl=0.01)
        assert set(note) == {"id", "files", "bytes"} and note["files"] == 1
        deadline = asyncio.get_running_loop().time() + 30
        while root.exists() and asyncio.get_running_loop().time() < deadline:  # noqa: ASYNC110 - the store's timer removes it
            await asyncio.sleep(0.01)
        assert not root.exists() and store.take(note["id"]) is None

    asyncio.run(scenario())
    for name in (".outgoing_a", ".incoming_b", "dir_1"):
        (tmp_path / name).mkdir()
    assert outgoing.clean_orphans(str(tmp_path)) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir_1"]
