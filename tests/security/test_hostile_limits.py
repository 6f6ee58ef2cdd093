"""The protocol limits from the config, and the typed argument accessors of a request."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcd.config import load
from htcd.errors import UserError
from htcd.wire.auth import Identity
from htcd.wire.errors import CommandError
from htcd.wire.framing import Limits
from htcd.wire.server import Request


def _config(tmp: Path, text: str):
    path = tmp / "htcd_config"
    path.write_text(text)
    return load("SCHEDD", env={"HTCD_CONFIG": str(path)})


def test_limits_come_from_their_knobs(pool_dir: Path) -> None:
    assert Limits.from_config(_config(pool_dir, "")) == Limits()
    limits = Limits.from_config(_config(pool_dir, "SEC_TCP_SESSION_TIMEOUT = 7\nMESSAGE_READ_TIMEOUT = 0\n"
                                        "MAX_UNAUTHENTICATED_MESSAGE_SIZE = 10\nCONNECTION_IDLE_TIMEOUT = 9\n"
                                        "MAX_UNAUTHENTICATED_CONNECTIONS = 3\n"))
    assert (limits.handshake_timeout, limits.frame_timeout, limits.idle_timeout) == (7, 1, 9)
    assert (limits.unauth_frame, limits.max_unauthenticated) == (1024, 3)  # clamped: a zero limit refuses all
    with pytest.raises(UserError) as err:
        Limits.from_config(_config(pool_dir, "SEC_TCP_SESSION_TIMEOUT = soon\n"))
    assert "SEC_TCP_SESSION_TIMEOUT" in str(err.value)


def _req(**args: object) -> Request:
    return Request("TEST", dict(args), Identity("u", "d", 1, "FS"), writer=None, conn=None)  # type: ignore[arg-type]


@pytest.mark.parametrize("call,expect", [
    (lambda r: r.arg_int("n"), "'n' must be an integer, not a string"),
    (lambda r: r.arg_str("b"), "'b' must be a string, not a boolean"),
    (lambda r: r.arg_float("f"), "'f' must be a finite number, not a float"),
    (lambda r: r.arg_list("l", str), "'l' must be a list of strings, not a list"),
    (lambda r: r.arg_ad("ad"), "'ad' must be a ClassAd (a map of attribute name to expression text), not a map"),
    (lambda r: r.arg_map("l"), "'l' must be a map, not a list"),
    (lambda r: r.arg_bool("n"), "'n' must be a boolean, not a string"),
    (lambda r: r.arg_int("missing", required=True), "missing argument 'missing' (an integer)"),
    (lambda r: r.arg_int("b"), "'b' must be an integer, not a boolean"),
])
def test_typed_accessors_refuse_with_the_argument_and_the_type(call, expect: str) -> None:
    req = _req(n="1", b=True, f=float("nan"), l=["a", 1], ad={"Cpus": 1})
    with pytest.raises(CommandError) as err:
        call(req)
    assert err.value.code == "BAD_REQUEST" and expect in str(err.value) and str(err.value).startswith("TEST: ")


def test_typed_accessors_give_values_and_defaults() -> None:
    req = _req(n=3, s="x", f=2, l=("a", "b"), ad={"Cpus": "1"}, b=1, none=None)
    assert (req.arg_int("n"), req.arg_str("s"), req.arg_float("f"), req.arg_bool("b")) == (3, "x", 2.0, True)
    assert req.arg_list("l", str) == ["a", "b"] and req.arg_ad("ad") == {"Cpus": "1"}
    assert req.arg_int("none", 5) == 5 and req.arg_list("gone", str, ["d"]) == ["d"] and req.arg_map("gone") == {}
    assert req.arg_bool("gone") is False and req.arg_str("gone") is None
