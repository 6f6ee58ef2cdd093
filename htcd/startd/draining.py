"""Draining the startd (``htcd drain``): it takes no new claims (or, with ``-start``, only the
jobs that expression allows), lets the jobs it runs finish as the drain's speed says (graceful:
their retirement time; quick: vacated; fast: killed), and once every slot is Drained acts as
asked on completion (nothing, resume, exit or restart).  The machine ad says how a drain begun
now would go (ExpectedMachine*Draining*)."""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

from htcd.classad import parse_expr
from htcd.daemon import keepalive
from htcd.errors import UserError
from htcd.startd import states
from htcd.startd.ads import slot_ad
from htcd.startd.states import Drain
from htcd.wire.errors import CommandError
from htcd.wire.server import Request

if TYPE_CHECKING:
    from htcd.startd.daemon import Startd

HOW_FAST = ("graceful", "quick", "fast")
ON_COMPLETION = ("nothing", "resume", "exit", "restart")


class Draining:
    """The startd's drain: the current one (None when not draining) and what the ads tell of
    drains past and possible."""

    def __init__(self, startd: Startd) -> None:
        self.startd = startd
        self.current: Drain | None = None
        self.last_start = 0
        self.last_stop = 0
        self.ended = "draining ended"  # why the last drain ended (the slots' state change says it)
        self.estimates = (int(time.time()),) * 2 + (0, 0)
        self._seq = 0

    async def cmd_drain_jobs(self, req: Request) -> dict[str, Any]:
        startd = self.startd
        if self.current is not None:
            raise CommandError("Draining already in progress.", "BUSY")
        how = (req.arg_str("how_fast") or "graceful").lower()
        if how not in HOW_FAST:
            raise CommandError(f"how_fast {how!r} is not one of {', '.join(HOW_FAST)}", "BAD_REQUEST")
        on_completion = (req.arg_str("on_completion") or "nothing").lower()
        if on_completion not in ON_COMPLETION:
            raise CommandError(f"on_completion {on_completion!r} is not one of {', '.join(ON_COMPLETION)}",
                               "BAD_REQUEST")
        start = req.arg_str("start")
        check = req.arg_str("check")
        for what, text in (("-start", start), ("-check", check)):
            if text is not None:
                try:
                    parse_expr(str(text))
                except UserError as exc:
                    raise CommandError(f"{what} {text}: not a ClassAd expression: {exc.message}",
                                       "BAD_REQUEST") from None
        if check is not None:
            self._check(str(check))
        self._seq += 1
        now = int(time.time())
        drain = Drain(request_id=f"{startd.start_time}{self._seq:03d}", how=how,
                      reason=req.arg_str("reason") or f"by command from {req.identity}",
                      on_completion=on_completion, start=None if start is None else str(start), start_time=now)
        drain.deadline = max([now, *(e for e in self.retirement_ends() if not math.isinf(e))])
        self.current = drain
        self.last_start = now
        startd.log.info("draining (%s, request id %s) requested by %s: %s; on completion: %s%s", how,
                        drain.request_id, req.identity, drain.reason, on_completion,
                        f"; START while draining: {drain.start}" if drain.start is not None else "")
        self.estimate()
        startd.evaluate_all()
        startd.publish_soon()
        return {"request_id": drain.request_id}

    def _check(self, text: str) -> None:
        """``-check``: the drain begins only if the expression is true on every slot."""
        expr = parse_expr(text)
        for slot in self.startd.all_slots():
            value = slot_ad(self.startd, slot).eval_expr(expr)
            if not isinstance(value, bool):
                raise CommandError(f"Draining check expression does not evaluate to a bool on {slot.name}.",
                                   "CHECK_FAILED")
            if not value:
                raise CommandError(f"Draining check expression is false on {slot.name}.", "CHECK_FAILED")

    async def cmd_cancel_drain_jobs(self, req: Request) -> str:
        drain = self.current
        if drain is None:
            raise CommandError("the machine is not draining", "NOT_DRAINING")
        wanted = req.arg_str("request_id")
        if wanted and str(wanted) != drain.request_id:
            raise CommandError(f"no drain with request id {wanted} (the current one is {drain.request_id})",
                               "BAD_REQUEST")
        self.startd.log.info("draining (request id %s) cancelled by %s", drain.request_id, req.identity)
        self.stop("draining was cancelled")
        return "ok"

    def stop(self, why: str) -> None:
        self.current = None
        self.last_stop = int(time.time())
        self.ended = why
        self.startd.evaluate_all()
        self.startd.publish_soon()

    def progress(self) -> bool:
        """Move a drain on: complete once every claim from before it is gone, then act on completion."""
        startd = self.startd
        drain = self.current
        if drain is None or drain.done:
            return False
        changed = False
        if not drain.completed and all(s.claim is None or s.claim.accepted_while_draining
                                       for s in startd.all_slots()):
            drain.completed = True
            startd.log.info("draining (request id %s): every job from before the drain is gone", drain.request_id)
            changed = True
            for slot in startd.all_slots():
                startd.step(slot)
        if drain.completed and startd.context().all_drained:
            for slot in startd.slots:
                changed |= startd.step(slot)
            drain.done = True
            startd.log.info("draining (request id %s) is complete", drain.request_id)
            if drain.on_completion == "resume":
                self.stop("draining is complete (-resume-on-completion)")
            elif drain.on_completion == "exit":
                keepalive.shut_down_for_good(startd, "draining is complete (-exit-on-completion)")
            elif drain.on_completion == "restart":
                startd.after_exit = "restart"
                startd.log.info("draining is complete (-restart-on-completion): the startd restarts")
                startd.request_stop()
            changed = True
        return changed

    def retirement_ends(self) -> list[float]:
        """When each running job's retirement would end, were a drain to begin now."""
        startd = self.startd
        m = startd.context()
        m.drain = None
        ends = []
        for slot in startd.all_slots():
            if slot.starter is not None and slot.claim is not None:
                ends.append(states.retirement_end(slot, slot_ad(startd, slot, policy=True), startd.slot_policy, m))
        return ends

    def estimate(self) -> None:
        """(ExpectedMachineGracefulDrainingCompletion, ...QuickDrainingCompletion, ...GracefulDrainingBadput,
        ...QuickDrainingBadput), as if a drain began now."""
        now = time.time()
        busy = [s for s in self.startd.all_slots() if s.starter is not None and s.claim is not None]
        ends = self.retirement_ends()
        graceful_end = max([now, *(e for e in ends if not math.isinf(e))])
        quick_badput = sum(s.cpus * (now - s.job_start) for s in busy)
        graceful_badput = sum(s.cpus * (min(e, graceful_end) - s.job_start) for s, e in zip(busy, ends, strict=False))
        self.estimates = int(graceful_end), int(now), int(graceful_badput), int(quick_badput)
