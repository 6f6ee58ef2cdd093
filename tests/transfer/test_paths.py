"""Path safety, unit level: names from transfer lists, sandbox-relative opens that follow no
link, and a root daemon writing and reading only as the job's owner could."""

from __future__ import annotations

import errno
import os
import pwd
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from htcd.transfer.paths import (
    Owner,
    TransferError,
    is_url,
    mkdir_as_owner,
    open_as_owner,
    open_beneath,
    safe_relpath,
)

ROOT = os.geteuid() == 0


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A temp dir on a path every user may search (pytest's own is root's alone)."""
    path = Path(tempfile.mkdtemp(prefix="htcd-transfer-", dir="/tmp"))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path)


def _nobody() -> Owner:
    pw = pwd.getpwnam("nobody")
    return Owner(pw.pw_uid, pw.pw_gid, frozenset(os.getgrouplist("nobody", pw.pw_gid)))


@pytest.mark.parametrize("name", ["../x", "a/../../x", "/etc/passwd", "", "..", "a/..", "x\0y"])
def test_names_leaving_the_sandbox_are_refused(name: str) -> None:
    with pytest.raises(TransferError, match="unsafe file name"):
        safe_relpath(name)


def test_safe_names_are_normalised() -> None:
    assert safe_relpath("a//b/./c") == "a/b/c"
    assert safe_relpath("dir/") == "dir"


def test_urls_are_told_from_file_names() -> None:
    assert is_url("https://example.org/x") and is_url("file:///tmp/x") and is_url("s3+x://b/k")
    assert not is_url("data/x") and not is_url("a/b://c")


def test_open_beneath_follows_no_link(tmp_path: Path) -> None:
    (tmp_path / "target").write_text("secret")
    box = tmp_path / "box"
    box.mkdir()
    (box / "out").symlink_to(tmp_path / "target")
    (box / "sub").symlink_to(tmp_path)
    with pytest.raises(OSError) as leaf:
        open_beneath(str(box), "out", os.O_RDONLY)
    assert leaf.value.errno == errno.ELOOP and "symbolic link" in str(leaf.value)
    with pytest.raises(OSError) as mid:
        open_beneath(str(box), "sub/target", os.O_RDONLY)
    assert mid.value.errno in (errno.ELOOP, errno.ENOTDIR)
    with pytest.raises(OSError):
        open_beneath(str(box), "sub/new", os.O_WRONLY | os.O_CREAT, make_parents=True)
    assert not (tmp_path / "new").exists()


def test_writing_refuses_a_planted_link_and_leaves_its_target_alone(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (tmp_path / "out.txt").symlink_to(victim)
    with pytest.raises(OSError) as exc:
        open_as_owner(str(tmp_path / "out.txt"), None, write=True)
    assert exc.value.errno == errno.ELOOP
    assert victim.read_text() == "precious"


def test_reading_follows_links_as_the_owner_would(tmp_path: Path) -> None:
    (tmp_path / "real").write_text("data")
    (tmp_path / "link").symlink_to("real")
    fd = open_as_owner(str(tmp_path / "link"), None, write=False)
    with os.fdopen(fd) as f:
        assert f.read() == "data"


@pytest.mark.skipif(not ROOT, reason="needs root: checks a root daemon acting for an unprivileged owner")
def test_root_writes_only_where_the_owner_may(open_dir: Path) -> None:
    tmp_path = open_dir
    owner = _nobody()
    mine = tmp_path / "mine"
    mine.mkdir()
    os.chown(mine, owner.uid, owner.gid)
    fd = open_as_owner(str(mine / "new.txt"), owner, write=True)
    os.close(fd)
    assert (mine / "new.txt").stat().st_uid == owner.uid, "a new file belongs to the owner"
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o755)  # root's
    with pytest.raises(OSError) as exc:
        open_as_owner(str(locked / "x"), owner, write=True)
    assert exc.value.errno == errno.EACCES and not (locked / "x").exists()
    (locked / "root.txt").write_text("root's")
    os.chmod(locked / "root.txt", 0o644)
    with pytest.raises(OSError):
        open_as_owner(str(locked / "root.txt"), owner, write=True)
    assert (locked / "root.txt").read_text() == "root's", "a refused write must not truncate"
    # a directory link the owner planted leads only where the owner could go
    (mine / "etc").symlink_to(locked)
    with pytest.raises(OSError):
        open_as_owner(str(mine / "etc" / "passwd"), owner, write=True)
    with pytest.raises(OSError):
        mkdir_as_owner(str(mine / "etc" / "d"), owner)
    mkdir_as_owner(str(mine / "d"), owner)
    assert stat.S_ISDIR((mine / "d").stat().st_mode) and (mine / "d").stat().st_uid == owner.uid


@pytest.mark.skipif(not ROOT, reason="needs root: checks a root daemon acting for an unprivileged owner")
def test_root_reads_only_what_the_owner_may(open_dir: Path) -> None:
    tmp_path = open_dir
    owner = _nobody()
    secret = tmp_path / "secret"
    secret.write_text("root only")
    os.chmod(secret, 0o600)
    with pytest.raises(OSError) as exc:
        open_as_owner(str(secret), owner, write=False)
    assert exc.value.errno == errno.EACCES
    hidden = tmp_path / "hidden"
    hidden.mkdir(mode=0o700)
    (hidden / "open.txt").write_text("world readable in a closed directory")
    os.chmod(hidden / "open.txt", 0o644)
    with pytest.raises(OSError):
        open_as_owner(str(hidden / "open.txt"), owner, write=False)
    # through a link the owner made, no better
    home = tmp_path / "home"
    home.mkdir()
    os.chown(home, owner.uid, owner.gid)
    (home / "s").symlink_to(secret)
    with pytest.raises(OSError):
        open_as_owner(str(home / "s"), owner, write=False)
