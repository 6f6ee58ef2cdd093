"""The collector's ads: by type, keyed like HTCondor's, kept compact, with update statistics,
expiry (ClassAdLifetime) and value indexes.

Pure data structure: the daemon feeds it updates and queries; nothing here does I/O.

Memory is what limits a collector (100,000 slot ads of ~100 attributes each), so an ad is not
kept as a ClassAd.  It is a *layout* -- the tuple of its attribute names, shared by every ad
sent with the same names in the same order, as a startd's slots are -- and a tuple of wire
texts.  Texts of attributes with few distinct values (``"X86_64"``, ``"Unclaimed"``, ``true``)
are interned per attribute, so 100,000 ads hold one copy of each; an attribute whose values
keep changing (``KeyboardIdle``) stops being interned once it has shown more than
``INTERN_LIMIT`` distinct values.  A ClassAd is built only when a query needs one, and then
only from the attributes the constraint reads (see ``query.py``).
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Iterable, Iterator, Sequence
from operator import call
from typing import Any

import msgpack

from htcd.collector.index import Index
from htcd.collector.keys import (
    AD_TYPES,
    STATS_NAMES,
    Key,
    canonical_type,
    host_of,
    int_value,
    key_function,
    string_value,
)
from htcd.errors import UserError

DEFAULT_LIFETIME = 900  # CLASSAD_LIFETIME's default, as in HTCondor
HISTORY_SIZE = 128  # COLLECTOR_DAEMON_HISTORY_SIZE's default
INTERN_LIMIT = 1024  # distinct values an attribute may show and still be interned
MAX_INDEXES = 32  # per ad type
IP_KEYED = ("Machine", "Scheduler", "Submitter")  # types whose key ends with the sender's IP
#: Attributes the collector adds to every stored ad it serves (lower-case).
EXTRA_NAMES = frozenset({"lastheardfrom", "updatestotal", "updatessequenced", "updateslost", "updateshistory",
                         "authenticatedidentity", "authenticationmethod"})


def _merge_case(wire: dict[str, str]) -> dict[str, str]:
    """Names differing only in case: the last value wins, the first spelling stays (as ClassAd)."""
    merged: dict[str, tuple[str, str]] = {}
    for k, v in wire.items():
        first = merged.get(k.lower())
        merged[k.lower()] = (first[0] if first else k, v)
    return dict(merged.values())


class _Interner(dict[str, str]):
    """One attribute's distinct texts; lookups of known texts stay in C (``__getitem__``)."""

    __slots__ = ("column",)
    column: Column

    def __missing__(self, text: str) -> str:
        if len(self) >= INTERN_LIMIT:
            self.column.saturate()
            return text
        self[text] = text
        return text


class Column:
    """What the store knows about one attribute name of one ad type."""

    __slots__ = ("interner", "table")

    def __init__(self, table: Table) -> None:
        self.table = table
        self.interner: _Interner | None = _Interner()
        self.interner.column = self

    def saturate(self) -> None:
        """Too many distinct values: stop interning this attribute (already shared texts stay)."""
        if self.interner is not None:
            self.interner = None
            self.table.column_version += 1

    def intern_fn(self) -> Any:
        return str if self.interner is None else self.interner.__getitem__


class Layout:
    """The attribute names of an ad, in the order sent, shared by every ad sent alike."""

    __slots__ = ("__weakref__", "index", "interners", "names", "plans", "version")

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self.index: dict[str, int] = {}
        for i, n in enumerate(names):
            self.index.setdefault(n.lower(), i)
        self.interners: tuple[Any, ...] = ()
        self.version = -1
        self.plans: dict[tuple[str, ...], tuple[list[tuple[str, int]], list[str]]] = {}

    @property
    def clean(self) -> bool:
        """No two names differ only in case."""
        return len(self.index) == len(self.names)

    def refresh(self, table: Table) -> None:
        cols = table.columns
        fns = []
        for n in self.names:
            low = n.lower()
            col = cols.get(low)
            if col is None:
                col = cols[low] = Column(table)
            fns.append(col.intern_fn())
        self.interners = tuple(fns)
        self.version = table.column_version

    def text(self, values: tuple[str, ...], low: str) -> str | None:
        i = self.index.get(low)
        return None if i is None else values[i]


class Entry:
    """One stored ad and what the collector knows about its sender."""

    __slots__ = (
        "expires",
        "heard",
        "history",
        "identity",
        "key",
        "layout",
        "live",
        "lost",
        "method",
        "pos",
        "private",
        "seq",
        "sequenced",
        "start",
        "total",
        "values",
    )

    def __init__(self, key: Key, layout: Layout, values: tuple[str, ...]) -> None:
        self.key = key
        self.layout = layout
        self.values = values
        self.private: dict[str, str] | None = None
        self.heard = 0
        self.expires = 0.0
        self.identity: str | None = None
        self.method: str | None = None
        self.start: int | None = None  # the sender's DaemonStartTime
        self.seq: int | None = None  # the last UpdateSequenceNumber heard
        self.total = 0
        self.sequenced = 0
        self.lost = 0
        self.history = 0  # bit (size-1) is the latest update, 1 = lost
        self.live = True
        self.pos = -1  # where it sits in its table's ``slots``

    def get(self, low: str) -> str | None:
        return self.layout.text(self.values, low)


class Table:
    """The ads of one type."""

    def __init__(self, ad_type: str) -> None:
        self.ad_type = ad_type
        self.key_fn = key_function(ad_type)[0]
        self.entries: dict[Key, Entry] = {}
        # Every entry also sits at a fixed position of ``slots`` (None where one was removed), so
        # that long scans walk positions, not a snapshot list: a list of 100,000 entries alive
        # while a query allocates makes every young-generation garbage collection walk it.
        self.slots: list[Entry | None] = []
        self._free: list[int] = []
        self.layouts: weakref.WeakValueDictionary[tuple[str, ...], Layout] = weakref.WeakValueDictionary()
        self.blob_layouts: weakref.WeakValueDictionary[bytes, Layout] = weakref.WeakValueDictionary()
        self.columns: dict[str, Column] = {}
        self.column_version = 0
        self.indexes: dict[str, Index[Entry]] = {}
        # statistics over the collector's lifetime
        self.updates_total = 0
        self.updates_sequenced = 0
        self.updates_lost = 0
        self.updates_initial = 0

    def layout_for(self, names: tuple[str, ...]) -> Layout:
        layout = self.layouts.get(names)
        if layout is None:
            layout = self.layouts[names] = Layout(names)
        return layout

    def add(self, entry: Entry) -> None:
        self.entries[entry.key] = entry
        if self._free:
            entry.pos = self._free.pop()
            self.slots[entry.pos] = entry
        else:
            entry.pos = len(self.slots)
            self.slots.append(entry)

    def discard(self, entry: Entry) -> None:
        if self.entries.get(entry.key) is entry:
            del self.entries[entry.key]
        if 0 <= entry.pos < len(self.slots) and self.slots[entry.pos] is entry:
            self.slots[entry.pos] = None
            self._free.append(entry.pos)

    def walk(self, every: int = 0) -> Iterator[Entry | None]:
        """The live entries by position; with ``every``, a None every that many positions.
        Entries added or removed meanwhile may or may not be seen; none is seen twice unless
        it was removed and added again."""
        slots = self.slots
        i = 0
        while i < len(slots):
            e = slots[i]
            i += 1
            if e is not None:
                yield e
            if every and i % every == 0:
                yield None

    def want_index(self, attr: str) -> Index[Entry] | None:
        """The index of ``attr``, created (not yet built) if there is room for one more."""
        idx = self.indexes.get(attr)
        if idx is None and len(self.indexes) < MAX_INDEXES:
            idx = self.indexes[attr] = Index(attr)
        return idx


class AdStore:
    def __init__(self, history_size: int = HISTORY_SIZE, daemon_stats: bool = True,
                 default_lifetime: int = DEFAULT_LIFETIME) -> None:
        self.tables: dict[str, Table] = {t.lower(): Table(t) for t in AD_TYPES}
        self.history_size = history_size
        self.daemon_stats = daemon_stats
        self.default_lifetime = default_lifetime
        self.lost_max = 0  # the most updates found lost at once
        self._names: dict[str, str] = {}  # identities and methods, one copy each
        self.table("Machine").want_index("state")  # HostsClaimed/Unclaimed/Owner come from it

    # -- tables ------------------------------------------------------------------------------
    def table(self, ad_type: str) -> Table:
        low = ad_type.lower()
        t = self.tables.get(low)
        if t is None:
            t = self.tables[low] = Table(canonical_type(ad_type))
        return t

    def tables_for(self, ad_type: str) -> list[Table]:
        if ad_type.lower() == "any":
            return list(self.tables.values())
        t = self.tables.get(ad_type.lower())
        return [t] if t is not None else []

    def count(self, ad_type: str | None = None) -> int:
        if ad_type is None:
            return sum(len(t.entries) for t in self.tables.values())
        t = self.tables.get(ad_type.lower())
        return len(t.entries) if t else 0

    # -- updates -----------------------------------------------------------------------------
    def update(self, ad_type: str, wire: dict[str, str], private: dict[str, str] | None = None,
               identity: str | None = None, method: str | None = None, now: float | None = None,
               counted: bool = True) -> Entry:
        """Store or replace one ad (wire form); UserError if it cannot be keyed.  ``counted``
        False: not an update from a sender (the collector's own ad), no statistics."""
        table = self.table(ad_type)
        layout = table.layout_for(tuple(wire))
        if not layout.clean:
            wire = _merge_case(wire)
            layout = table.layout_for(tuple(wire))
        return self._store(table, layout, wire.values(), private, identity, method, now, counted)

    def update_compact(self, ad_type: str, names: bytes, values: Sequence[str],
                       private: dict[str, str] | None = None, identity: str | None = None,
                       method: str | None = None, now: float | None = None) -> Entry:
        """``update`` of an ad sent compact (``htcd.wire.udp.compact``): its names as one msgpack
        blob, which finds the layout without decoding a name, and its texts in that order."""
        table = self.table(ad_type)
        layout = table.blob_layouts.get(names)
        if layout is None:
            try:
                decoded = msgpack.unpackb(names, raw=False, use_list=False)
            except Exception:
                raise UserError("the ad's names are not a msgpack array") from None
            if type(decoded) is not tuple or not set(map(type, decoded)) <= {str}:
                raise UserError("the ad's names must be a list of attribute names")
            layout = table.layout_for(decoded)
            if layout.clean:
                table.blob_layouts[names] = layout
        if len(values) != len(layout.names):
            raise UserError(f"the ad has {len(layout.names)} names but {len(values)} values")
        if not layout.clean:
            wire = _merge_case(dict(zip(layout.names, values, strict=True)))
            layout = table.layout_for(tuple(wire))
            values = list(wire.values())
        return self._store(table, layout, values, private, identity, method, now, True)

    def _store(self, table: Table, layout: Layout, texts: Iterable[str], private: dict[str, str] | None,
               identity: str | None, method: str | None, now: float | None, counted: bool) -> Entry:
        if layout.version != table.column_version:
            layout.refresh(table)
        values = tuple(map(call, layout.interners, texts))
        index = layout.index

        def get(low: str) -> str | None:
            i = index.get(low)
            return None if i is None else values[i]

        key = table.key_fn(get)
        if key is None:
            raise UserError(f"a {table.ad_type} ad needs a Name (or Machine) attribute to be stored")
        now = time.time() if now is None else now
        entry = table.entries.get(key)
        if entry is None:
            entry = Entry(key, layout, values)
            table.add(entry)
            table.updates_initial += 1
            for idx in table.indexes.values():
                idx.add(entry, get(idx.attr))
        else:
            old_layout, old_values = entry.layout, entry.values
            for idx in table.indexes.values():
                idx.move(entry, old_layout.text(old_values, idx.attr), get(idx.attr))
            entry.layout, entry.values = layout, values
        if private is not None:
            entry.private = private
        lifetime = int_value(get("classadlifetime"))
        entry.heard = int(now)
        entry.expires = now + (lifetime if lifetime and lifetime > 0 else self.default_lifetime)
        if identity is not None:
            names = self._names
            entry.identity = names.setdefault(identity, identity)
            entry.method = names.setdefault(method or "", method or "")
        if counted:
            self._count(table, entry, int_value(get("updatesequencenumber")), int_value(get("daemonstarttime")))
        return entry

    def _count(self, table: Table, e: Entry, seq: int | None, start: int | None) -> None:
        """HTCondor's per-daemon update statistics: UpdatesTotal counts updates received plus
        those found lost (gaps in UpdateSequenceNumber); a new DaemonStartTime is a restart of
        the sender, not a loss."""
        if not self.daemon_stats or seq is None or start is None:
            table.updates_total += 1
            return
        size = self.history_size
        mask = (1 << size) - 1 if size > 0 else 0
        if e.seq is None or e.start != start:  # first update heard, or the sender restarted
            e.total += 1
            e.start, e.seq = start, seq
            e.history = (e.history >> 1) & mask
            table.updates_total += 1
            return
        gap = seq - e.seq - 1
        if gap >= 0:
            e.total += gap + 1
            e.sequenced += gap + 1
            e.lost += gap
            e.seq = seq
            if size:
                lost_bits = (1 << (size - 1)) - 1 if gap >= size else ((1 << gap) - 1) << (size - 1 - gap)
                e.history = ((e.history >> (gap + 1)) | lost_bits) & mask
            table.updates_total += gap + 1
            table.updates_sequenced += gap + 1
            table.updates_lost += gap
            self.lost_max = max(self.lost_max, gap)
            return
        # late (reordered) or repeated: if it was counted lost, it is not any more
        ago = e.seq - seq
        bit = size - 1 - ago
        if 0 <= bit < size and (e.history >> bit) & 1:
            e.history &= ~(1 << bit)
            e.lost -= 1
            table.updates_lost -= 1
            return
        e.total += 1
        e.sequenced += 1
        table.updates_total += 1
        table.updates_sequenced += 1

    # -- removal -----------------------------------------------------------------------------
    def remove(self, table: Table, entry: Entry) -> None:
        table.discard(entry)
        if entry.live:
            entry.live = False
            for idx in table.indexes.values():
                idx.discard(entry, entry.get(idx.attr))

    def invalidate(self, ad_type: str, name: str | None = None, address: str | None = None,
                   schedd_name: str | None = None) -> list[Entry]:
        """Remove the ads of ``ad_type`` named ``name`` (from the daemon at ``address``'s IP,
        if given) and/or published by the schedd ``schedd_name``; returns the removed entries."""
        gone = []
        ip = host_of(address) if address else None
        for table in self.tables_for(ad_type):
            by_ip = table.ad_type in IP_KEYED
            if table.ad_type == "Machine" and name is not None and ip is not None:
                found = table.entries.get((name, ip))
                candidates = [found] if found is not None else []
            else:
                candidates = [e for e in table.entries.values() if name is None or e.key[0] == name]
            for e in candidates:
                if name is not None and e.key[0] != name:
                    continue
                if ip is not None and by_ip and e.key[-1] != ip:
                    continue
                if schedd_name is not None and string_value(e.get("scheddname")) != schedd_name:
                    continue
                self.remove(table, e)
                gone.append(e)
        return gone

    def expired(self, now: float | None = None) -> Iterator[tuple[Table, Entry] | None]:
        """Entries whose ClassAdLifetime has run out; None every 1,000 looked at (a chance for
        the caller to let other work run)."""
        now = time.time() if now is None else now
        for table in list(self.tables.values()):
            for e in table.walk(every=1000):
                if e is None:
                    yield None
                elif e.expires <= now:
                    yield table, e

    def expire(self, now: float | None = None) -> int:
        """Remove every expired ad at once (tests and small stores)."""
        gone = [x for x in self.expired(now) if x is not None]
        for table, e in gone:
            self.remove(table, e)
        return len(gone)

    # -- indexes -----------------------------------------------------------------------------
    def pending_builds(self) -> list[tuple[Table, Index[Entry]]]:
        return [(t, i) for t in self.tables.values() for i in t.indexes.values() if not i.ready]

    @staticmethod
    def build_steps(table: Table, idx: Index[Entry], chunk: int = 10_000) -> Iterator[None]:
        """Fill ``idx`` from the table's ads, yielding every ``chunk`` ads.  Updates made
        meanwhile keep it right themselves (they move entries of every index, built or not)."""
        attr = idx.attr
        for e in table.walk(every=chunk):
            if e is None:
                yield None
            elif e.live:
                idx.add(e, e.layout.text(e.values, attr))
        idx.ready = True

    def build_indexes(self) -> None:
        """Build every pending index at once (tests and the in-process API)."""
        for table, idx in list(self.pending_builds()):
            for _ in self.build_steps(table, idx):
                pass

    # -- output ------------------------------------------------------------------------------
    def extras(self, e: Entry) -> dict[str, str]:
        """What the collector adds to the ad it serves: LastHeardFrom, the sender's update
        statistics (COLLECTOR_DAEMON_STATS) and who sent it."""
        out = {"LastHeardFrom": str(e.heard)}
        if self.daemon_stats and e.start is not None:
            out["UpdatesTotal"] = str(e.total)
            out["UpdatesSequenced"] = str(e.sequenced)
            out["UpdatesLost"] = str(e.lost)
            if self.history_size > 0:
                out["UpdatesHistory"] = f'"0x{e.history:0{(self.history_size + 3) // 4}x}"'
        if e.identity:
            out["AuthenticatedIdentity"] = f'"{e.identity}"'
            out["AuthenticationMethod"] = f'"{e.method or ""}"'
        return out

    def wire(self, e: Entry) -> dict[str, str]:
        out = dict(zip(e.layout.names, e.values, strict=True))
        out.update(self.extras(e))
        return out

    def project(self, e: Entry, projection: tuple[str, ...]) -> dict[str, str]:
        """The ad cut down to ``projection`` (lower-case names; names it lacks are left out)."""
        layout = e.layout
        plan = layout.plans.get(projection)
        if plan is None:
            have = [(layout.names[layout.index[p]], layout.index[p]) for p in projection if p in layout.index]
            extra = [p for p in projection if p in EXTRA_NAMES and p not in layout.index]
            if len(layout.plans) > 64:
                layout.plans.clear()
            plan = layout.plans[projection] = (have, extra)
        values = e.values
        out = {name: values[i] for name, i in plan[0]}
        if plan[1]:
            extras = self.extras(e)
            for low in plan[1]:
                for k, v in extras.items():
                    if k.lower() == low:
                        out[k] = v
        return out

    # -- statistics for the collector's own ad -------------------------------------------------
    def statistics(self) -> dict[str, Any]:
        """Totals and per-type figures as HTCondor's collector publishes them."""
        out: dict[str, Any] = {}
        total = sequenced = lost = initial = 0
        for low, t in self.tables.items():
            name = STATS_NAMES.get(low, t.ad_type)
            out[f"UpdatesTotal_{name}"] = t.updates_total
            out[f"UpdatesSequenced_{name}"] = t.updates_sequenced
            out[f"UpdatesLost_{name}"] = t.updates_lost
            out[f"UpdatesInitial_{name}"] = t.updates_initial
            total += t.updates_total
            sequenced += t.updates_sequenced
            lost += t.updates_lost
            initial += t.updates_initial
        out.update(UpdatesTotal=total, UpdatesSequenced=sequenced, UpdatesLost=lost, UpdatesInitial=initial,
                   UpdatesLostMax=self.lost_max, UpdatesLostRatio=(lost / total) if total else 0.0)
        return out
