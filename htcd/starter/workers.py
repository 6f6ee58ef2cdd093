"""The starters' blocking file work (sandbox creation, state files, clean-up) runs here, off
the startd's event loop.

Every starter is a task on the startd's one loop: a sandbox made on a slow disk would stall
every other job's start, end and the daemon's commands.  A small bounded pool of threads does
that work, several jobs at once (mkdir, create, rename and unlink wait on the disk with the GIL
released).  Its own pool, not the loop's default executor, so that file work never waits
behind URL downloads (``asyncio.to_thread``) and those never behind it.

A step handed to the pool is awaited before the next step of the same job: the order of a
job's state writes (what a restarted startd reads to clean up after a crash) stays that of its
code.  A cancelled await still waits for its step to finish, so no step outlives the job's
clean-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

THREADS = 4  # enough to overlap several jobs' disk waits; each step is short and mostly waits on the disk

_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def pool() -> ThreadPoolExecutor:
    """The process's pool, made on first use (a startd with no job starts no thread)."""
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="starter-files")
        return _pool


async def run(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``fn(*args, **kwargs)`` in the pool; a cancelled caller still waits for it to end (then
    is cancelled), so that nothing it does can follow the job's clean-up."""
    future = asyncio.get_running_loop().run_in_executor(pool(), functools.partial(fn, *args, **kwargs))
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):
            await future
        raise

