"""Reading a daemon's address file: cached while the file is the same, read again when a
restarted daemon replaces it, None when it is gone or empty."""

from __future__ import annotations

import os
from pathlib import Path

from htcd.wire.locate import read_address_file


def _write(path: Path, text: str) -> None:
    tmp = path.with_suffix(".new")
    tmp.write_text(text)
    os.replace(tmp, path)  # as a daemon writes it


def test_the_address_follows_the_file(tmp_path: Path) -> None:
    path = tmp_path / ".collector_address"
    assert read_address_file(str(path)) is None
    _write(path, "<127.0.0.1:4001>\nhtcd 0.1.0\n")
    assert str(read_address_file(str(path))) == "<127.0.0.1:4001>"
    assert str(read_address_file(str(path))) == "<127.0.0.1:4001>"  # from the cache
    _write(path, "<127.0.0.1:4002>\nhtcd 0.1.0\n")  # the collector restarted on another port
    assert str(read_address_file(str(path))) == "<127.0.0.1:4002>"
    path.write_text("<127.0.0.1:4003>\n")  # rewritten in place, another size or time
    assert str(read_address_file(str(path))) == "<127.0.0.1:4003>"
    path.unlink()
    assert read_address_file(str(path)) is None
    _write(path, "\n")  # not written yet
    assert read_address_file(str(path)) is None
    assert read_address_file(None) is None and read_address_file("") is None
