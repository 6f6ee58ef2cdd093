"""The ClassAd XML form (htcd.classad.xml): every ad of the harvested corpus (tests/corpus/classad,
from HTCondor's manual) is written as XML, read back with Python's own XML parsers (minidom and
ElementTree) and rebuilt into ClassAd text by a decoder kept here; each attribute must come back as
the same expression and evaluate to the same value in the original ad.  The layout is checked
against the examples HTCondor's own tests and third-party readers show."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import xml.dom.minidom
import xml.etree.ElementTree as ET

import pytest

from htcd.classad import ClassAd, RelTime, parse_ad, parse_expr, parse_old_ad, unparse
from htcd.classad.expr import AdExpr, ListExpr, Literal
from htcd.classad.nodes import RelTimeLiteral
from htcd.classad.values import quote_string
from htcd.classad.xml import HEADER, ad_xml, document, string_text

CORPUS = os.path.join(os.path.dirname(os.path.dirname(__file__)), "corpus", "classad", "ads.jsonl")

# Every element the form has, and what each may hold (there is no DTD for it in HTCondor's
# repository: these are the forms its tools print and its XML reader's test reads).
VALUE_TAGS = {"s", "i", "r", "b", "un", "er", "e", "l", "c", "at", "rt"}
EMPTY_TAGS = {"b", "un", "er"}
TEXT_TAGS = {"s", "i", "r", "e", "at", "rt"}

_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
                   "\\": "\\", '"': '"', "'": "'", "?": "?"}


def _corpus() -> list[ClassAd]:
    ads = []
    with open(CORPUS) as f:
        for line in f:
            if line.strip():
                entry = json.loads(line)
                ads.append(parse_old_ad(entry["ad"]) if entry["format"] == "old" else parse_ad(entry["ad"]))
    return ads


def unescape(text: str) -> str:
    """The string a ``<s>`` text stands for: C escapes and octal bytes, read without htcd's parser."""
    out = bytearray()
    i = 0
    while i < len(text):
        ch = text[i]
        if ch != "\\":
            out += ch.encode("utf-8", "surrogateescape")
            i += 1
            continue
        nxt = text[i + 1]
        if nxt in "01234567":
            j = i + 1
            while j < len(text) and j < i + 4 and text[j] in "01234567":
                j += 1
            out.append(int(text[i + 1:j], 8))
            i = j
        else:
            out += _SIMPLE_ESCAPES[nxt].encode()
            i += 2
    return out.decode("utf-8", "surrogateescape")


def _text(el: ET.Element) -> str:
    return el.text or ""


def rebuild(el: ET.Element) -> str:
    """ClassAd text for one value element."""
    tag = el.tag
    assert tag in VALUE_TAGS, tag
    if tag in EMPTY_TAGS:
        assert len(el) == 0 and not el.text
    if tag in TEXT_TAGS:
        assert len(el) == 0
    if tag == "s":
        return quote_string(unescape(_text(el)))
    if tag == "i":
        return str(int(_text(el)))
    if tag == "r":
        t = _text(el)
        if t in ("NaN", "INF", "-INF"):
            return f'real("{t}")'
        x = float(t)
        assert t == ("0.0" if x == 0 else f"{x:.15E}")
        return t
    if tag == "b":
        assert el.attrib == {"v": el.attrib["v"]} and el.attrib["v"] in ("t", "f")
        return "true" if el.attrib["v"] == "t" else "false"
    if tag == "un":
        return "undefined"
    if tag == "er":
        return "error"
    if tag == "at":
        return f'absTime("{_text(el)}")'
    if tag == "rt":
        return f'relTime("{_text(el)}")'
    if tag == "e":
        return _text(el)
    if tag == "l":
        return "{ " + ", ".join(rebuild(x) for x in el) + " }"
    return "[ " + "; ".join(f"{a.attrib['n']} = {rebuild(_only(a))}" for a in el) + " ]"


def _only(a: ET.Element) -> ET.Element:
    assert a.tag == "a" and list(a.attrib) == ["n"] and len(a) == 1 and not (a.text or "").strip()
    return a[0]


def _expected_tag(tree: object) -> str:
    if type(tree) is RelTimeLiteral:
        return "r"
    if isinstance(tree, Literal):
        v = tree.value
        return {bool: "b", int: "i", float: "r", str: "s"}.get(type(v)) or \
            ("un" if unparse(v) == "undefined" else "er" if unparse(v) == "error" else "at")
    if isinstance(tree, ListExpr):
        return "l"
    if isinstance(tree, AdExpr):
        return "c"
    return "e"


def _same_value(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return unparse(a) == unparse(b)


ADS = _corpus()


def test_the_corpus_is_there() -> None:
    assert len(ADS) == 55
    assert sum(len(a) for a in ADS) > 400


def test_every_corpus_attribute_round_trips_through_elementtree() -> None:
    text = document(ADS)
    root = ET.fromstring(text)
    assert root.tag == "classads" and len(root) == len(ADS)
    checked = 0
    for ad, c in zip(ADS, root, strict=True):
        assert c.tag == "c"
        assert [a.attrib["n"] for a in c] == list(ad)
        for a in c:
            name = a.attrib["n"]
            el = _only(a)
            tree = ad[name]
            assert el.tag == _expected_tag(tree), name
            back = parse_expr(rebuild(el))
            if type(tree) is not RelTimeLiteral:  # that one comes back as the real it stands for
                assert str(back) == str(tree), name
            assert _same_value(back.eval(ad), ad.eval(name)), name
            if el.tag in ("i", "r", "s", "b"):
                assert isinstance(tree, Literal)
                assert _same_value(back.eval(), tree.value)
            checked += 1
    assert checked == sum(len(a) for a in ADS)


def test_minidom_reads_the_same_document() -> None:
    text = document(ADS)
    dom = xml.dom.minidom.parseString(text)
    assert dom.doctype is not None and dom.doctype.name == "classads" and dom.doctype.systemId == "classads.dtd"
    ads = dom.documentElement.getElementsByTagName("c")
    top = [c for c in ads if c.parentNode is dom.documentElement]
    assert len(top) == len(ADS)
    for ad, c in zip(ADS, top, strict=True):
        names = [a.getAttribute("n") for a in c.childNodes if a.nodeType == a.ELEMENT_NODE]
        assert names == list(ad)


def test_the_layout_is_htcondors() -> None:
    """The example condor_q -xml output third-party readers are written against, line for line."""
    ad = ClassAd()
    ad["MyType"] = "Job"
    ad["TargetType"] = "Machine"
    ad["AutoClusterId"] = 0
    ad["ExitBySignal"] = False
    ad.set_expr("TransferOutputRemaps", "undefined")
    ad["WhenToTransferOutput"] = "ON_EXIT"
    ad["BytesSent"] = 755746.0
    assert document([ad]) == (
        '<?xml version="1.0"?>\n'
        '<!DOCTYPE classads SYSTEM "classads.dtd">\n'
        "<classads>\n"
        "<c>\n"
        '    <a n="MyType"><s>Job</s></a>\n'
        '    <a n="TargetType"><s>Machine</s></a>\n'
        '    <a n="AutoClusterId"><i>0</i></a>\n'
        '    <a n="ExitBySignal"><b v="f"/></a>\n'
        '    <a n="TransferOutputRemaps"><un/></a>\n'
        '    <a n="WhenToTransferOutput"><s>ON_EXIT</s></a>\n'
        '    <a n="BytesSent"><r>7.557460000000000E+05</r></a>\n'
        "</c>\n"
        "</classads>\n")
    assert document([]) == HEADER + "</classads>\n"


def test_every_element_form() -> None:
    ad = parse_ad(r'''[ L = { 10, undefined, error, 14 }; N = [ AA = 4; BB = "x" ]; E = (x >= 10);
        R = relTime("1+02:00:03"); T = absTime("2026-11-27T12:00:00+01:00"); Z = -0.0; I = 1e400;
        M = -1e400; F = real("NaN") ]''')
    ad["Q"] = float("nan")
    ad["V"] = RelTime(93603)  # a relative time value (what relTime(93603) evaluates to)
    ad['odd"name'] = 1
    out = ad_xml(ad)
    assert '<a n="L"><l><i>10</i><un/><er/><i>14</i></l></a>' in out
    assert '<a n="N"><c>\n        <a n="AA"><i>4</i></a>\n        <a n="BB"><s>x</s></a>\n    </c></a>' in out
    assert '<a n="E"><e>(x &gt;= 10)</e></a>' in out
    assert '<a n="R"><r>9.360300000000000E+04</r></a>' in out  # relTime("...") is a real, as in HTCondor
    assert '<a n="T"><at>2026-11-27T12:00:00+01:00</at></a>' in out
    assert '<a n="Z"><r>0.0</r></a>' in out
    assert '<a n="I"><r>INF</r></a>' in out and '<a n="M"><r>-INF</r></a>' in out
    assert '<a n="Q"><r>NaN</r></a>' in out
    assert '<a n="V"><rt>1+02:00:03</rt></a>' in out
    assert '<a n="F"><e>real("NaN")</e></a>' in out  # a call, as in HTCondor
    assert '<a n="odd&quot;name"><i>1</i></a>' in out


@pytest.mark.parametrize(("value", "text"), [
    ("a & b < c > d", "a &amp; b &lt; c &gt; d"),
    ('say "hi" it\'s', 'say "hi" it\'s'),  # quotes stay bare in element text, as HTCondor prints them
    ("tab\there\nline", "tab\\there\\nline"),
    ("back\\slash", "back\\\\slash"),
    ("caf\u00e9", "caf\\303\\251"),
    ("bell\x07 and \x01", "bell\\a and \\001"),
])
def test_string_text(value: str, text: str) -> None:
    assert string_text(value) == text
    ad = ClassAd()
    ad["S"] = value
    el = ET.fromstring(ad_xml(ad))[0][0]
    assert el.tag == "s" and unescape(el.text or "") == value


def test_names_and_expressions_are_escaped() -> None:
    ad = ClassAd()
    ad.set_expr("Requirements", 'TARGET.Memory >= 1024 && Owner != "a&b<c>" || x < 2')
    ad["'quoted\"name'"] = 1
    ad[r"a<b&c"] = 2
    text = document([ad])
    root = ET.fromstring(text)
    req = root[0][0]
    assert req.attrib["n"] == "Requirements"
    assert str(parse_expr(req[0].text or "")) == str(ad["Requirements"])
    assert [a.attrib["n"] for a in root[0]] == list(ad)


def test_a_malformed_wire_value_is_an_error_element() -> None:
    ad = ClassAd.from_wire({"Good": "1", "Bad": "1 +"})
    assert '<a n="Bad"><er/></a>' in ad_xml(ad)


# HTCondor's own XML reader (classad2, ParserType.XML) in a child process: it reads the document
# htcd writes, and each attribute must be the expression classad2 reads from the original text.
_ORACLE = r"""
import json, os, sys
os.environ["CONDOR_CONFIG"] = "/dev/null"; os.environ["TZ"] = "UTC"
import htcondor2, classad2
req = json.load(sys.stdin)
theirs = list(classad2.parseAds(req["xml"], classad2.ParserType.XML))
out = []
for (fmt, text), ad in zip(req["ads"], theirs):
    orig = classad2.parseOne(text, classad2.ParserType.Old if fmt == "old" else classad2.ParserType.New)
    out.append({"names": sorted(k.lower() for k in ad.keys()),
                "orig_names": sorted(k.lower() for k in orig.keys()),
                "diff": [k for k in orig.keys() if repr(ad.lookup(k)) != repr(orig.lookup(k))]})
print(json.dumps({"n": len(theirs), "ads": out}))
"""


def test_htcondors_xml_reader_reads_back_every_corpus_attribute() -> None:
    pytest.importorskip("classad2")
    with open(CORPUS) as f:
        entries = [json.loads(line) for line in f if line.strip()]
    forms = r'''[ L = { 10, undefined, error, 14 }; N = [ AA = 4; BB = "x" ]; E = (x >= 10) && y < "a&b";
        T = absTime("2026-11-27T11:00:00Z"); Z = -0.0; I = 1e400; F = real("NaN"); R = relTime("1+02:00:03");
        S1 = "a & b < c > d"; S2 = "say \"hi\" it's"; S3 = "tab\there\nline"; S4 = "back\\slash";
        S5 = "caf\303\251"; S6 = "bell\a and \001"; 'a<b&c' = 2 ]'''
    request = {"xml": document([*ADS, parse_ad(forms)]),
               "ads": [(e["format"], e["ad"]) for e in entries] + [("new", forms)]}
    r = subprocess.run([sys.executable, "-c", _ORACLE], input=json.dumps(request), capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    answer = json.loads(r.stdout)
    assert answer["n"] == len(ADS) + 1
    for e, a in zip(entries, answer["ads"][:-1], strict=True):
        assert a["names"] == a["orig_names"], e["source"]
        assert a["diff"] == [], e["source"]
    last = answer["ads"][-1]
    assert last["names"] == last["orig_names"]
    assert last["diff"] == ["Z"]  # -0.0: HTCondor's XML has 0.0 for both zeroes, so has htcd's
