"""How the collector keys each ad type (HTCondor's hash keys) and reads literal attribute texts.

Ads arrive as wire texts; the collector evaluates only the few it needs (Name, MyAddress,
sequence numbers, lifetime).  Plain literals -- the common case -- are read without the parser.
"""

from __future__ import annotations

from collections.abc import Callable

from htcd.classad import parse_expr
from htcd.errors import UserError

AD_TYPES = ("Machine", "Scheduler", "Submitter", "Negotiator", "DaemonMaster", "Collector",
            "Accounting", "Generic")
#: The names HTCondor's collector uses for each type in its per-type statistics
#: (``UpdatesTotal_Start``, ``UpdatesLost_Submittor``...).
STATS_NAMES = {"machine": "Start", "scheduler": "Schedd", "submitter": "Submittor",
               "negotiator": "Negotiator", "daemonmaster": "Master", "collector": "Collector",
               "accounting": "Accounting", "generic": "Generic"}

Lookup = Callable[[str], "str | None"]
Key = tuple[str, ...]


def string_value(text: str | None) -> str | None:
    """The value of a string-valued attribute text, or None if it is not a string."""
    if text is None:
        return None
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"' and "\\" not in text and '"' not in text[1:-1]:
        return text[1:-1]
    try:
        value = parse_expr(text).eval()
    except UserError:
        return None
    return value if isinstance(value, str) else None


def int_value(text: str | None) -> int | None:
    """The value of an integer-valued attribute text (a real is truncated), or None."""
    if text is None:
        return None
    t = text.strip()
    if t.isdigit() or (t[:1] == "-" and t[1:].isdigit()):
        return int(t)
    try:
        value = parse_expr(t).eval()
    except UserError:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return int(value)


def host_of(address: str | None) -> str:
    """The host part of a sinful string ``<host:port?...>`` (HTCondor keys by IP, not port)."""
    if not address:
        return ""
    s = address.strip()
    if s.startswith("<"):
        s = s[1:]
    s = s.split(">", 1)[0].split("?", 1)[0]
    if s.startswith("["):
        return s[1:s.find("]")] if "]" in s else s[1:]
    return s.rsplit(":", 1)[0] if s.count(":") == 1 else s


def _name_or_machine(get: Lookup) -> str | None:
    return string_value(get("name")) or string_value(get("machine"))


def _machine_key(get: Lookup) -> Key | None:
    name = string_value(get("name"))
    if not name:
        machine = string_value(get("machine"))
        if not machine:
            return None
        slot = int_value(get("slotid"))
        name = f"{machine}:{slot}" if slot is not None else machine
    return name, host_of(string_value(get("myaddress")) or string_value(get("startdipaddr")))


def _schedd_key(get: Lookup) -> Key | None:
    name = _name_or_machine(get)
    if not name:
        return None
    return (name, string_value(get("scheddname")) or "",
            host_of(string_value(get("myaddress")) or string_value(get("scheddipaddr"))))


def _accounting_key(get: Lookup) -> Key | None:
    name = string_value(get("name"))
    return None if not name else (name, string_value(get("negotiatorname")) or "")


def _name_key(get: Lookup) -> Key | None:
    name = string_value(get("name"))
    return None if not name else (name,)


def _master_key(get: Lookup) -> Key | None:
    name = _name_or_machine(get)
    return None if not name else (name,)


#: Per lower-case type: the key function and the attributes it reads.  Machine ads are keyed by
#: Name (else Machine:SlotID) and the IP of MyAddress; Scheduler and Submitter ads by Name (else
#: Machine) plus ScheddName and the IP; Accounting ads by Name plus NegotiatorName; masters and
#: collectors by Name (else Machine); the rest by Name.
KEYS: dict[str, tuple[Callable[[Lookup], Key | None], tuple[str, ...]]] = {
    "machine": (_machine_key, ("name", "machine", "slotid", "myaddress", "startdipaddr")),
    "scheduler": (_schedd_key, ("name", "machine", "scheddname", "myaddress", "scheddipaddr")),
    "submitter": (_schedd_key, ("name", "machine", "scheddname", "myaddress", "scheddipaddr")),
    "accounting": (_accounting_key, ("name", "negotiatorname")),
    "daemonmaster": (_master_key, ("name", "machine")),
    "collector": (_master_key, ("name", "machine")),
}
DEFAULT_KEY = (_name_key, ("name",))


def key_function(ad_type: str) -> tuple[Callable[[Lookup], Key | None], tuple[str, ...]]:
    return KEYS.get(ad_type.lower(), DEFAULT_KEY)


def canonical_type(ad_type: str) -> str:
    """The spelling of a known type whatever the case the client used (``machine`` -> Machine)."""
    low = ad_type.lower()
    return next((t for t in AD_TYPES if t.lower() == low), ad_type)
