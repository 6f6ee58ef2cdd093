"""The pure parts of file transfer: remaps, input lists (files, directories both forms, URLs),
output collection (never through a link), output placement and the transfer decision."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from htcd.classad import ClassAd
from htcd.transfer import entries
from htcd.transfer.paths import TransferError
from htcd.transfer.remaps import RemapError, parse_remaps
from htcd.transfer.shadow_side import gather_input, output_targets, write_output
from htcd.transfer.starter_side import collect_output, fetch_urls, write_input


def test_remaps_parse_with_escapes() -> None:
    assert parse_remaps('"a = b; c.txt = out/c.txt"') == {"a": "b", "c.txt": "out/c.txt"}
    assert parse_remaps(r"we\;ird\=name = x\\y ;") == {"we;ird=name": r"x\y"}
    assert parse_remaps("") == {}
    with pytest.raises(RemapError, match="not 'name = destination'"):
        parse_remaps("a = b = c")
    with pytest.raises(RemapError, match="empty"):
        parse_remaps("a = ")


def _job(iwd: Path, **attrs: object) -> dict[str, object]:
    ad = {"Iwd": str(iwd), "Cmd": str(iwd / "run.sh"), "In": "/dev/null", **attrs}
    return ad


def test_input_directories_in_both_forms_and_urls(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(tmp_path / "run.sh", 0o755)
    data = tmp_path / "data"
    (data / "deep").mkdir(parents=True)
    (data / "a.txt").write_text("A")
    (data / "deep" / "b.txt").write_text("B")
    ad = _job(tmp_path, TransferInput="data, data/, https://example.org/get/x.tar?y=1")
    files = gather_input(ad.get)
    assert files["run.sh"]["mode"] & 0o777 == 0o755
    assert files["data"]["dir"] and files["data/a.txt"]["data"] == b"A" and files["data/deep/b.txt"]["data"] == b"B"
    assert files["a.txt"]["data"] == b"A" and files["deep"]["dir"] and files["deep/b.txt"]["data"] == b"B"
    assert files["x.tar"] == {"url": "https://example.org/get/x.tar?y=1"}
    box = tmp_path / "box"
    box.mkdir()
    urls = write_input(str(box), files)
    assert urls == [("x.tar", "https://example.org/get/x.tar?y=1")]
    assert (box / "data" / "deep" / "b.txt").read_text() == "B" and (box / "deep" / "b.txt").read_text() == "B"
    assert os.stat(box / "run.sh").st_mode & 0o777 == 0o755


def test_missing_input_and_oversized_input_are_refused(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("x")
    with pytest.raises(TransferError, match=r"nope\.txt.*No such file") as exc:
        gather_input(_job(tmp_path, TransferInput="nope.txt").get)
    assert exc.value.code == 13 and exc.value.subcode == 2
    (tmp_path / "big").write_bytes(b"x" * 2000)
    with pytest.raises(TransferError, match="more than the 1000 bytes") as big:
        gather_input(_job(tmp_path, TransferInput="big").get, limit=1000)
    assert big.value.code == 13


def test_input_names_from_the_ap_cannot_escape_the_sandbox(tmp_path: Path) -> None:
    with pytest.raises(TransferError, match="unsafe file name"):
        write_input(str(tmp_path), {"../evil": entries.file(b"x")})
    with pytest.raises(TransferError, match="unsafe file name"):
        write_input(str(tmp_path), {"/etc/evil": entries.file(b"x")})
    assert not (tmp_path.parent / "evil").exists()


def test_a_url_without_a_plugin_or_failing_names_the_reason(tmp_path: Path) -> None:
    with pytest.raises(TransferError, match="no transfer plugin for gopher URLs") as exc:
        fetch_urls(str(tmp_path), [("x", "gopher://h/x")], "slot1@ep", plugins={})
    assert exc.value.code == 13

    def broken(url: str, dest: object, uid: object = None, gid: object = None) -> None:
        raise OSError(f"{url}: HTTP error 404 Not Found")

    with pytest.raises(TransferError, match=r"using protocol http\. Details: .*404 Not Found"):
        fetch_urls(str(tmp_path), [("x", "http://h/x")], "slot1@ep", plugins={"http": broken})


def test_output_never_reads_through_a_link_the_job_made(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("shadow file")
    box = tmp_path / "box"
    (box / "results").mkdir(parents=True)
    (box / "out").symlink_to(secret)
    (box / "results" / "r.txt").write_text("R")
    (box / "results" / "leak").symlink_to(secret)
    (box / "new.txt").write_text("N")
    ad = ClassAd({"TransferOutput": "out"})
    files, missing, failure = collect_output(str(box), ad, {}, set(), set(), "slot1@ep")
    assert files == {} and missing == []
    assert failure and "out: (errno 40)" in failure["message"] and "symbolic link" in failure["message"]
    ad = ClassAd({"TransferOutput": "results,nothere.txt"})
    files, missing, failure = collect_output(str(box), ad, {}, set(), set(), "slot1@ep")
    assert files["results/r.txt"]["data"] == b"R" and "results/leak" not in files
    assert missing == ["nothere.txt"] and failure and "(errno 2) No such file or directory" in failure["message"]
    # without a list: new plain files only; the link is not one
    files, _, failure = collect_output(str(box), ClassAd({}), {}, {"results"}, set(), "slot1@ep")
    assert set(files) == {"new.txt"} and failure is None


def test_output_lands_in_iwd_or_remapped_and_never_through_a_planted_link(tmp_path: Path) -> None:
    iwd = tmp_path / "iwd"
    (iwd / "sub").mkdir(parents=True)
    victim = tmp_path / "victim"
    victim.write_text("keep")
    get = _job(iwd, Out="job.out", TransferOutputRemaps="a.txt = sub/renamed.txt; d = elsewhere").get
    result = {"stdout": b"hello", "files": {"a.txt": entries.file(b"A", src="a.txt"), "d": entries.directory(),
                                            "d/x": entries.file(b"X", 0o750)}}
    targets = [p for p, _ in output_targets(get, result)]
    assert targets == [str(iwd / "job.out"), str(iwd / "sub/renamed.txt"), str(iwd / "elsewhere"),
                       str(iwd / "d/x")] or str(iwd / "elsewhere/x") not in targets
    result = {"stdout": b"hello", "files": {"a.txt": entries.file(b"A", src="a.txt")}}
    assert write_output(get, result, None) == 6
    assert (iwd / "job.out").read_text() == "hello" and (iwd / "sub" / "renamed.txt").read_text() == "A"
    (iwd / "job.out").unlink()
    (iwd / "job.out").symlink_to(victim)
    with pytest.raises(TransferError, match=r"writing .*job.out: \(errno 40\)") as exc:
        write_output(get, result, None)
    assert exc.value.code == 12 and victim.read_text() == "keep"
    with pytest.raises(TransferError, match="unsafe file name"):
        write_output(get, {"files": {"../../escape": entries.file(b"x")}}, None)


def test_the_transfer_decision() -> None:
    def get(stf: str, fsd: str = "a.org"):
        return {"ShouldTransferFiles": stf, "FileSystemDomain": fsd}.get

    assert entries.wants_transfer(get("YES"), "a.org")
    assert not entries.wants_transfer(get("NO"), "b.org")
    assert not entries.wants_transfer(get("IF_NEEDED"), "A.org")
    assert entries.wants_transfer(get("IF_NEEDED"), "b.org")


def test_files_past_the_inline_budget_are_left_to_stream(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    (tmp_path / "in").mkdir()
    for name in "abcd":
        (tmp_path / "in" / name).write_bytes(name.encode() * 40)
    (tmp_path / "in" / "e").write_bytes(b"e" * 200)  # over stream_over: streams whatever the budget
    files = gather_input(_job(tmp_path, TransferInput="in").get, inline=entries.Inline(stream_over=100, budget=90))
    assert files["run.sh"]["data"] == b"#!/bin/sh\n"  # 10 bytes, first in order
    assert [files[f"in/{n}"].get("stream", False) for n in "abcde"] == [False, False, True, True, True]
    assert files["in/c"]["size"] == 40 and files["in/c"]["path"] == str(tmp_path / "in" / "c")
    assert files["in/a"]["data"] == b"a" * 40
