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


def test_local_file_takes_the_same_options(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``htcd history -file`` (no schedd): -forwards, -match, -since, -completedsince, -scanlimit."""
    from htcd.cli.main import main

    path = str(tmp_path / "history")
    history.append(path, [ClassAd({"Owner": "u", "ClusterId": i, "ProcId": 0, "CompletionDate": 1000 + i})
                          for i in range(1, 7)])
    monkeypatch.setenv("HTCD_CONFIG", "/dev/null")

    def run(*args: str) -> list[int]:
        assert main(["history", "-file", path, *args, "-af", "ClusterId"]) == 0
        return [int(x) for x in capsys.readouterr().out.split()]

    assert run() == [6, 5, 4, 3, 2, 1]
    assert run("-forwards", "-match", "2") == [1, 2]
    assert run("-since", "4.0") == [6, 5]
    assert run("-since", "3") == [6, 5, 4]
    assert run("-completedsince", "1004") == [6, 5]
    assert run("-scanlimit", "3", "-constraint", "ClusterId % 2 == 0") == [6, 4]
    assert main(["history", "-file", path, "-since", "1", "-forwards"]) != 0
    assert "-forwards cannot be combined with -since" in capsys.readouterr().err
