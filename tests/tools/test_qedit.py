"""`htcd qedit`: typed values, protected attributes refused with the reason, nothing half-written."""

from __future__ import annotations

import os

from htcd.schedd.attrcheck import check_edit


def test_check_edit_rules() -> None:
    assert check_edit("JobPrio", "5") is None
    assert check_edit("RequestMemory", "MemoryUsage * 2") is None  # an expression is evaluated later
    assert "must be an integer" in (check_edit("JobPrio", '"high"') or "")
    assert "must be a number" in (check_edit("RequestCpus", '"two"') or "")
    assert "identity that submitted" in (check_edit("owner", '"bob"') or "")
    assert "not a ClassAd expression" in (check_edit("Color", '"unterminated') or "")
    assert "not an attribute name" in (check_edit("9lives", "1") or "")


def test_qedit_on_a_real_pool(pool) -> None:
    (pool.jobs_dir / "t.sh").write_text("#!/bin/sh\nexit 0\n")
    os.chmod(pool.jobs_dir / "t.sh", 0o755)
    cid = pool.submit("executable = t.sh\nrequirements = false\nqueue 2\n")
    out = pool.htcd("qedit", str(cid), "JobPrio", "5", "Color", '"red"').stdout
    assert 'Set attribute "JobPrio" to 5 for 2 job(s).' in out
    assert pool.htcd("q", str(cid), "-af", "JobPrio", "Color").stdout == "5 red\n5 red\n"
    for attr, value, reason in (("JobPrio", '"high"', "must be an integer"),
                                ("Owner", '"mallory"', "the owner comes from the identity")):
        proc = pool.htcd("qedit", f"{cid}.0", "Color", '"blue"', attr, value, check=False)
        assert proc.returncode == 1 and reason in proc.stderr and "Traceback" not in proc.stderr
    # the refused edit changed nothing, not even the valid attribute beside it
    assert pool.htcd("q", f"{cid}.0", "-af", "Color", "JobPrio").stdout == "red 5\n"
    missing = pool.htcd("qedit", "999", "JobPrio", "1", check=False)
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
