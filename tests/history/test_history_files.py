"""Reading the history files without a pool: forwards and backwards across block boundaries and
rotated files, and the record form the schedd's history query sends."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcd.classad import ClassAd, ClassAdSyntaxError
from htcd.schedd import history
from htcd.schedd.history_query import wire_of


def test_forwards_is_backwards_reversed_across_blocks_and_rotations(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(history, "BLOCK", 89)  # records and banner lines straddle block boundaries
    path = str(tmp_path / "history")
    for i in range(50):
        history.append(path, [ClassAd({"Owner": "u", "ClusterId": i, "ProcId": 0, "Cmd": "y" * (i % 11)})],
                       max_size=1200, keep=5)
    assert len(history.rotated(path)) >= 2
    back = [ad.get_value("ClusterId") for ad in history.read(path)]
    fwd = [ad.get_value("ClusterId") for ad in history.read(path, forwards=True)]
    assert fwd == back[::-1] and fwd == list(range(50 - len(fwd), 50)) and len(fwd) > 20
    with open(path, "a") as f:
        f.write('Owner = "cut short')  # a record still being written is not read either way
    assert [ad.get_value("ClusterId") for ad in history.read(path, forwards=True)][-1] == 49


def test_wire_of_keeps_the_written_text_and_refuses_what_is_no_ad() -> None:
    ad = ClassAd({"A": "x = y", "B": 3})
    ad.set_expr("C", "B + 1")
    assert wire_of(ad.to_old()) == {"A": '"x = y"', "B": "3", "C": "B + 1"}
    with pytest.raises(ClassAdSyntaxError):
        wire_of("A = 1\nthis is no attribute\n")
