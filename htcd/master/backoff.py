"""How long the master waits before restarting a daemon that died: HTCondor's formula.

``delay = MASTER_BACKOFF_CONSTANT + ceil(MASTER_BACKOFF_FACTOR ** n)``, at most
``MASTER_BACKOFF_CEILING``, where n is the number of restarts already made (0 for the first).
A daemon that stays up ``MASTER_RECOVER_FACTOR`` seconds after a restart has recovered: n goes
back to 0.  Each knob has a per-daemon form, ``MASTER_<NAME>_BACKOFF_CONSTANT`` and so on, that
wins when defined.  With the defaults (9, 2.0, 3600, 300) the delays are 10, 11, 13, 17, ... s.

htcd accepts fractions of a second for the constant and the ceiling (HTCondor takes whole
seconds) so that test pools restart daemons quickly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from htcd.config import Config

CONSTANT, FACTOR, CEILING, RECOVER = 9.0, 2.0, 3600.0, 300.0


@dataclass(frozen=True)
class Backoff:
    constant: float = CONSTANT
    factor: float = FACTOR
    ceiling: float = CEILING
    recover: float = RECOVER

    @classmethod
    def for_daemon(cls, config: Config, name: str) -> Backoff:
        """The backoff of daemon ``name`` (e.g. SCHEDD): its own knobs, else the global ones."""
        constant = config.get_float("MASTER_BACKOFF_CONSTANT", CONSTANT)
        factor = config.get_float("MASTER_BACKOFF_FACTOR", FACTOR)
        ceiling = config.get_float("MASTER_BACKOFF_CEILING", CEILING)
        recover = config.get_float("MASTER_RECOVER_FACTOR", RECOVER)
        if factor <= 0:  # as HTCondor: a factor that is not positive means the default
            factor = FACTOR
        own_factor = config.get_float(f"MASTER_{name}_BACKOFF_FACTOR", factor)
        return cls(constant=max(0.0, config.get_float(f"MASTER_{name}_BACKOFF_CONSTANT", constant)),
                   factor=own_factor if own_factor > 0 else factor,
                   ceiling=max(0.0, config.get_float(f"MASTER_{name}_BACKOFF_CEILING", ceiling)),
                   recover=max(0.0, config.get_float(f"MASTER_{name}_RECOVER_FACTOR", recover)))

    def delay(self, restarts: int) -> float:
        """Seconds to wait before the restart that follows ``restarts`` earlier ones."""
        try:
            seconds = self.constant + math.ceil(self.factor ** restarts)
        except OverflowError:
            return self.ceiling
        return min(seconds, self.ceiling)


def seconds_text(value: float) -> str:
    """``10`` for whole seconds (as HTCondor prints them), else ``1.2``."""
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"
