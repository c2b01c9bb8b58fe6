"""The `json` and `json-schema` rules.

`json` is a strict parse with orjson (fast on the happy path; its errors already
carry character positions and say "trailing comma" or "end of data" plainly).
`json-schema` answers "valid?" with the compiled Rust validator from `jsonschema-rs`
and, only for the rare invalid sample, asks the reference `jsonschema` validator for
the most relevant error and points at the failing value in the text.
"""

from __future__ import annotations

import functools
import json
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import jsonschema_rs
import orjson
from jsonschema.exceptions import best_match

from podium.errors import InvalidInput
from podium.validate.json_patterns import (
    PatternError,
    RegexTimeout,
    check_schema,
    search,
    with_regex_patterns,
)
from podium.validate.locate import key_offset, value_offset
from podium.validate.result import Result, failed, kebab, passed

# orjson message fragment -> short error kind, first match wins.
_JSON_KINDS = (
    ("trailing comma", "trailing-comma"),
    ("depth", "too-deep"),
    ("recursion", "too-deep"),
    ("end of data", "unexpected-eof"),
    ("empty document", "empty"),
    ("zero-length", "empty"),
    ("content after document", "extra-data"),
    ("expected ':'", "missing-colon"),
    ("expected ','", "missing-comma"),
    ("string key", "invalid-key"),
    ("control character", "control-character"),
    ("escape", "invalid-escape"),
    ("surrogate", "invalid-unicode"),
    ("utf-8", "invalid-unicode"),
    ("literal", "invalid-literal"),
    ("digit", "invalid-number"),
    ("leading zero", "invalid-number"),
    ("number", "invalid-number"),
    ("json value", "invalid-value"),
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def not_text(rule: str, value: object) -> Result:
    shown = "null" if value is None else type(value).__name__
    return Result(False, rule, "not-text", f"content is {shown}, not text")


def json_syntax_error(rule: str, text: str, exc: orjson.JSONDecodeError) -> Result:
    message = exc.msg
    lowered = message.lower()
    kind = next((k for fragment, k in _JSON_KINDS if fragment in lowered), "syntax")
    pos = exc.pos
    if kind == "invalid-unicode":
        found = _SURROGATE.search(text)
        pos = found.start() if found else 0
    elif pos >= len(text.rstrip()) and kind not in ("empty", "trailing-comma"):
        kind = "unexpected-eof"
    return failed(rule, kind, message, text, pos)


class TextRule(ABC):
    """Base of every rule: content that is not text (null, a list of parts) fails as
    `not-text` here, once, before the rule's own `check_text` sees it."""

    name: str
    parses_json: bool = False  # True: `check_value` takes the parsed JSON (batch.py)

    def check(self, text: object, metadata: str | None = None) -> Result:
        if not isinstance(text, str):
            return not_text(self.name, text)
        return self.check_text(text, metadata)

    @abstractmethod
    def check_text(self, text: str, metadata: str | None) -> Result:
        """The rule's own check of text content."""


class JsonValueRule(TextRule):
    """Base of the rules over a JSON value: the text is parsed as strict JSON first (one
    syntax report for them all), then `check_value` checks the value. `batch.py` parses
    a turn once and hands the value to every such rule."""

    parses_json = True

    def check_text(self, text: str, metadata: str | None) -> Result:
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            return json_syntax_error(self.name, text, exc)
        return self.check_value(value, text, metadata)

    @abstractmethod
    def check_value(self, value: Any, text: str, metadata: str | None = None) -> Result:
        """The rule's own check of the parsed JSON value (`text` is where it came from)."""


@dataclass(eq=False)
class JsonRule(JsonValueRule):
    """Strict JSON (RFC 8259: no NaN, no trailing commas, no comments)."""

    name: str = "json"
    spec: str = "json"

    def check_value(self, value: Any, text: str, metadata: str | None = None) -> Result:
        return passed(self.name)


def _no_remote(uri: str) -> Any:
    raise ValueError(f"remote $ref {uri} is not fetched; inline it in the schema")


@dataclass(frozen=True, eq=False)
class CompiledSchema:
    """A JSON Schema compiled twice: Rust for speed, Python for its error reports."""

    schema: Any
    source: str
    fast: Any = field(repr=False)
    reference: Any = field(repr=False)

    def first_error(self, value: Any) -> tuple[str, list[str | int], str, Any] | None:
        """(kind, path, message, error) of the most relevant error, None when valid."""
        try:
            if self.fast.is_valid(value):
                return None
        except (ValueError, OverflowError):
            pass  # e.g. integers past 64 bits: let the reference validator decide
        try:
            errors = list(self.reference.iter_errors(value))
        # Very deep values, or a pattern only the Rust engine reads (`unevaluatedProperties`
        # still searches with `re`): the Rust validator reports instead.
        except (RecursionError, re.error, PatternError):
            errors = []
        except RegexTimeout as exc:  # a backtracking-only pattern past its time limit
            return "regex-timeout", [], str(exc), None
        if errors:
            err = best_match(errors)
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            return kebab(str(err.validator)), list(err.absolute_path), err.message + more, err
        try:
            rs_err = next(iter(self.fast.iter_errors(value)), None)
        except (ValueError, OverflowError):
            return None
        if rs_err is None:
            return None
        kind = kebab(type(rs_err.kind).__name__)
        return kind, list(rs_err.instance_path), rs_err.message, None


def compile_schema(schema: Any, source: str) -> CompiledSchema:
    """Check and compile a schema; an invalid one is an InvalidInput naming `source`."""
    if not isinstance(schema, dict | bool):
        raise InvalidInput(
            f"JSON Schema from {source} must be an object, not {type(schema).__name__}."
        )
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        check_schema(cls, schema)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        if exc.validator == "format" and exc.validator_value == "regex":
            raise InvalidInput(
                f"JSON Schema from {source} has an invalid pattern {exc.instance!r} at {where}: "
                f"{exc.cause or exc.message}. Fix the regular expression "
                "(\\p{L}-style classes are allowed)."
            ) from None
        raise InvalidInput(
            f"JSON Schema from {source} is invalid at {where}: {exc.message}. Fix the schema "
            "(it must be valid Draft 2020-12 unless its $schema names another draft)."
        ) from None
    try:
        fast = jsonschema_rs.validator_for(schema, retriever=_no_remote)
    except (ValueError, jsonschema_rs.ReferencingError) as exc:  # unresolvable $ref and the like
        raise InvalidInput(f"JSON Schema from {source} cannot be compiled: {exc}") from None
    return CompiledSchema(schema, source, fast, with_regex_patterns(cls)(schema))


@functools.lru_cache(maxsize=256)
def schema_from_text(text: str, source: str) -> CompiledSchema:
    """A schema someone typed, uploaded or stored as text: JSON first (the error names the
    line), then the same checks as any schema."""
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"JSON Schema from {source} is not valid JSON (line {exc.lineno}): {exc.msg}."
        ) from None
    return compile_schema(schema, source)


def compile_schema_text(schema_json: str, source: str) -> CompiledSchema:
    """Compile a schema given as JSON text, once per distinct text (tool schemas)."""
    return compile_schema(orjson.loads(schema_json), source)


def schema_failure(
    rule: str, compiled: CompiledSchema, value: Any, text: str, prefix: tuple[str | int, ...] = ()
) -> Result | None:
    """Failure for `value` (parsed from `text`, found at `prefix` in it), None if valid."""
    found = compiled.first_error(value)
    if found is None:
        return None
    kind, path, message, err = found
    offset = None
    if kind == "additional-properties" and err is not None and isinstance(err.instance, dict):
        declared = err.schema.get("properties", {}) if isinstance(err.schema, dict) else {}
        patterns = err.schema.get("patternProperties", {}) if isinstance(err.schema, dict) else {}
        extra = [
            k for k in err.instance if k not in declared and not any(search(p, k) for p in patterns)
        ]
        if extra:
            offset = key_offset(text, (*prefix, *path), extra[0])
    if offset is None:
        offset = value_offset(text, (*prefix, *path))
    where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    if len(where) > 120:  # a deeply nested value: keep the start and the end of its path
        where = where[:60] + "…" + where[-50:]
    return failed(rule, kind, f"{message} at {where}", text, offset)


@dataclass(eq=False)
class JsonSchemaRule(JsonValueRule):
    """Valid JSON that also satisfies a JSON Schema (Draft 2020-12 by default)."""

    compiled: CompiledSchema
    spec: str = "json-schema"
    name: str = "json-schema"

    def check_value(self, value: Any, text: str, metadata: str | None = None) -> Result:
        failure = schema_failure(self.name, self.compiled, value, text)
        return failure or passed(self.name)

    def __reduce__(self) -> Any:
        # Compiled validators do not pickle; worker processes recompile from the schema.
        return (_rebuild_schema_rule, (self.compiled.schema, self.compiled.source, self.spec))


def _rebuild_schema_rule(schema: Any, source: str, spec: str) -> JsonSchemaRule:
    return JsonSchemaRule(compile_schema(schema, source), spec)
