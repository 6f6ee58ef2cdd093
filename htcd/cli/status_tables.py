"""The tables ``htcd status`` prints by default, laid out as condor_status lays them out.

Each view names the attributes it needs (the query's projection), renders its rows and, for slots,
schedds and submitters, the totals block.  Widths follow condor_status writing to a pipe: a column
is at least its HTCondor width and grows to its widest cell.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from htcd.classad import ClassAd
from htcd.cli.output import Column, Left, duration, plain_value, render_table, short_date

# The slot states condor_status totals, in its column order (HTCondor's "Drained" is the Drain column).
SLOT_STATES = ("Owner", "Claimed", "Unclaimed", "Matched", "Preempting", "Drained", "Backfill")
STATE_LETTERS = {"Owner": "O", "Unclaimed": "U", "Matched": "M", "Claimed": "C", "Preempting": "P",
                 "Shutdown": "S", "Delete": "X", "Backfill": "F", "Drained": "D"}
ACTIVITY_LETTERS = {"Idle": "i", "Busy": "b", "Retiring": "r", "Vacating": "v", "Suspended": "s",
                    "Benchmarking": "e", "Killing": "k"}
BUSY_STATES = ("Claimed", "Matched", "Preempting")
UNKNOWN = "[??]"


def _str(ad: ClassAd, name: str, default: str = "") -> str:
    v = plain_value(ad, name)
    return v if isinstance(v, str) else default


def _num(ad: ClassAd, name: str) -> float | None:
    v = plain_value(ad, name)
    return v if isinstance(v, (int, float)) else None


def _int_cell(v: float | None, width: int) -> str:
    """``%<width>d``; an undefined value leaves the cell blank, as condor_status does."""
    return f"{int(v):{width}d}" if v is not None else ""


def _fixed(v: float | None, spec: str, alt: str = "") -> str:
    return format(v, spec) if v is not None else Left(alt)


def activity_time(ad: ClassAd) -> str:
    """Time in the current activity, measured against the ad's own clock (MyCurrentTime, else the
    collector's LastHeardFrom), never the reader's."""
    now = _num(ad, "MyCurrentTime")
    if now is None:
        now = _num(ad, "LastHeardFrom")
    since = _num(ad, "EnteredCurrentActivity")
    if now is None or since is None:
        return "[Unknown]"
    return duration(max(0.0, now - since))


# ------------------------------------------------------------------------------- totals

@dataclass
class SlotTotals:
    """condor_status's slot totals: per key (Arch/OpSys, or the platform for -compact) a count per
    state; ads without a key or with an unknown state are counted as malformed."""

    rows: dict[str, dict[str, int]] = field(default_factory=dict)
    all: dict[str, int] = field(default_factory=lambda: dict.fromkeys(("Total", *SLOT_STATES), 0))
    malformed: int = 0

    def add(self, key: str | None, state: str, child: bool = False) -> None:
        if key is None or state not in SLOT_STATES:
            self.malformed += 0 if child else 1
            return
        row = self.rows.setdefault(key, dict.fromkeys(("Total", *SLOT_STATES), 0))
        for counts in (row, self.all):
            counts[state] += 1
            counts["Total"] += 1

    def render(self, key_width: int = 14) -> str:
        width = max(key_width, max((len(k) for k in self.rows), default=0)) if key_width < 0 else key_width
        width = max(width, 5)
        head = (f"{'':{width}}{'Total':>6} {'Owner':>5} {'Claimed':>7} {'Unclaimed':>9} {'Matched':>7} "
                f"{'Preempting':>10} {'Drain':>6} {'Backfill':>8} {'BkIdle':>6}")

        def row(label: str, c: dict[str, int]) -> str:
            return (f"{label[:width]:>{width}}{c['Total']:6d} {c['Owner']:5d} {c['Claimed']:7d} "
                    f"{c['Unclaimed']:9d} {c['Matched']:7d} {c['Preempting']:10d} {c['Drained']:6d} "
                    f"{c['Backfill']:8d} {0:6d}")

        lines = [head, ""]
        lines += [row(k, c) for k, c in sorted(self.rows.items())]
        if self.rows:
            lines.append("")
        lines.append(row("Total", self.all))
        out = "\n".join(lines) + "\n"
        return out + _malformed(self.malformed, width)


def _malformed(n: int, width: int) -> str:
    return f"\n{'':{width}}(Omitted {n} malformed ads in computed attribute totals)\n\n" if n else ""


def slot_totals(ads: Sequence[ClassAd]) -> str:
    totals = SlotTotals()
    for ad in ads:
        arch, opsys = plain_value(ad, "Arch"), plain_value(ad, "OpSys")
        key = f"{arch}/{opsys}" if isinstance(arch, str) and isinstance(opsys, str) else None
        totals.add(key, _str(ad, "State"))
    return totals.render()


def job_totals(ads: Sequence[ClassAd], attrs: tuple[str, str, str], per_key: bool) -> str:
    """The schedd totals (one row, TotalRunningJobs TotalIdleJobs TotalHeldJobs) or the submitter
    totals (a row per submitter, RunningJobs IdleJobs HeldJobs)."""
    sums: dict[str, list[int]] = {}
    total = [0, 0, 0]
    malformed = 0
    for ad in ads:
        key = _str(ad, "Name") if per_key else " "
        values = [_num(ad, a) for a in attrs]
        if per_key and not key:
            malformed += 1
            continue
        counts = sums.setdefault(key, [0, 0, 0])
        for i, v in enumerate(values):
            if v is not None:
                counts[i] += int(v)
                total[i] += int(v)
        if any(v is None for v in values):
            malformed += 1
    if per_key:
        width = max([5, *(len(k) for k in sums)])
        head = f"{'':{width}}{'RunningJobs':>11} {'IdleJobs':>10} {'HeldJobs':>10}"
        lines = [head, ""]
        lines += [f"{k:>{width}}{c[0]:11d} {c[1]:10d} {c[2]:10d}" for k, c in sorted(sums.items())]
        if sums:
            lines.append("")
        lines.append(f"{'Total':>{width}}{total[0]:11d} {total[1]:10d} {total[2]:10d}")
    else:
        width = 14
        head = f"{'':{width}}{'TotalRunningJobs':>18} {'TotalIdleJobs':>18} {'TotalHeldJobs':>18}"
        lines = [head, ""]
        if sums:
            lines.append(" " * width)  # condor_status prints the single key's row empty
        lines.append(f"{'Total':>{width}}{total[0]:18d} {total[1]:18d} {total[2]:18d}")
    return "\n".join(lines) + "\n" + _malformed(malformed, width)


# ------------------------------------------------------------------------------- views

@dataclass(frozen=True)
class View:
    """A default table: the attributes it reads, its columns and how an ad becomes a row."""

    attrs: tuple[str, ...]
    columns: tuple[Column, ...]
    row: Callable[[ClassAd], list[str]]
    totals: Callable[[Sequence[ClassAd]], str] | None = None
    total_attrs: tuple[str, ...] = ()  # what the totals alone need (-total)

    def render(self, ads: Sequence[ClassAd], only_totals: bool = False) -> str:
        """Heading, a blank line, the rows; then a blank line and the totals.  Nothing at all when
        there are no ads, as condor_status prints nothing then."""
        if not ads:
            return ""
        out = ""
        if not only_totals:
            lines = render_table(self.columns, [self.row(ad) for ad in ads])
            out = lines[0] + "\n\n" + "".join(line + "\n" for line in lines[1:])
        if self.totals is not None:
            out += "\n" + self.totals(ads)
        return out


def _slot_row(ad: ClassAd) -> list[str]:
    load = _num(ad, "CondorLoadAvg")
    return [_str(ad, "Name", UNKNOWN), _str(ad, "OpSys", UNKNOWN), _str(ad, "Arch", UNKNOWN),
            _str(ad, "State", UNKNOWN), _str(ad, "Activity", UNKNOWN),
            f"{load:.3f}" if load is not None else UNKNOWN, _int_cell(_num(ad, "Memory"), 4),
            activity_time(ad)]


SLOTS = View(
    ("Name", "Machine", "OpSys", "Arch", "State", "Activity", "CondorLoadAvg", "Memory",
     "EnteredCurrentActivity", "MyCurrentTime", "LastHeardFrom"),
    (Column("Name", 18), Column("OpSys", 10), Column("Arch", 6), Column("State", 9), Column("Activity", 8),
     Column("LoadAv", 6, right=True), Column("Mem", 4, right=True),
     Column("  ActvtyTime", 12, right=True, gap=False)),
    _slot_row, slot_totals, ("Arch", "OpSys", "State"))


def _jobs_row(ad: ClassAd, attrs: tuple[str, str, str]) -> list[str]:
    return [_str(ad, "Name"), _str(ad, "Machine"), _int_cell(_num(ad, attrs[0]), 11),
            _int_cell(_num(ad, attrs[1]), 10), _int_cell(_num(ad, attrs[2]), 10)]


_JOB_COLUMNS = (Column("Name", 15), Column("Machine", 12), Column("RunningJobs", 11, right=True),
                Column("  IdleJobs", 10, right=True), Column("  HeldJobs", 10, right=True))
SCHEDD_ATTRS = ("TotalRunningJobs", "TotalIdleJobs", "TotalHeldJobs")
SUBMITTER_ATTRS = ("RunningJobs", "IdleJobs", "HeldJobs")

SCHEDDS = View(("Name", "Machine", *SCHEDD_ATTRS), _JOB_COLUMNS, lambda ad: _jobs_row(ad, SCHEDD_ATTRS),
               lambda ads: job_totals(ads, SCHEDD_ATTRS, per_key=False), SCHEDD_ATTRS)
SUBMITTERS = View(("Name", "Machine", *SUBMITTER_ATTRS), _JOB_COLUMNS,
                  lambda ad: _jobs_row(ad, SUBMITTER_ATTRS),
                  lambda ads: job_totals(ads, SUBMITTER_ATTRS, per_key=True), ("Name", *SUBMITTER_ATTRS))


def version_of(text: str) -> str:
    """``$CondorVersion: 24.0.1 2024-08-08 BuildID: 1 $`` -> ``24.0.1`` (the X.Y.Z after the tag)."""
    parts = text.split()
    return parts[1] if len(parts) > 1 and parts[0].startswith("$") else text


def readable_mb(mb: float | None) -> str:
    """HTCondor's metric units for a size in MB: ``7.6 GB``."""
    if mb is None:
        return "??"
    value = mb * 1024.0 * 1024.0
    units = ("B ", "KB", "MB", "GB", "TB")
    power = 0
    while value > 1024.0 and power < len(units) - 1:
        value /= 1024.0
        power += 1
    return f"{value:.1f} {units[power]}"


def _elapsed(ad: ClassAd, attr: str) -> str:
    now, then = _num(ad, "LastHeardFrom"), _num(ad, attr)
    if now is None:
        now = _num(ad, "MyCurrentTime")
    return duration(now - then) if now is not None and then is not None else ""


def _master_row(ad: ClassAd) -> list[str]:
    cpus = _num(ad, "DetectedCpus")
    return [_str(ad, "Name"), version_of(_str(ad, "CondorVersion")),
            _int_cell(cpus, 4) if cpus is not None else "??", readable_mb(_num(ad, "DetectedMemory")),
            _elapsed(ad, "DaemonStartTime")]


MASTERS = View(("Name", "CondorVersion", "DetectedCpus", "DetectedMemory", "DaemonStartTime", "LastHeardFrom",
                "MyCurrentTime"),
               (Column("Name", 12), Column("Version", 14), Column("Cpus", 4, right=True),
                Column("  Memory", 10, right=True), Column("   Uptime", 13, right=True)),
               _master_row)


def _negotiator_row(ad: ClassAd) -> list[str]:
    end = _num(ad, "LastNegotiationCycleEnd0")
    cells = [_str(ad, "Name"), short_date(end) if end else ""]
    for attr, width in (("LastNegotiationCycleDuration0", 5), ("LastNegotiationCycleCandidateSlots0", 7),
                        ("LastNegotiationCycleActiveSubmitterCount0", 8),
                        ("LastNegotiationCycleNumSchedulers0", 7), ("LastNegotiationCycleNumIdleJobs0", 7),
                        ("LastNegotiationCycleMatches0", 7), ("LastNegotiationCycleRejections0", 10)):
        cells.append(_int_cell(_num(ad, attr), width))
    return cells


NEGOTIATORS = View(
    ("Name", "LastNegotiationCycleEnd0", "LastNegotiationCycleDuration0", "LastNegotiationCycleCandidateSlots0",
     "LastNegotiationCycleActiveSubmitterCount0", "LastNegotiationCycleNumSchedulers0",
     "LastNegotiationCycleNumIdleJobs0", "LastNegotiationCycleMatches0", "LastNegotiationCycleRejections0"),
    (Column("Name", 12), Column("LastCycleEnd", 12, right=True), Column("(Sec)", 5, right=True),
     Column("  Slots", 7, right=True), Column("Submitrs", 8, right=True), Column("Schedds", 7, right=True),
     Column("   Jobs", 7, right=True), Column("Matches", 7, right=True), Column("Rejections", 10, right=True)),
    _negotiator_row)

COLLECTORS = View(
    ("Name", "Machine", "RunningJobs", "IdleJobs", "HostsTotal"),
    (Column("Name", 28), Column("Machine", 18), Column("RunningJobs", 11, right=True),
     Column("IdleJobs", 8, right=True), Column("HostsTotal", 10, right=True)),
    lambda ad: [_str(ad, "Name"), _str(ad, "Machine"), _int_cell(_num(ad, "RunningJobs"), 11),
                _int_cell(_num(ad, "IdleJobs"), 8), _int_cell(_num(ad, "HostsTotal"), 10)])

ANY = View(("MyType", "TargetType", "Name"),
           (Column("MyType", 18), Column("TargetType", 18), Column("Name", 41)),
           lambda ad: [_str(ad, "MyType") or "None", _str(ad, "TargetType") or "None", _str(ad, "Name")[:41]])

VIEWS: dict[str, View] = {"Machine": SLOTS, "Scheduler": SCHEDDS, "Submitter": SUBMITTERS,
                          "DaemonMaster": MASTERS, "Negotiator": NEGOTIATORS, "Collector": COLLECTORS,
                          "Any": ANY}


# ------------------------------------------------------------------------------- -compact

COMPACT_CONSTRAINT = "PartitionableSlot =?= true || DynamicSlot =!= true"
COMPACT_ATTRS = ("Machine", "Name", "Arch", "OpSys", "OpSysAndVer", "OpSysShortName", "SlotType", "SlotTypeID",
                 "NumDynamicSlots", "TotalSlotCpus", "TotalSlotGpus", "TotalSlotMemory", "Cpus", "Memory",
                 "TotalLoadAvg", "TotalCpus", "State", "Activity", "RecentJobStarts", "ChildMemory",
                 "ChildState", "ChildActivity", "PartitionableSlot", "DynamicSlot", "SlotBackfill")
COMPACT_COLUMNS = (Column("Machine", 12), Column("Platform", 0), Column("Slot", 4, right=True),
                   Column("s", 1, gap=False), Column("Cpus", 4, right=True), Column("Gpus", 4, right=True),
                   Column(" TotalGb", 8, right=True), Column("FreCpu", 6, right=True),
                   Column(" FreeGb ", 8, right=True), Column("CpuLoad", 7, right=True), Column("ST", 2),
                   Column("Jobs/Min", 8, right=True), Column("MaxSlotGb", 9, right=True))


def platform(ad: ClassAd) -> str | None:
    """``x64/AlmaLinux9``: the architecture (x64/x86 shortened) and OpSysAndVer (OpSysShortName on
    Windows), HTCondor's platform name."""
    opsys = plain_value(ad, "OpSys")
    name = plain_value(ad, "OpSysShortName" if opsys == "WINDOWS" else "OpSysAndVer")
    if not isinstance(name, str):
        return None
    arch = plain_value(ad, "Arch")
    arch = {"X86_64": "x64", "X86": "x86"}.get(arch, arch) if isinstance(arch, str) else ""
    return f"{arch}/{name}"


def state_code(state: str, activity: str) -> str:
    """condor_status's two-letter ST code: state letter, activity letter (``Ui`` = Unclaimed/Idle)."""
    return STATE_LETTERS.get(state, " ") + ACTIVITY_LETTERS.get(activity, " ")


def _list(ad: ClassAd, name: str) -> list[Any]:
    v = plain_value(ad, name)
    return v if isinstance(v, list) else []


def _consensus(values: list[Any], letters: dict[str, str]) -> str | None:
    """The children's common letter, '#' when they differ, None when there are no children."""
    found = {letters.get(v, " ") for v in values if isinstance(v, str)}
    if not found:
        return None
    return found.pop() if len(found) == 1 else "#"


def _pslot_code(own: str, child_states: list[Any], child_activities: list[Any], exhausted: bool) -> str:
    """A partitionable slot's ST code merged with its dynamic slots' (condor_status -compact): an
    exhausted Unclaimed/Idle slot shows its children's code, Preempting/Vacating children win, and a
    letter that differs from the children's becomes '*'."""
    cs = _consensus(child_states, STATE_LETTERS)
    ca = _consensus(child_activities, ACTIVITY_LETTERS)
    s, a = own[0], own[1]
    if own == "Ui" and exhausted:
        s, a = cs or s, ca or a
    elif s == "D" and cs == "C":
        s = cs
    if cs == "P":
        s = cs
    if ca == "v":
        a = ca
    if cs is not None and s != cs:
        s = "*"
    if ca is not None and a != ca:
        a = "*"
    return s + a


@dataclass
class _MachineRow:
    """One -compact row: a partitionable slot, or a machine's static slots folded together."""

    first: ClassAd
    label: str
    partitionable: bool
    slots: int = 0
    free_cpus: float = 0.0
    free_mem: float = 0.0
    starts: float | None = None
    max_mem: float | None = None
    code: str = ""

    def fold(self, ad: ClassAd) -> None:
        state, activity = _str(ad, "State"), _str(ad, "Activity")
        code = state_code(state, activity)
        starts = _num(ad, "RecentJobStarts")
        if starts is not None:
            self.starts = (self.starts or 0.0) + starts / 20.0
        if self.partitionable:
            self.slots = int(_num(ad, "NumDynamicSlots") or 0)
            self.free_cpus, self.free_mem = _num(ad, "Cpus") or 0, _num(ad, "Memory") or 0
            children = [m for m in _list(ad, "ChildMemory") if isinstance(m, (int, float))]
            self.max_mem = max(children) if children else None
            self.code = _pslot_code(code, _list(ad, "ChildState"), _list(ad, "ChildActivity"),
                                    exhausted=(_num(ad, "Cpus") or 0) < 0.1)
            return
        self.slots += 1
        mem = _num(ad, "Memory") or 0
        if state not in BUSY_STATES:
            self.free_cpus += _num(ad, "Cpus") or 0
            self.free_mem += mem
        self.max_mem = mem if self.max_mem is None else max(self.max_mem, mem)
        self.code = code if not self.code else "".join(
            a if a == b else "*" for a, b in zip(self.code, code, strict=True))

    def cells(self) -> list[str]:
        ad = self.first
        cpus = _num(ad, "TotalSlotCpus")
        mem = _num(ad, "TotalSlotMemory")
        load, ncpu = _num(ad, "TotalLoadAvg"), _num(ad, "TotalCpus")
        return [self.label, platform(ad) or "", f"{self.slots:4d}", " " if self.partitionable else "S",
                _int_cell(cpus if cpus is not None else _num(ad, "Cpus"), 4), _int_cell(_num(ad, "TotalSlotGpus"), 4),
                _fixed((mem if mem is not None else _num(ad, "Memory") or 0) / 1024.0, "8.2f"),
                f"{int(self.free_cpus):6d}", f"{self.free_mem / 1024.0:8.2f}",
                _fixed(load * 1.0 / ncpu if load is not None and ncpu else None, "7.2f"), self.code,
                _fixed(self.starts, "8.2f", "_"),
                _fixed(self.max_mem / 1024.0 if self.max_mem is not None else None, "9.2f", "*")]


def compact(ads: Sequence[ClassAd], only_totals: bool = False) -> str:
    """``-compact``: one row per machine (its static slots folded into one row, each partitionable
    slot a row of its own), then totals per platform with dynamic slots counted through their
    partitionable slot's ChildState."""
    if not ads:
        return ""
    rows: list[_MachineRow] = []
    index: dict[tuple[str, Any], _MachineRow] = {}
    machines: set[str] = set()
    totals = SlotTotals()
    for ad in ads:
        machine = _str(ad, "Machine") or _str(ad, "Name")
        pslot = plain_value(ad, "PartitionableSlot") is True
        key = (machine, plain_value(ad, "SlotTypeID") if pslot else "static")
        row = index.get(key)
        if row is None:
            label = machine
            if machine in machines:  # a second row for this machine is labelled with the slot's name
                label = "   " + _str(ad, "Name").split("@", 1)[0]
            machines.add(machine)
            row = index[key] = _MachineRow(ad, label, pslot)
            rows.append(row)
        row.fold(ad)
        plat = platform(ad)
        if pslot:
            for child in _list(ad, "ChildState"):
                totals.add(plat, child if isinstance(child, str) else "", child=True)
            if (_num(ad, "Cpus") or 0) >= 0.1:
                totals.add(plat, _str(ad, "State"))
        else:
            totals.add(plat, _str(ad, "State"))
    out = ""
    if not only_totals:
        lines = render_table(COMPACT_COLUMNS, [r.cells() for r in rows])
        out = lines[0] + "\n\n" + "".join(line + "\n" for line in lines[1:])
    key_width = max([14, *(len(k) for k in totals.rows)])
    return out + "\n" + totals.render(key_width)
