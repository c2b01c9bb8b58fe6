"""JSON Schema `pattern`s evaluated in linear time (RE2, `podium.validate.linear_regex`),
which knows `\\p{L}` and friends.

The compiled Rust validator (`jsonschema-rs`) already understands Unicode property
classes; the reference `jsonschema` validator uses Python's `re`, which does not, both
when it checks a schema (`format: regex` in the meta-schema) and when it validates a
value (`pattern`, `patternProperties`, `additionalProperties`), and backtracks: a
schema's `"pattern": "^(a|aa)+$"` held one row for over 60 s. This module swaps the
engine in those places through jsonschema's own hooks: a format checker and a validator
class extended with keywords on the linear-time engine. A pattern only the backtracking
fallback can run and that passes its time limit raises `RegexTimeout`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

from jsonschema import FormatChecker, ValidationError, _keywords, validators
from jsonschema.protocols import Validator

from podium.validate.linear_regex import (
    LinearPattern,
    PatternError,
    RegexTimeout,
    compile_linear,
)

__all__ = ["PatternError", "RegexTimeout", "check_schema", "search", "with_regex_patterns"]

# The stock keyword we delegate to; typed Any because its stub says it returns None.
_stock_additional_properties: Any = _keywords.additionalProperties


def compile_pattern(pattern: str) -> LinearPattern:
    """The compiled pattern; `PatternError` when it is not a valid expression."""
    return compile_linear(pattern)


def search(pattern: str, text: str) -> bool:
    return compile_pattern(pattern).search(text)


def _is_regex(instance: object) -> bool:
    if isinstance(instance, str):
        compile_pattern(instance)
    return True


def check_schema(cls: type[Validator], schema: Any) -> None:
    """`cls.check_schema`, with `format: regex` in the meta-schema checked by `regex`.

    Raises `jsonschema.SchemaError` as `check_schema` does.
    """
    base = validators.validator_for(cls.META_SCHEMA, default=cls).FORMAT_CHECKER
    checker = FormatChecker(formats=())
    checker.checkers = {**base.checkers, "regex": (_is_regex, PatternError)}
    checking: Any = cls  # the protocol omits check_schema's format_checker argument
    checking.check_schema(schema, format_checker=checker)


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    patterns = schema.get("patternProperties") if isinstance(schema, Mapping) else None
    if not patterns or not validator.is_type(instance, "object"):
        yield from _stock_additional_properties(validator, additional, instance, schema)
        return
    # Keys matched by a pattern count as declared; the stock keyword does the rest.
    matched = {k: True for k in instance if any(search(p, k) for p in patterns)}
    declared = {**schema.get("properties", {}), **matched}
    plain = {k: v for k, v in schema.items() if k != "patternProperties"}
    yield from _stock_additional_properties(
        validator, additional, instance, {**plain, "properties": declared}
    )


@functools.lru_cache(maxsize=16)
def with_regex_patterns(cls: type[Validator]) -> type[Validator]:
    """`cls` with `pattern`, `patternProperties` and `additionalProperties` on `regex`."""
    extended: type[Validator] = validators.extend(  # type: ignore[no-untyped-call]
        cls,
        {
            "pattern": _pattern,
            "patternProperties": _pattern_properties,
            "additionalProperties": _additional_properties,
        },
    )
    return extended
