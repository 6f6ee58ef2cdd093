"""Which hierarchies the starter uses, from the mount table: the cpu hierarchy joins memory,
freezer and cpuacct on v1 (alone or co-mounted with cpuacct); v2 needs the memory controller."""

from __future__ import annotations

from pathlib import Path

from htcd.starter import cgroup as cgroups


def mounts(tmp: Path, text: str) -> str:
    path = tmp / "mounts"
    path.write_text(text)
    return str(path)


def test_v1_separate_cpu_hierarchy(tmp_path: Path) -> None:
    table = ("cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n"
             "cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0\n"
             "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n"
             "cgroup /sys/fs/cgroup/freezer cgroup rw,relatime,freezer 0 0\n"
             "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n")
    layout = cgroups.detect(mounts(tmp_path, table))
    assert layout is not None and layout.version == 1
    assert layout.mounts == {"cpu": "/sys/fs/cgroup/cpu", "cpuacct": "/sys/fs/cgroup/cpuacct",
                             "memory": "/sys/fs/cgroup/memory", "freezer": "/sys/fs/cgroup/freezer"}


def test_v1_cpu_comounted_with_cpuacct(tmp_path: Path) -> None:
    table = ("cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,cpu,cpuacct 0 0\n"
             "cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n")
    layout = cgroups.detect(mounts(tmp_path, table))
    assert layout is not None
    assert layout.mounts["cpu"] == layout.mounts["cpuacct"] == "/sys/fs/cgroup/cpu,cpuacct"
    group = cgroups.JobCgroup(layout, "htcd", "dir_1_1_1")
    assert group.paths["cpu"] == "/sys/fs/cgroup/cpu,cpuacct/htcd/dir_1_1_1" and group.has_cpu()


def test_v1_without_memory_is_unusable(tmp_path: Path) -> None:
    assert cgroups.detect(mounts(tmp_path, "cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\n")) is None


def test_v2_needs_the_memory_controller(tmp_path: Path) -> None:
    root = tmp_path / "cg2"
    root.mkdir()
    (root / "cgroup.controllers").write_text("cpuset cpu io pids\n")
    table = f"cgroup2 {root} cgroup2 rw 0 0\n"
    assert cgroups.detect(mounts(tmp_path, table)) is None
    (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    layout = cgroups.detect(mounts(tmp_path, table))
    assert layout is not None and layout.version == 2 and layout.mounts == {"": str(root)}
