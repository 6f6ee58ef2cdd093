"""Regenerate htcd/config/param_table.tsv from HTCondor's own param table, read out of the
``htcondor`` wheel (a dev extra), so every knob HTCondor 25 defines is known with HTCondor's
default text.

HTCondor's param table is compiled into the wheel's libcondor_utils; the library exports the
functions that walk it by index (name, raw default, type, path flag) and the lookup of
subsystem-specific defaults (``SCHEDD.IsSchedd``), which this script calls through ctypes.
The raw text is what the table needs (``COLLECTOR_HOST = $(CONDOR_HOST)``): ``htcondor2.param``
only gives expanded values.

    .venv/bin/python scripts/gen_param_table.py            # rewrite the table in place
    .venv/bin/python scripts/gen_param_table.py --facts    # print the wheel's facts as JSON

Rows htcd already had keep their type, reconfig/restart, description and section; their default
becomes HTCondor's unless ``KEEP_HTCD_DEFAULT`` names the knob with the reason htcd differs.
Rows HTCondor lacks stay, marked ``htcd-only``.  The ``use`` column says whether htcd acts on a
knob (``used``) or accepts it without acting on it (``unused``), from ``htcd.config.knobscan``.
"""

from __future__ import annotations

import ctypes
import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = os.path.join(ROOT, "htcd", "config", "param_table.tsv")
#: The subsystems HTCondor's table has subsystem-specific defaults for (``[SCHEDD.IsSchedd]``).
SUBSYSTEMS = ("COLLECTOR", "MASTER", "NEGOTIATOR", "SCHEDD", "SHADOW", "STARTD", "STARTER", "SUBMIT", "TOOL",
              "GRIDMANAGER", "CREDD", "KBDD", "DAGMAN", "HAD", "REPLICATION", "SHARED_PORT", "GANGLIAD")
_TYPES = {0: "string", 1: "int", 2: "bool", 3: "float", 4: "int"}


class _KeyValue(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char_p), ("default", ctypes.POINTER(ctypes.c_char_p))]


def wheel_facts() -> dict[str, object]:
    """HTCondor's param table: {"knobs": [[name, raw default or None, type, is_path, tags]...],
    "subsys": {"SUBSYS.NAME": raw}, "defined": the names ``htcondor2.param`` has with an empty
    config, "version": the wheel's}."""
    os.environ["CONDOR_CONFIG"] = "/dev/null"
    import htcondor2  # only after CONDOR_CONFIG is set

    libs = glob.glob(os.path.join(os.path.dirname(htcondor2.__file__), "..", "htcondor.libs",
                                  "libcondor_utils_*.so"))
    if len(libs) != 1:
        raise SystemExit(f"expected one libcondor_utils in the htcondor wheel, found {libs}")
    lib = ctypes.CDLL(libs[0])

    def fn(symbol: str, restype: object, *argtypes: object) -> ctypes._CFuncPtr:
        f = getattr(lib, symbol)
        f.restype = restype
        f.argtypes = list(argtypes)
        return f

    name_by_id = fn("_Z24param_default_name_by_idi", ctypes.c_char_p, ctypes.c_int)
    raw_by_id = fn("_Z26param_default_rawval_by_idi", ctypes.c_char_p, ctypes.c_int)
    type_by_id = fn("_Z24param_default_type_by_idi", ctypes.c_int, ctypes.c_int)
    path_by_id = fn("_Z26param_default_ispath_by_idi", ctypes.c_bool, ctypes.c_int)
    help_by_id = fn("_Z24param_default_help_by_idiRPKcS1_S1_", ctypes.c_int, ctypes.c_int,
                    *[ctypes.POINTER(ctypes.c_char_p)] * 3)
    subsys_lookup = fn("_Z27param_subsys_default_lookupPKcS0_", ctypes.POINTER(_KeyValue), ctypes.c_char_p,
                       ctypes.c_char_p)
    knobs: list[list[object]] = []
    i = 0
    while (name := name_by_id(i)) is not None:
        raw = raw_by_id(i)
        descrip, tags, used_for = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_char_p()
        help_by_id(i, ctypes.byref(descrip), ctypes.byref(tags), ctypes.byref(used_for))
        knobs.append([name.decode(), None if raw is None else raw.decode(), _TYPES.get(type_by_id(i), "string"),
                      bool(path_by_id(i)), (tags.value or b"").decode()])
        i += 1
    subsys: dict[str, str | None] = {}
    for s in SUBSYSTEMS:
        for name, *_ in knobs:
            p = subsys_lookup(s.encode(), str(name).encode())
            if p:
                d = p.contents.default
                subsys[f"{s}.{name}"] = d[0].decode() if d and d[0] is not None else None
    return {"version": htcondor2.version(), "knobs": knobs, "subsys": subsys,
            "defined": sorted(htcondor2.param.keys())}


#: Knobs whose default htcd keeps, though HTCondor's differs, and why.  A ``-(V)`` default
#: (undefined, read as V) for a knob HTCondor leaves undefined needs no entry.
KEEP_HTCD_DEFAULT: dict[str, str] = {
    "USE_SHARED_PORT": "HTCondor's true would move every pool's daemons behind the shared port at once; htcd's "
                       "default stays false until its test pools run that way (docs/networking.md); set it true "
                       "explicitly to use one port per host",
    "COLLECTOR_PORT": "a defined COLLECTOR_PORT makes htcd's collector listen on it instead of the port of "
                      "COLLECTOR_HOST (personal pools use port 0 there); undefined, read as 9618",
    "COLLECTOR_SOCKET_BUFSIZE": "the same number (10000*1024) written out: htcd reads it as a size, which takes "
                                "no arithmetic",
    "MAX_JOBS_PER_SUBMISSION": "HTCondor's 20000 would refuse the 100,000-proc submissions htcd's schedd is "
                               "benchmarked with; the schedd's limit stays open until its owners decide",
    "JOB_DEFAULT_REQUESTMEMORY": "htcd submit follows the 24.x Submit.jobs() it is tested against (the 25.x "
                                 "wheel cannot make job ads); 25.x says 128",
    "JOB_DEFAULT_REQUESTDISK": "as JOB_DEFAULT_REQUESTMEMORY: the 24.x default htcd submit is tested against",
    "MODIFY_REQUEST_EXPR_REQUESTDISK": "HTCondor's subtracts $(CATALOG_SPACE), the space of common-file catalogs, "
                                       "which htcd does not have",
    "PERIODIC_CHECKPOINT": "HTCondor's would have htcd's startd ask every running job for a checkpoint about "
                           "every 3 hours; htcd's startd reads it undefined as FALSE",
    "SEC_DEFAULT_AUTHENTICATION_METHODS": "htcd implements FS, TOKEN (IDTOKENS) and SSL, not KERBEROS or SCITOKENS",
    "TRUST_DOMAIN": "htcd's tokens name the pool by its central manager ($(COLLECTOR_HOST)), so every host of "
                    "a pool agrees without a UID_DOMAIN setting",
    "TRUST_DOMAIN_CAFILE": "htcd keeps its generated TLS files under $(LOCAL_DIR)/ssl",
    "TRUST_DOMAIN_CAKEY": "htcd keeps the pool CA key beside the pool signing key ($(SEC_PASSWORD_DIRECTORY))",
    "AUTH_SSL_SERVER_CERTFILE": "htcd generates the host certificate under $(LOCAL_DIR)/ssl (no /etc/pki)",
    "AUTH_SSL_SERVER_KEYFILE": "htcd generates the host key under $(LOCAL_DIR)/ssl (no /etc/pki)",
    "AUTH_SSL_SERVER_CAFILE": "htcd trusts the pool CA it generates ($(TRUST_DOMAIN_CAFILE)) by default",
    "AUTH_SSL_CLIENT_CAFILE": "htcd trusts the pool CA it generates ($(TRUST_DOMAIN_CAFILE)) by default",
    "SEC_TOKEN_DIRECTORY": "HTCondor's empty default means ~/.condor/tokens.d in its code; htcd writes that path",
    "BASE_CGROUP": "htcd's jobs go in a cgroup named after htcd",
    "INTERACTIVE_SUBMIT_FILE": "htcd installs no interactive.sub",
}
#: Knobs HTCondor leaves undefined that htcd's code reads as a value (the ``-(V)`` form).
READ_AS: dict[str, str] = {
    "START_DAEMONS": "true", "SHUTDOWN_GRACEFUL_TIMEOUT": "1800", "TRUST_UID_DOMAIN": "false",
    "SOFT_UID_DOMAIN": "true", "COLLECTOR_PORT": "9618",
}
HEADER = """\
# name\ttype\tdefault ('-' = no default; '-(V)' = undefined, but read as V)\treconfig|restart\tuse\tdescription
# Generated by scripts/gen_param_table.py from HTCondor's param table (the htcondor wheel, {version}) and
# htcd's own rows; edit a row's type, when, section or description here, then run the script again.
# use: used (htcd acts on it), unused (accepted, not used by htcd), htcd-only (not in HTCondor's table).
# Computed at load time (not listed): see COMPUTED in htcd/config/_table.py.
# A line '# == Title' starts a section (the grouping of docs/knobs.md); a name with <...> is a family of knobs.
"""
NEW_SECTION = "HTCondor knobs htcd accepts"
#: What a kept default's description says of HTCondor's (the generator rewrites it each run).
NOTE = " HTCondor's default: "


def _default_text(raw: str | None) -> str:
    """A default as one TSV cell: HTCondor writes some over several lines (CATALOG_SPACE), kept
    as ``\\n`` (no default holds a backslash before an n)."""
    if raw is None:
        return "-"
    if "\\n" in raw or "\t" in raw:
        raise SystemExit(f"a default the table cannot hold as it is: {raw!r}")
    return raw.replace("\n", "\\n")


def generate(facts: dict, current: str) -> str:
    """The new table text from the wheel's facts and the current table."""
    knobs = {str(k[0]).upper(): k for k in facts["knobs"]}
    subsys = {str(k).upper(): (str(k), v) for k, v in facts["subsys"].items()}
    from htcd.config._table import COMPUTED

    computed = {n.upper() for n, _ in COMPUTED.values()} | {"SUBSYSTEM"}
    rows: list[list[str] | str] = []  # a row, or a comment / blank line kept as it is
    seen: set[str] = set()
    for line in current.splitlines():
        if not line.strip() or line.startswith("#"):
            if not line.startswith(("# name", "# Generated", "# htcd's own", "# use:", "# Computed", "# A line")):
                rows.append(line)
            continue
        cells = line.split("\t")
        if cells[0].upper() in computed:  # htcd computes it from the machine, as HTCondor does
            continue
        if len(cells) == 5:  # before the use column
            cells.insert(4, "used")
        rows.append(cells)
        seen.add(cells[0].upper())
    defaults: dict[str, str | None] = {}
    for row in rows:
        if isinstance(row, str):
            continue
        key = row[0].upper()
        k = knobs.get(key) or subsys.get(key)
        if k is None:
            if "<" not in row[0]:
                row[4] = "htcd-only"
            continue
        if isinstance(k, tuple):
            name, raw = k
        else:
            name, raw = str(k[0]), k[1]
        row[0] = name
        if row[4] == "htcd-only":
            row[4] = "used"
        row[5] = row[5].split(NOTE)[0].rstrip()
        if key in KEEP_HTCD_DEFAULT:
            theirs = "none" if raw is None else " ".join(raw.split())
            row[5] = f"{row[5]}{NOTE}{theirs}; htcd keeps its own: {KEEP_HTCD_DEFAULT[key]}."
            continue
        if raw is None and key in READ_AS:
            row[2] = f"-({READ_AS[key]})"
        elif raw is not None or not row[2].startswith("-("):
            row[2] = _default_text(raw)
    new: list[list[str]] = []
    for key, (name, raw, typ, is_path, tags) in sorted(knobs.items()):
        if key not in seen and key not in computed:
            desc = f"HTCondor's knob (its tags: {tags})." if tags else "HTCondor's knob."
            new.append([str(name), "path" if is_path else str(typ), _default_text(raw), "reconfig", "unused", desc])
    for key, (name, raw) in sorted(subsys.items()):
        if key not in seen:
            new.append([name, "string", _default_text(raw), "reconfig", "unused",
                        f"HTCondor's default of {name.split('.')[1]} for the {name.split('.')[0].lower()}."])
    if new:
        rows.append("")
        rows.append(f"# == {NEW_SECTION}")
        rows.extend(new)
    for row in rows:
        if not isinstance(row, str):
            defaults[row[0].upper()] = None if row[2].startswith("-") else row[2]
    from htcd.config.knobscan import read_names

    read = read_names(defaults, defaults)
    for row in rows:
        if not isinstance(row, str) and row[4] == "unused" and row[0].upper() in read:
            row[4] = "used"
    body = "\n".join(r if isinstance(r, str) else "\t".join(r) for r in rows).strip("\n")
    return HEADER.format(version=facts["version"].split()[1]) + "\n" + body + "\n"


def main(argv: list[str]) -> int:
    if argv == ["--facts"]:
        json.dump(wheel_facts(), sys.stdout)
        return 0
    if argv:
        print(f"usage: {sys.argv[0]} [--facts]", file=sys.stderr)
        return 2
    sys.path.insert(0, ROOT)
    with open(TABLE, encoding="utf-8") as f:
        current = f.read()
    text = generate(wheel_facts(), current)
    with open(TABLE, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"{TABLE}: {sum(1 for x in text.splitlines() if x and not x.startswith('#'))} rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
