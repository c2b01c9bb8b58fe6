"""xml, xsd, python and regex rules on hand-written samples, with positions."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from podium.errors import InvalidInput
from podium.validate.markup_rules import XmlRule, XsdRule, load_xsd, parse_xml
from podium.validate.text_rules import PythonRule, RegexRule, compile_pattern

ORDER_XSD = """<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:element name="order">
    <xs:complexType>
      <xs:sequence>
        <xs:element name="item" type="xs:string"/>
        <xs:element name="qty" type="xs:integer"/>
      </xs:sequence>
    </xs:complexType>
  </xs:element>
</xs:schema>
"""


def test_xml_accepts_well_formed() -> None:
    assert XmlRule().check('<a x="1"><b>é</b><c/></a>').ok


@pytest.mark.parametrize(
    ("text", "kind", "line", "column"),
    [
        ("<a><b></a>", "tag-name-mismatch", 1, 11),
        ("<a>\n  <bé>x</b>\n</a>", "tag-name-mismatch", 2, 11),
        ("<a/><b/>", "document-end", 1, 5),
        ("", "document-empty", 1, 1),
        ("<a>&foo;</a>", "undeclared-entity", 1, 9),
        ("<é><b>x</b>", "tag-not-finished", 1, 11),
    ],
)
def test_xml_rejects_with_position(text: str, kind: str, line: int, column: int) -> None:
    result = XmlRule().check(text)
    assert (result.ok, result.rule, result.kind) == (False, "xml", kind)
    assert (result.line, result.column) == (line, column)


def test_xml_never_expands_external_entities(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    text = f'<!DOCTYPE a [<!ENTITY s SYSTEM "file://{secret}">]><a>&s;</a>'
    doc, failure = parse_xml("xml", text)
    assert failure is None
    assert "TOP-SECRET" not in etree.tostring(doc).decode()


@pytest.fixture
def xsd_rule(tmp_path: Path) -> XsdRule:
    path = tmp_path / "order.xsd"
    path.write_text(ORDER_XSD)
    return XsdRule(load_xsd(str(path)), str(path))


def test_xsd_accepts_valid(xsd_rule: XsdRule) -> None:
    assert xsd_rule.check("<order><item>pen</item><qty>2</qty></order>").ok


def test_xsd_reports_the_line_of_the_invalid_element(xsd_rule: XsdRule) -> None:
    text = "<order>\n  <item>pen</item>\n  <qty>two</qty>\n</order>"
    result = xsd_rule.check(text)
    assert (result.rule, result.kind, result.line) == ("xsd", "datatype-valid", 3)
    assert "'two' is not a valid value" in result.message
    assert text[result.offset :].startswith("  <qty>")


def test_xsd_reports_missing_elements_and_syntax(xsd_rule: XsdRule) -> None:
    assert xsd_rule.check("<order><qty>1</qty></order>").kind == "element-content"
    assert xsd_rule.check("<order><item>").kind == "tag-not-finished"


def test_invalid_or_missing_xsd_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.xsd"
    bad.write_text(
        '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element/></xs:schema>'
    )
    with pytest.raises(InvalidInput, match="bad.xsd is not a valid XML Schema"):
        load_xsd(str(bad))
    with pytest.raises(InvalidInput, match="does not exist"):
        load_xsd(str(tmp_path / "missing.xsd"))


def test_python_accepts_valid() -> None:
    assert PythonRule().check("def f(x):\n    return x * 2\n").ok


@pytest.mark.parametrize(
    ("text", "kind", "line", "column"),
    [
        ("def f(:\n  pass", "syntax", 1, 7),
        ("if x:\npass", "indentation", 2, 1),
        ('x = "abc', "unterminated-string", 1, 5),
        ("print(1))", "unmatched-bracket", 1, 9),
        ("é = (1,\n", "unexpected-eof", 1, 5),
        ("a\x00b", "null-byte", 1, 2),
    ],
)
def test_python_rejects_with_position(text: str, kind: str, line: int, column: int) -> None:
    result = PythonRule().check(text)
    assert (result.ok, result.kind, result.line, result.column) == (False, kind, line, column)


def test_python_never_runs_the_code(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    assert PythonRule().check(f"open({str(marker)!r}, 'w').write('x')").ok
    assert not marker.exists()


def test_regex_is_a_full_match_across_lines() -> None:
    rule = RegexRule(r"ANSWER: \d+")
    assert rule.check("ANSWER: 42").ok
    assert rule.check("ANSWER: 42 and more").kind == "no-match"
    assert RegexRule(r"<think>.*</think>\s*\w+").check("<think>a\nb</think> ok").ok


def test_invalid_regex_is_refused() -> None:
    with pytest.raises(InvalidInput, match="not a valid regular expression"):
        compile_pattern("(unclosed")


def test_non_text_is_reported_by_every_rule() -> None:
    for rule in (XmlRule(), PythonRule(), RegexRule("x")):
        assert rule.check(None).kind == "not-text"
