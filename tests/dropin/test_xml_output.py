"""``-xml`` on a real pool, through the condor_* names and as ``htcd ...``: condor_q, condor_history
and condor_status print documents that Python's minidom reads, and that two readers written the way
third-party tools read this form accept:

- glideinWMS's ``xml2list`` (condorMonitor): an expat parser with start/end/character handlers, one
  dict per ``<c>``, the attribute named by ``n``, its value typed by the element (``i`` int, ``r``
  float, ``b`` from its ``v``, ``un`` None, ``s``/``e`` text), any other element refused;
- PanDA harvester's condor_q -xml reader: the ``</classads>`` + header pairs between batches are
  cut out, the rest is read with ElementTree, each ``<a>`` taken by its one child.

Both parsers below are written here from those documented approaches, not copied."""

from __future__ import annotations

import re
import sys
import xml.dom.minidom
import xml.etree.ElementTree as ET
import xml.parsers.expat
from typing import Any

CondorPool = Any  # the condor_pool fixture's (tests/dropin/conftest.py)

IDLE = 'executable = /bin/true\nrequirements = false\nlog = xml.log\n+Note = "a & b < c > \\"d\\""\nqueue 2\n'
_HEADER = '<?xml version="1.0"?>\n<!DOCTYPE classads SYSTEM "classads.dtd">\n<classads>\n'


def glidein_xml2list(text: str) -> list[dict[str, Any]]:
    """glideinWMS-style: expat events, values typed by their element."""
    ads: list[dict[str, Any]] = []
    state: dict[str, Any] = {"ad": None, "name": None, "type": None, "val": ""}

    def start(name: str, attrs: dict[str, str]) -> None:
        if name == "c":
            state["ad"] = {}
        elif name == "a":
            state.update(name=attrs["n"], type="s", val="")
        elif name in ("i", "r", "s", "e"):
            state["type"] = name
        elif name == "b":
            state.update(type="b", val=attrs.get("v") in ("T", "t", "1"))
        elif name == "un":
            state.update(type="un", val=None)
        elif name != "classads":
            raise TypeError(f"unsupported element {name}")

    def end(name: str) -> None:
        if name == "c":
            ads.append(state["ad"])
        elif name == "a":
            t, v = state["type"], state["val"]
            state["ad"][state["name"]] = int(v) if t == "i" else float(v) if t == "r" else v

    def chars(data: str) -> None:
        if state["type"] in ("i", "r", "s", "e") and state["name"] is not None:
            state["val"] += data

    p = xml.parsers.expat.ParserCreate()
    p.StartElementHandler, p.EndElementHandler, p.CharacterDataHandler = start, end, chars
    p.Parse(text, True)
    return ads


_BETWEEN = re.compile(r'</classads>\s*<\?xml version="1\.0"\?>\s*<!DOCTYPE classads SYSTEM "classads\.dtd">'
                      r"\s*<classads>")


def panda_reader(text: str) -> list[dict[str, Any]]:
    """PanDA-harvester-style: join the batches into one document, read it with ElementTree."""
    root = ET.fromstring(_BETWEEN.sub("", text))
    ads = []
    for c in root.findall("c"):
        ad: dict[str, Any] = {}
        for a in c.findall("a"):
            (v,) = list(a)
            ad[a.attrib["n"]] = {"i": lambda t: int(t), "r": lambda t: float(t)}.get(v.tag, lambda t: t)(v.text)
            if v.tag == "b":
                ad[a.attrib["n"]] = v.attrib["v"] == "t"
        ads.append(ad)
    return ads


def _minidom_ads(text: str) -> list[dict[str, str]]:
    dom = xml.dom.minidom.parseString(text)
    assert dom.documentElement.tagName == "classads"
    out = []
    for c in dom.documentElement.childNodes:
        if c.nodeType == c.ELEMENT_NODE:
            assert c.tagName == "c"
            out.append({a.getAttribute("n"): a.firstChild.tagName for a in c.childNodes
                        if a.nodeType == a.ELEMENT_NODE})
    return out


def _check(text: str, n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    assert text.startswith(_HEADER)
    assert len(_minidom_ads(text)) == n
    g, p = glidein_xml2list(text), panda_reader(text)
    assert len(g) == len(p) == n
    return g, p


def test_q_history_status_xml(condor_pool: CondorPool) -> None:
    cp = condor_pool
    (cp.pool.jobs_dir / "xml.sub").write_text(IDLE)
    r = cp.run("condor_submit", "xml.sub")
    assert r.returncode == 0, r.stderr
    cluster = int(r.stdout.rsplit("cluster ", 1)[1].rstrip(".\n"))

    r = cp.run("condor_q", str(cluster), "-xml")
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.endswith("</c>\n</classads>\n")
    g, p = _check(r.stdout, 2)
    for ads in (g, p):
        assert sorted((a["ClusterId"], a["ProcId"]) for a in ads) == [(cluster, 0), (cluster, 1)]
        assert all(a["JobStatus"] == 1 and a["Note"] == 'a & b < c > "d"' for a in ads)
        assert all(a["Owner"] for a in ads)
    assert '<a n="Note"><s>a &amp; b &lt; c &gt; "d"</s></a>' in r.stdout
    assert cp.run(sys.executable, "-m", "htcd", "q", str(cluster), "-xml").stdout == r.stdout
    r = cp.run("condor_q", "-userlog", "xml.log", "-xml")
    assert sorted(a["ProcId"] for a in panda_reader(r.stdout)) == [0, 1]
    r = cp.run("condor_q", "-xml", "-constraint", "false")
    assert r.stdout == _HEADER + "</classads>\n"  # header and footer even for no job
    r = cp.run("condor_q", "-xml", "-json")
    assert r.returncode == 1 and "not allowed with" in r.stderr and "Traceback" not in r.stderr

    assert cp.run("condor_rm", str(cluster)).returncode == 0
    r = cp.run("condor_history", str(cluster), "-xml")
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.startswith(_HEADER + "\n") and r.stdout.endswith("</c>\n\n</classads>\n\n")
    g, p = _check(r.stdout, 2)
    assert sorted(a["ProcId"] for a in g) == [0, 1] and {a["JobStatus"] for a in p} == {3}
    assert cp.run(sys.executable, "-m", "htcd", "history", str(cluster), "-xml").stdout == r.stdout

    r = cp.run("condor_status", "-xml")
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.endswith("</c>\n\n</classads>\n")  # a blank line after each ad
    slots = _minidom_ads(r.stdout)
    assert slots and all(s["MyType"] == "s" and s["Name"] == "s" for s in slots)
    p = panda_reader(r.stdout)
    assert all(a["MyType"] == "Machine" for a in p)
    r = cp.run("condor_status", "-xml", "-attributes", "Name,Cpus,Memory")
    g, p = _check(r.stdout, len(slots))
    assert all(sorted(a) == ["Cpus", "Memory", "Name"] and isinstance(a["Cpus"], int) for a in g)
    r = cp.run(sys.executable, "-m", "htcd", "status", "-schedd", "-xml")
    assert [a["MyType"] for a in panda_reader(r.stdout)] == ["Scheduler"]
