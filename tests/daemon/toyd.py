"""A small real daemon for the runtime tests: htcd's Daemon base and nothing else, plus knobs that
make it misbehave on purpose.  Run as ``python toyd.py`` with HTCD_CONFIG set.

- ``TOYD_SHUTDOWN_SECONDS``: how long the graceful shutdown hook takes (a fast one takes none);
  the hook logs when it starts and when it ends.
- ``TOYD_FAIL_INTERVAL``: seconds between runs of a timer whose action always raises.
- ``TOYD_BLOCK_SECONDS``: once, shortly after start, a timer holds the loop (burns CPU) this long.
- ``TOYD_BURN_PERCENT``: a timer that keeps the loop busy about this share of the time.
"""

from __future__ import annotations

import asyncio
import sys
import time

from htcd.classad import ClassAd
from htcd.daemon import Daemon, run_daemon


def burn(seconds: float) -> None:
    """Hold the CPU (and so the event loop) for ``seconds`` of this thread's CPU time."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


class Toy(Daemon):
    subsystem = "TOYD"
    ad_type = "Generic"

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.failures = 0

    def knob_float(self, name: str, default: float) -> float:
        text = self.config.get(name)
        return float(text) if text else default

    def make_ad(self) -> ClassAd:
        ad = self.base_ad("Generic")
        ad["ToyFailures"] = self.failures
        return ad

    async def startup(self) -> None:
        interval = self.knob_float("TOYD_FAIL_INTERVAL", 0)
        if interval > 0:
            self.every(lambda: interval, self._fail, "failing timer", first=interval)
        block = self.knob_float("TOYD_BLOCK_SECONDS", 0)
        if block > 0:
            self.every(lambda: 3600.0, self._block, "blocking timer", first=0.2)
        percent = self.knob_float("TOYD_BURN_PERCENT", 0)
        if percent > 0:
            self.every(lambda: 0.05 * (1 - percent / 100), self._burn, "burning timer")

    async def _fail(self) -> None:
        self.failures += 1
        raise RuntimeError(f"toy failure number {self.failures}")

    async def _block(self) -> None:
        burn(self.knob_float("TOYD_BLOCK_SECONDS", 0))

    async def _burn(self) -> None:
        burn(0.05 * self.knob_float("TOYD_BURN_PERCENT", 0) / 100)

    async def shutdown(self, fast: bool) -> None:
        kind = "fast" if fast else "graceful"
        self.log.info("toy shutdown hook started (%s)", kind)
        if not fast:
            await asyncio.sleep(self.knob_float("TOYD_SHUTDOWN_SECONDS", 0))
        self.log.info("toy shutdown hook finished (%s)", kind)


if __name__ == "__main__":
    sys.exit(run_daemon(Toy))
