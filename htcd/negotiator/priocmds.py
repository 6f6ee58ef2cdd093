"""The negotiator's priority commands (``htcd userprio``): read the accountant's records, set a
priority factor or a real priority, reset usage, delete a customer."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from htcd.wire.errors import CommandError
from htcd.wire.server import Handler, Request

if TYPE_CHECKING:
    from htcd.negotiator.accountant import Accountant


class PriorityCommands:
    accountant: Accountant

    def priority_handlers(self) -> dict[str, Handler]:
        return {"GET_PRIORITY": self.cmd_get_priority, "SET_PRIORITYFACTOR": self.cmd_set_factor,
                "SET_PRIORITY": self.cmd_set_priority, "RESET_USAGE": self.cmd_reset_usage,
                "DELETE_USER": self.cmd_delete_user}

    async def cmd_get_priority(self, req: Request) -> dict[str, Any]:
        acct = self.accountant
        return {"last_update": acct.last_update, "now": time.time(),
                "customers": [acct.record(name) for name in sorted(acct.customers)]}

    def _name(self, req: Request) -> str:
        name = req.arg_str("name", required=True)
        if "@" not in name:
            raise CommandError(f"{name!r} is not a full user name: use user@uid_domain", "BAD_NAME")
        return name

    async def _save(self) -> None:
        await asyncio.to_thread(self.accountant.write, self.accountant.snapshot())

    async def cmd_set_factor(self, req: Request) -> str:
        name = self._name(req)
        try:
            self.accountant.set_factor(name, req.arg_float("factor", required=True))
        except (TypeError, ValueError) as exc:
            raise CommandError(f"bad priority factor: {exc}", "BAD_VALUE") from None
        await self._save()
        return "ok"

    async def cmd_set_priority(self, req: Request) -> str:
        name = self._name(req)
        try:
            self.accountant.set_priority(name, req.arg_float("priority", required=True))
        except (TypeError, ValueError) as exc:
            raise CommandError(f"bad priority: {exc}", "BAD_VALUE") from None
        await self._save()
        return "ok"

    async def cmd_reset_usage(self, req: Request) -> str:
        if req.arg_bool("all"):
            for name in list(self.accountant.customers):
                self.accountant.reset_usage(name)
        else:
            self.accountant.reset_usage(self._name(req))
        await self._save()
        return "ok"

    async def cmd_delete_user(self, req: Request) -> str:
        name = self._name(req)
        if not self.accountant.delete(name):
            raise CommandError(f"the accountant has no record of {name}", "NO_SUCH_USER")
        await self._save()
        return "ok"
