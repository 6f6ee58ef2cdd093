"""GcPauses: when a daemon freezes its long-lived objects out of the garbage collector's walks."""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterator

import pytest

from htcd.daemon.gcpauses import GcPauses


@pytest.fixture
def pauses() -> Iterator[GcPauses]:
    gc.unfreeze()
    p = GcPauses(logging.getLogger("test"))
    try:
        yield p
    finally:
        p.close()
        gc.unfreeze()


def test_freezes_once_the_kept_set_has_grown(pauses: GcPauses) -> None:
    kept = [{"n": i} for i in range(1000)]
    pauses.kept(len(kept))
    assert gc.get_freeze_count() == 0  # under 5,000: not worth it
    kept += [{"n": i} for i in range(10_000)]
    pauses.kept(len(kept))
    assert gc.get_freeze_count() >= len(kept) and pauses.frozen_at == len(kept)
    before = gc.get_freeze_count()
    pauses.kept(len(kept) + 500)  # grown by less than a tenth: no new freeze
    assert pauses.frozen_at == len(kept) and gc.get_freeze_count() == before


def test_a_shrunk_set_freezes_again_when_it_grows_back(pauses: GcPauses) -> None:
    pauses.kept(100_000)
    assert pauses.frozen_at == 100_000
    pauses.kept(60_000)  # under half, not under a tenth: nothing changes
    assert pauses.frozen_at == 100_000
    pauses.kept(5_000)
    assert pauses.frozen_at == 5_000
    pauses.kept(11_000)
    assert pauses.frozen_at == 11_000


def test_the_longest_collection_is_kept(pauses: GcPauses) -> None:
    gc.collect()
    assert pauses.longest > 0.0
    pauses.close()
    assert pauses._watch not in gc.callbacks
