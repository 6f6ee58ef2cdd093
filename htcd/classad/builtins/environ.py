"""Job environments and users: envV1ToV2(), mergeEnvironment(), userHome(), userMap()."""

from __future__ import annotations

from ..registry import strict
from ..values import ERROR, UNDEFINED, Value

# ---------------------------------------------------------------- environments

_ENV_SPECIAL = frozenset(" \t\n\r\f\v'")


def _env_quote(s: str) -> str:
    """One word of the space-separated environment syntax: blanks and quotes quoted one by one."""
    if not any(ch in _ENV_SPECIAL for ch in s):
        return s
    return "".join(("'" + ("''" if ch == "'" else ch) + "'") if ch in _ENV_SPECIAL else ch for ch in s)


def _env_text(env: dict[str, str]) -> str:
    return " ".join(_env_quote(k) + "=" + _env_quote(env[k]) for k in sorted(env))


def split_v2_words(text: str) -> list[str] | None:
    """Split the space-separated syntax into words, undoing single quotes (``''`` is a quote
    inside them); None when a quote is left open."""
    words: list[str] = []
    cur: list[str] = []
    in_word = quoted = False
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if quoted:
            if ch == "'":
                if text.startswith("''", i):
                    cur.append("'")
                    i += 1
                else:
                    quoted = False
            else:
                cur.append(ch)
        elif ch == "'":
            quoted = in_word = True
        elif ch in " \t\n\r\f\v":
            if in_word:
                words.append("".join(cur))
                cur, in_word = [], False
        else:
            cur.append(ch)
            in_word = True
        i += 1
    if quoted:
        return None
    if in_word:
        words.append("".join(cur))
    return words


def _env_add(env: dict[str, str], entry: str) -> bool:
    name, eq, value = entry.partition("=")
    if not eq or not name:
        return False
    env[name] = value
    return True


@strict("envV1ToV2")
def _env_v1_to_v2(a: list[Value]) -> object:
    """Old ``A=1;B=2`` environment text to the space-separated form (names sorted, last wins)."""
    if len(a) != 1:
        return ERROR
    v = a[0]
    if v is UNDEFINED or type(v) is not str:
        return v if v is UNDEFINED else ERROR
    env: dict[str, str] = {}
    for entry in v.split(";"):
        entry = entry.lstrip()
        if entry and not _env_add(env, entry):
            return ERROR
    return _env_text(env)


@strict("mergeEnvironment")
def _merge_environment(a: list[Value]) -> object:
    """Environments in the space-separated form merged left to right (UNDEFINED counts as empty)."""
    env: dict[str, str] = {}
    for v in a:
        if v is UNDEFINED:
            continue
        if type(v) is not str:
            return ERROR
        words = split_v2_words(v)
        if words is None or not all(_env_add(env, w) for w in words):
            return ERROR
    return _env_text(env)


# ---------------------------------------------------------------- users

@strict("userHome")
def _user_home(a: list[Value]) -> object:
    """The user's home directory from the password database, else the default (if a string)."""
    if len(a) not in (1, 2):
        return ERROR
    user = a[0]
    if user is ERROR or (user is not UNDEFINED and type(user) is not str):
        return ERROR
    home = None
    if type(user) is str and user:
        import pwd

        try:
            home = pwd.getpwnam(user).pw_dir
        except (KeyError, ValueError):
            home = None
    if home:
        return home
    if len(a) == 2 and type(a[1]) is str:
        return a[1]
    return UNDEFINED


@strict("userMap")
def _user_map(a: list[Value]) -> object:
    """htcd defines no ClassAd user maps, so every user is in no group: the default group when
    one is given, else UNDEFINED (what HTCondor answers with no map configured)."""
    if not 2 <= len(a) <= 4:
        return ERROR
    if (type(a[0]) is not str or type(a[1]) is not str) and (a[0] is ERROR or a[1] is ERROR):
        return ERROR
    return a[3] if len(a) == 4 else UNDEFINED
