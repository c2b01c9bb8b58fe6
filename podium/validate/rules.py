"""Rule specs (`json`, `json-schema:PATH`, `regex:PATTERN`...) and what they build.

Every spec is parsed and its files read and compiled before any sample is checked, so
an unknown rule, a missing file or an invalid schema, XSD or pattern stops a run before
it starts, with a message naming the spec.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import orjson

from podium.config import get_settings
from podium.errors import InvalidInput
from podium.paths import resolve_under_roots
from podium.validate.json_rules import JsonRule, JsonSchemaRule, compile_schema, schema_from_text
from podium.validate.markup_rules import XmlRule, XsdRule, load_xsd
from podium.validate.result import Result
from podium.validate.text_rules import PythonRule, RegexRule
from podium.validate.tool_calls import ToolCallRule, load_tools

PROP_JSON_SCHEMA = "podium.json_schema"

RULE_HELP: dict[str, str] = {
    "json": "strict JSON",
    "json-schema[:PATH]": "JSON valid against a JSON Schema file "
    f"(default: the table property {PROP_JSON_SCHEMA})",
    "xml": "well-formed XML",
    "xsd:PATH": "XML valid against an XML Schema file",
    "python": "Python source that parses",
    "regex:PATTERN": "the whole text matches the pattern",
    "tool-call[:PATH]": "OpenAI tool calls whose arguments fit the tool schemas "
    '(tools file, default: the row\'s metadata "tools")',
}
RULE_NAMES = ("json", "json-schema", "xml", "xsd", "python", "regex", "tool-call")


class Rule(Protocol):
    name: str  # the rule's kind as reported: "json", "json-schema", ...
    spec: str  # as the user wrote it
    parses_json: bool  # True: has check_value(value, text, metadata) on a parsed JSON value

    def check(self, text: object, metadata: str | None = None) -> Result: ...


def _unknown(spec: str) -> InvalidInput:
    known = "; ".join(f"{k} ({v})" for k, v in RULE_HELP.items())
    return InvalidInput(f"Unknown rule {spec!r}. Rules: {known}.")


def check_spec(spec: str) -> str:
    """Syntax-only check (for run cards); files are read by `parse_rule`."""
    name, sep, arg = spec.partition(":")
    if name not in RULE_NAMES:
        raise _unknown(spec)
    if name in ("xsd", "regex") and not (sep and arg):
        arg_name = "PATH" if name == "xsd" else "PATTERN"
        raise InvalidInput(f"Rule {name} needs an argument: --rule {name}:{arg_name}.")
    if name in ("json", "xml", "python") and sep:
        raise InvalidInput(f"Rule {name} takes no argument (got {spec!r}).")
    return spec


def _read_schema(path: str) -> Any:
    file = resolve_under_roots(path, "rule file")
    if not file.is_file():
        raise InvalidInput(f"JSON Schema file {path} does not exist; give --rule json-schema:PATH.")
    try:
        return orjson.loads(file.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(f"JSON Schema file {path} is not valid JSON: {exc}.") from None


def parse_rule(
    spec: str, table_properties: Mapping[str, str] | None = None, table: str = ""
) -> Rule:
    check_spec(spec)
    name, _, arg = spec.partition(":")
    if name == "json":
        return JsonRule()
    if name == "json-schema":
        if arg:
            return JsonSchemaRule(compile_schema(_read_schema(arg), arg), spec)
        stored = (table_properties or {}).get(PROP_JSON_SCHEMA)
        where = f"table {table}" if table else "the table"
        if not stored:
            raise InvalidInput(
                f"Rule json-schema has no schema: give --rule json-schema:PATH, or store one "
                f"on {where} as property {PROP_JSON_SCHEMA}."
            )
        source = f"{where} property {PROP_JSON_SCHEMA}"
        return JsonSchemaRule(schema_from_text(stored, source), spec)
    if name == "xml":
        return XmlRule()
    if name == "xsd":
        return XsdRule(load_xsd(arg), arg, spec)
    if name == "python":
        return PythonRule()
    if name == "regex":
        return RegexRule(arg, spec)
    if arg:
        return ToolCallRule(load_tools(arg), arg, spec)
    return ToolCallRule()


def parse_rules(
    specs: Sequence[str], table_properties: Mapping[str, str] | None = None, table: str = ""
) -> list[Rule]:
    if not specs:
        raise InvalidInput("Give at least one rule, e.g. --rule json or --rule json-schema:PATH.")
    return [parse_rule(spec, table_properties, table) for spec in specs]


def save_schema_text(text: str, suffix: str = ".json") -> Path:
    """Store a pasted or uploaded schema under the home (content-addressed) for a card.

    The run card then names a file that never changes, so the job re-runs exactly.
    """
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    folder = get_settings().ensure_home() / "schemas"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{digest}{suffix}"
    if not path.exists():
        path.write_text(text, encoding="utf-8")
    return path
