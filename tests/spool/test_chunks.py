"""Chunk streams (htcd/transfer/chunks.py): files larger than a frame travel whole and checked,
memory stays at a chunk or two, and a hostile stream can neither escape the receiving directory
nor pass a damaged file off as received."""

from __future__ import annotations

import hashlib
import os
import tracemalloc
from pathlib import Path

import pytest

from htcd.client.spool import local_frames
from htcd.transfer import chunks
from htcd.transfer.paths import TransferError


def receive(root: Path, frames: list[dict] | object) -> chunks.Receiver:
    receiver = chunks.Receiver(*chunks.beneath(str(root)), what="test")
    try:
        for frame in frames:  # type: ignore[attr-defined]
            assert receiver.feed(frame) is None
    finally:
        receiver.close()
    return receiver


def sparse(path: Path, size: int) -> str:
    """A big file with a little data at both ends (no disk used for the rest); its sha256."""
    with open(path, "wb") as f:
        f.write(b"head")
        f.truncate(size)
        f.seek(size - 4)
        f.write(b"tail")
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def test_tree_of_files_and_directories_arrives_whole(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "data" / "deep").mkdir(parents=True)
    (src / "data" / "a.txt").write_bytes(b"a" * (chunks.CHUNK * 2 + 5))  # three frames of data
    (src / "data" / "deep" / "b.bin").write_bytes(os.urandom(1000))
    os.chmod(src / "data" / "deep" / "b.bin", 0o750)
    dest = tmp_path / "dest"
    dest.mkdir()
    frames = [*local_frames(str(src / "data"), "data"), chunks.done_frame(2, chunks.CHUNK * 2 + 1005)]
    assert sum("data" in f for f in frames) == 4
    got = receive(dest, frames)
    assert got.done and got.files == 2 and got.received == ["data/a.txt", "data/deep/b.bin"]
    assert (dest / "data" / "a.txt").read_bytes() == (src / "data" / "a.txt").read_bytes()
    assert (dest / "data" / "deep" / "b.bin").read_bytes() == (src / "data" / "deep" / "b.bin").read_bytes()
    assert (dest / "data" / "deep" / "b.bin").stat().st_mode & 0o777 == 0o750


def test_damaged_file_is_refused_naming_it(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"x" * 100)
    frames = list(local_frames(str(tmp_path / "f"), "f"))
    frames[1] = {"data": b"y" * 100}  # same size, other bytes
    (tmp_path / "d").mkdir()
    with pytest.raises(TransferError, match="f arrived damaged"):
        receive(tmp_path / "d", frames)
    short = list(local_frames(str(tmp_path / "f"), "f"))
    del short[1]
    with pytest.raises(TransferError, match="damaged"):
        receive(tmp_path / "d", short)


@pytest.mark.parametrize("name", ["../escape", "/etc/passwd", "a/../../escape", ""])
def test_names_that_leave_the_root_are_refused(tmp_path: Path, name: str) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(TransferError, match="unsafe file name"):
        receive(tmp_path / "d", [{"file": name, "mode": 0o644, "size": 0}])
    assert not (tmp_path / "escape").exists()


def test_a_link_in_the_root_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "d" / "sub").symlink_to(tmp_path / "outside")
    (tmp_path / "d" / "leaf").symlink_to(tmp_path / "outside" / "victim")
    for name in ("sub/x", "leaf"):
        with pytest.raises(TransferError, match="symbolic link"):
            receive(tmp_path / "d", [{"file": name, "mode": 0o644, "size": 0}])
    assert list((tmp_path / "outside").iterdir()) == []


def test_frames_out_of_order_are_refused(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(TransferError, match="outside a file"):
        receive(tmp_path / "d", [{"data": b"x"}])
    with pytest.raises(TransferError, match="in the middle of a"):
        receive(tmp_path / "d", [{"file": "a", "mode": 0o644, "size": 1}, {"file": "b", "mode": 0o644, "size": 1}])
    with pytest.raises(TransferError, match="1 arrived whole"):
        receive(tmp_path / "d", [{"file": "a", "mode": 0o644, "size": 0}, {"end": "a", "size": 0,
                                 "sha256": hashlib.sha256().hexdigest()}, {"done": True, "files": 2}])
    with pytest.raises(TransferError, match="at most"):
        receive(tmp_path / "d", [{"file": "a", "mode": 0o644, "size": 0}, {"data": b"x" * (chunks.CHUNK + 1)}])


def test_memory_stays_bounded_for_a_file_far_larger_than_a_chunk(tmp_path: Path) -> None:
    size = 96 * 1024 * 1024
    digest = sparse(tmp_path / "big", size)
    (tmp_path / "d").mkdir()
    tracemalloc.start()
    try:
        got = receive(tmp_path / "d", local_frames(str(tmp_path / "big"), "big"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got.bytes == size and got.received == ["big"]
    assert peak < 3 * chunks.CHUNK, f"peak {peak} bytes for a {size}-byte file"
    h = hashlib.sha256()
    with open(tmp_path / "d" / "big", "rb") as f:
        while block := f.read(1 << 22):
            h.update(block)
    assert h.hexdigest() == digest
