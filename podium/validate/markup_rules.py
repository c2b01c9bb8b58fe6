"""The `xml` (well-formed) and `xsd` (valid against a schema file) rules, via lxml.

The parser never resolves entities, loads DTDs or touches the network, so a hostile
sample cannot read files or expand a billion laughs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lxml import etree

from podium.errors import InvalidInput
from podium.paths import resolve_under_roots
from podium.validate.json_rules import TextRule
from podium.validate.result import Result, failed_at_line, kebab, passed


def _parser() -> etree.XMLParser:
    # A fresh parser per document: its error log then holds this document's errors only.
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)


def _char_column(text: str, line: int, byte_column: int) -> int:
    """libxml2 counts columns in UTF-8 bytes; convert to characters."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines) or byte_column <= 1:
        return max(byte_column, 1)
    prefix = lines[line - 1].encode("utf-8")[: byte_column - 1]
    return len(prefix.decode("utf-8", errors="ignore")) + 1


def _error_kind(type_name: str) -> str:
    name = type_name.removeprefix("ERR_").removeprefix("SCHEMAV_").removeprefix("CVC_")
    return kebab(name.rstrip("_0123456789")) or "not-well-formed"


def parse_xml(rule: str, text: str) -> tuple[Any, Result | None]:
    """(document, None) or (None, failure at the first error libxml2 found)."""
    parser = _parser()
    try:
        return etree.fromstring(text.encode("utf-8"), parser), None
    except etree.XMLSyntaxError as exc:
        first = parser.error_log[0] if len(parser.error_log) else None
        line, column = (first.line, first.column) if first else exc.position
        message = first.message if first else exc.msg
        kind = _error_kind(first.type_name) if first else "not-well-formed"
        return None, failed_at_line(
            rule, kind, message, text, line, _char_column(text, line, column)
        )


@dataclass(eq=False)
class XmlRule(TextRule):
    name: str = "xml"
    spec: str = "xml"

    def check_text(self, text: str, metadata: str | None) -> Result:
        _, failure = parse_xml(self.name, text)
        return failure or passed(self.name)


def load_xsd(path: str) -> bytes:
    """Read and compile-check an XSD file; problems are InvalidInput naming the file."""
    file = resolve_under_roots(path, "rule file")
    if not file.is_file():
        raise InvalidInput(
            f"XSD file {path} does not exist; give --rule xsd:PATH to a schema file."
        )
    data = file.read_bytes()
    _compile_xsd(data, path)
    return data


def _compile_xsd(data: bytes, source: str) -> etree.XMLSchema:
    try:
        return etree.XMLSchema(etree.fromstring(data, _parser()))
    except (etree.XMLSyntaxError, etree.XMLSchemaParseError) as exc:
        raise InvalidInput(f"XSD schema {source} is not a valid XML Schema: {exc}") from None


@dataclass(eq=False)
class XsdRule(TextRule):
    """Well-formed XML that validates against an XML Schema."""

    xsd: bytes
    source: str
    spec: str = "xsd"
    name: str = "xsd"

    def __post_init__(self) -> None:
        self._schema = _compile_xsd(self.xsd, self.source)

    def check_text(self, text: str, metadata: str | None) -> Result:
        doc, failure = parse_xml(self.name, text)
        if failure is not None:
            return failure
        if self._schema.validate(doc):
            return passed(self.name)
        err = self._schema.error_log[0]
        # Validation errors carry a line only; the column libxml2 reports there is 0.
        column = _char_column(text, err.line, err.column) if err.column > 0 else None
        return failed_at_line(
            self.name, _error_kind(err.type_name), err.message, text, err.line, column
        )

    def __reduce__(self) -> Any:
        return (XsdRule, (self.xsd, self.source, self.spec))
