"""Fuzzing of the frame decoders: plain (``decode_body``), paced (``decode_paced``, big requests)
and the server's frame reader (``read_request``: lengths, truncation, limits).  Whatever the bytes,
the answer is a map or a ProtocolError, and the two decoders agree."""

from __future__ import annotations

import asyncio
import struct
from typing import Any

import msgpack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import scaled

from htcd.wire.errors import ProtocolError
from htcd.wire.framing import MAX_DEPTH, Limits, decode_body, encode, frame_limit
from htcd.wire.server import decode_paced, read_request

COUNTS: dict[str, int] = {"decode_body": 0, "decode_paced": 0, "read_request": 0}
FUZZ = settings(database=None, deadline=None, suppress_health_check=list(HealthCheck), max_examples=scaled(560))

SAMPLES = [
    {"cmd": "SUBMIT", "args": {"cluster_id": 1, "cluster_ad": {"Cmd": '"/bin/true"'},
                               "proc_ads": [{"ProcId": "0"}, {"ProcId": "1"}]}},
    {"cmd": "UPDATE_AD", "args": {"updates": [{"ad_type": "Machine", "ad": {"Name": '"slot1@x"'}}]}},
    {"cmd": "QUERY_ADS", "args": {"ad_type": "Any", "projection": ["Name"], "limit": 3}},
    {"hello": "htcd", "version": 1, "methods": ["FS", "TOKEN"]},
    {"cmd": "ACTIVATE_CLAIM", "args": {"files": {"in.txt": b"\x00" * 40}, "claim_id": "abc"}},
]
BODIES = [msgpack.packb(s, use_bin_type=True) for s in SAMPLES]


def _hostile() -> list[bytes]:
    """Hand-made bodies the generators would rarely find: deep nesting, lying lengths."""
    deep = b"\x81\xa1a" + b"\x91" * (MAX_DEPTH + 5) + b"\xc0"
    return [
        deep, b"\x91" * 5000 + b"\xc0",
        b"\xdd" + struct.pack(">I", 2 ** 32 - 1),  # an array claiming 4 Gi elements
        b"\xdf" + struct.pack(">I", 2 ** 32 - 1),  # a map claiming 4 Gi entries
        b"\xdb" + struct.pack(">I", 2 ** 32 - 1) + b"x",  # a string claiming 4 GiB
        b"\xc6" + struct.pack(">I", 2 ** 32 - 1) + b"x",  # binary claiming 4 GiB
        b"\x81\x91\x01\x01", b"\x81\x80\x01",  # array and map as map keys
        b"\xc1", b"", b"\x80" + b"\x00",  # reserved byte, empty, trailing data
    ]


def mutated() -> st.SearchStrategy[bytes]:
    """A valid body with bytes flipped, inserted, cut or a length field made to lie."""
    def mutate(body: bytes, ops: list[tuple[int, int, int]]) -> bytes:
        b = bytearray(body)
        for kind, pos, val in ops:
            if not b:
                break
            i = pos % len(b)
            if kind == 0:
                b[i] = val
            elif kind == 1:
                b.insert(i, val)
            elif kind == 2:
                del b[i:]
            else:
                b[i:i] = bytes([0xDD]) + struct.pack(">I", val * 0x01010101)
        return bytes(b)

    return st.builds(mutate, st.sampled_from(BODIES),
                     st.lists(st.tuples(st.integers(0, 3), st.integers(0, 1 << 16), st.integers(0, 255)),
                              min_size=1, max_size=4))


BODY = st.one_of(mutated(), st.binary(max_size=64), st.sampled_from(_hostile()))
BATCH = st.lists(BODY, min_size=40, max_size=40)


def _plain(body: bytes) -> Any:
    try:
        return decode_body(body)
    except ProtocolError as exc:
        assert str(exc)  # a reason for the log
        return ProtocolError


@FUZZ
@given(BATCH)
def test_decoders_answer_a_map_or_a_protocol_error_and_agree(bodies: list[bytes]) -> None:
    async def paced_all() -> list[Any]:
        out = []
        for body in bodies:
            try:
                out.append(await decode_paced(body))
            except ProtocolError:
                out.append(ProtocolError)
        return out

    plain = [_plain(b) for b in bodies]
    paced = asyncio.run(paced_all())
    COUNTS["decode_body"] += len(bodies)
    COUNTS["decode_paced"] += len(bodies)
    for body, a, b in zip(bodies, plain, paced, strict=True):
        assert a is ProtocolError or isinstance(a, dict)
        assert a == b, f"the decoders disagree on {body[:80]!r}: {a!r} vs {b!r}"


FRAMES = st.one_of(
    st.builds(lambda b: struct.pack(">I", len(b)) + b, BODY),  # honest lengths
    st.builds(lambda n, b: struct.pack(">I", n) + b, st.integers(0, 2 ** 32 - 1), BODY),  # lying lengths
    st.binary(max_size=16),  # truncated headers
)


@FUZZ
@given(st.lists(FRAMES, min_size=40, max_size=40))
def test_frame_reader_refuses_cleanly(streams: list[bytes]) -> None:
    """Each stream, read before authentication (64 KiB limit) and after: a request, a clean end,
    or a ProtocolError; never a read of more than the limit."""
    limits = Limits()

    async def read_all() -> None:
        for data in streams:
            for limit in (limits.unauth_frame, None):
                reader = asyncio.StreamReader()
                reader.feed_data(data)
                reader.feed_eof()
                token = frame_limit.set(limit) if limit else None
                try:
                    msg = await read_request(reader, limits)
                    assert msg is None or isinstance(msg, dict)
                except ProtocolError as exc:
                    assert str(exc)
                finally:
                    if token is not None:
                        frame_limit.reset(token)
                COUNTS["read_request"] += 1

    asyncio.run(read_all())


def test_hostile_bodies_are_refused_with_a_reason() -> None:
    for body in _hostile():
        if body == b"\x80\x00" or body == b"\x81\x80\x01":
            continue
        try:
            decode_body(body)
        except ProtocolError as exc:
            assert "undecodable" in str(exc) or "not a map" in str(exc)
        else:
            raise AssertionError(f"{body[:20]!r} was accepted")


def test_nesting_limit_allows_real_requests_and_refuses_deeper() -> None:
    ok: Any = "x"
    for _ in range(MAX_DEPTH - 1):
        ok = [ok]
    assert decode_body(encode({"a": ok})[4:]) == {"a": ok}
    try:
        decode_body(encode({"a": [ok]})[4:])
    except ProtocolError as exc:
        assert f"deeper than {MAX_DEPTH}" in str(exc)
    else:
        raise AssertionError("a frame nested too deep was accepted")
    assert asyncio.run(decode_paced(encode({"a": ok})[4:])) == {"a": ok}


def test_zz_counts() -> None:
    """The number of inputs of this module's fuzz tests (run last in the module)."""
    print(f"frame fuzz inputs: {COUNTS}, total {sum(COUNTS.values())}")
    assert sum(COUNTS.values()) == 0 or COUNTS["decode_body"] >= scaled(10_000)
