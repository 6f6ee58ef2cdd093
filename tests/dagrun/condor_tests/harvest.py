"""Copy HTCondor's own DAGMan tests (src/condor_tests/job_dagman_*) that run on Linux without
HTCondor's tools: each test's DAG, submit files and scripts, and the x_dagman_* helpers they name.
SOURCES records the commit and each file's source path.

    python tests/dagrun/condor_tests/harvest.py [/work/.mirror/htcondor+htcondor/repo]
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

TESTS = ["basic", "unlessexit", "retry", "pre_skip-A", "pre_skip-B", "script_args", "final-G",
         "final-J", "node_prio"]
# files of other tests whose names start like a chosen one's
EXCLUDE = ("job_dagman_retry-B", "job_dagman_retry_recovery", "job_dagman_abort-A-node-fail-",
           "job_dagman_basic-", "job_dagman_prepost-")
KEEP = ("job_dagman_basic-node.cmd", "job_dagman_prepost-node.cmd", "job_dagman_prepost-posthello.template",
        "job_dagman_prepost-prehello.template")
HERE = Path(__file__).resolve().parent


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def main() -> None:
    repo = sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/htcondor+htcondor/repo"
    commit = git(repo, "rev-parse", "HEAD").strip()
    names = git(repo, "ls-tree", "--name-only", "HEAD", "src/condor_tests/").split()
    chosen: list[str] = []
    for test in TESTS:
        prefix = f"src/condor_tests/job_dagman_{test}"
        chosen += [n for n in names if (n.startswith(prefix + ".") or n.startswith(prefix + "-")
                                        or n.startswith(prefix + "_")) and not n.endswith(".run")
                   and (Path(n).name in KEEP or not Path(n).name.startswith(EXCLUDE))]
    helpers: set[str] = set()
    for name in chosen:
        helpers.update(re.findall(r"(?:x_dagman_[\w.-]+|[\w.-]+\.pl)\b", git(repo, "show", f"HEAD:{name}")))
    chosen += sorted(f"src/condor_tests/{h}" for h in helpers if f"src/condor_tests/{h}" in names)
    lines = [f"# HTCondor {commit}: the DAGMan tests {', '.join(TESTS)}"]
    for name in chosen:
        target = HERE / Path(name).name
        target.write_text(git(repo, "show", f"HEAD:{name}"))
        if name.endswith((".pl", ".sh", ".py")):
            target.chmod(0o755)
        lines.append(f"{Path(name).name}\t{name}")
    (HERE / "SOURCES").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
