"""The htcd_transfer_plugins hook: the built-in file and http(s) plugins, a broken plugin
disabled, and the file plugin reading as the job's user when the starter is root."""

from __future__ import annotations

import io
import os
import pwd
import shutil
import tempfile
from pathlib import Path

import pytest
from htcd_plugins import transfer_file

from htcd.hookspecs import hookimpl
from htcd.plugins import PluginManager


def test_builtin_schemes_are_registered_through_entry_points() -> None:
    schemes = PluginManager().load_entry_points().transfer_plugins()
    assert {"file", "http", "https"} <= set(schemes)


def test_a_plugin_returning_nonsense_is_disabled_and_others_kept() -> None:
    class Broken:
        @hookimpl
        def htcd_transfer_plugins(self) -> object:
            return {"no scheme!": print}

    class Fine:
        @hookimpl
        def htcd_transfer_plugins(self) -> object:
            class Fetcher:
                def __call__(self, url: str, dest: io.BufferedWriter, uid: object = None, gid: object = None) -> None:
                    dest.write(b"x")
            return {"S3": Fetcher}

    pm = PluginManager()
    pm.register(Broken(), "broken")
    pm.register(Fine(), "fine")
    schemes = pm.transfer_plugins()
    assert "broken" in pm.disabled and "not a URL scheme" in pm.disabled["broken"]
    buf = io.BytesIO()
    schemes["s3"]("s3://b/k", buf)
    assert buf.getvalue() == b"x"


def test_file_plugin_copies_and_names_what_failed(tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("local data")
    buf = io.BytesIO()
    transfer_file.fetch(f"file://{tmp_path}/in.txt", buf)
    assert buf.getvalue() == b"local data"
    with pytest.raises(OSError, match=r"cannot read .*nope"):
        transfer_file.fetch(f"file://{tmp_path}/nope", io.BytesIO())
    with pytest.raises(ValueError, match="of this host"):
        transfer_file.fetch("file://elsewhere/x", io.BytesIO())


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the plugin must read as the job's user")
def test_file_plugin_reads_as_the_jobs_user() -> None:
    nobody = pwd.getpwnam("nobody")
    root = Path(tempfile.mkdtemp(prefix="htcd-transfer-", dir="/tmp"))
    try:
        os.chmod(root, 0o755)
        (root / "secret").write_text("root only")
        os.chmod(root / "secret", 0o600)
        (root / "public").write_text("anyone")
        os.chmod(root / "public", 0o644)
        with tempfile.TemporaryFile() as dest:
            transfer_file.fetch(f"file://{root}/public", dest, uid=nobody.pw_uid, gid=nobody.pw_gid)
            dest.seek(0)
            assert dest.read() == b"anyone"
        with tempfile.TemporaryFile() as dest, pytest.raises(OSError, match="Permission denied"):
            transfer_file.fetch(f"file://{root}/secret", dest, uid=nobody.pw_uid, gid=nobody.pw_gid)
    finally:
        shutil.rmtree(root)
