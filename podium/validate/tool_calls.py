"""The `tool-call` rule: OpenAI-style tool calls whose arguments fit the tool's schema.

The assistant content is JSON, either `{"tool_calls": [call, ...]}` or a bare list of
calls, where a call is `{"type": "function", "function": {"name": ..., "arguments":
"<JSON text>"}}` (an arguments object is accepted too). Tool schemas come from a
tools file (`--rule tool-call:PATH`) or from each row's `metadata` JSON under "tools",
both in the OpenAI tools format. Errors inside the arguments string point into the
outer text, through the string's escapes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from podium.errors import InvalidInput
from podium.paths import resolve_under_roots
from podium.validate.json_rules import (
    CompiledSchema,
    JsonValueRule,
    compile_schema_text,
    json_syntax_error,
    schema_failure,
)
from podium.validate.locate import decoded_to_raw, value_offset
from podium.validate.result import Result, failed, passed


def tool_schemas(tools: Any, source: str) -> dict[str, str]:
    """Tool name -> parameters schema as canonical JSON text, from an OpenAI tools list."""
    if isinstance(tools, dict) and "tools" in tools:
        tools = tools["tools"]
    if not isinstance(tools, list):
        raise InvalidInput(f"Tools in {source} must be a list in the OpenAI tools format.")
    out: dict[str, str] = {}
    for tool in tools:
        fn = tool.get("function", tool) if isinstance(tool, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise InvalidInput(f"A tool in {source} has no function name: {tool!r:.120}")
        params = fn.get("parameters", {"type": "object"})
        out[fn["name"]] = orjson.dumps(params, option=orjson.OPT_SORT_KEYS).decode()
    return out


def load_tools(path: str) -> dict[str, str]:
    file = resolve_under_roots(path, "rule file")
    if not file.is_file():
        raise InvalidInput(f"Tools file {path} does not exist; give --rule tool-call:PATH.")
    try:
        tools = tool_schemas(orjson.loads(file.read_bytes()), path)
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(f"Tools file {path} is not valid JSON: {exc}") from None
    for name, params in tools.items():
        compile_schema_text(params, f"{path} (tool {name})")
    return tools


def _calls(value: Any) -> tuple[list[Any], tuple[str | int, ...]] | None:
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
        return value["tool_calls"], ("tool_calls",)
    if isinstance(value, list):
        return value, ()
    return None


@dataclass(eq=False)
class ToolCallRule(JsonValueRule):
    tools: dict[str, str] | None = None  # from a file; None = each row's metadata
    source: str = "row metadata"
    spec: str = "tool-call"
    name: str = "tool-call"
    _row_tools: dict[str, dict[str, str] | str] = field(default_factory=dict, repr=False)

    def _tools_for(self, metadata: str | None) -> dict[str, str] | str:
        """The row's tools, or an error message; parsed once per distinct metadata."""
        if self.tools is not None:
            return self.tools
        key = metadata or ""
        if key not in self._row_tools:
            if len(self._row_tools) > 4096:
                self._row_tools.clear()
            try:
                meta = orjson.loads(key) if key else {}
                tools = meta.get("tools") if isinstance(meta, dict) else None
                self._row_tools[key] = (
                    tool_schemas(tools, "the row's metadata")
                    if tools is not None
                    else 'the row\'s metadata has no "tools" and no tools file was given'
                )
            except (orjson.JSONDecodeError, InvalidInput) as exc:
                self._row_tools[key] = f"the row's tools cannot be read: {exc}"
        return self._row_tools[key]

    def check_value(self, value: Any, text: str, metadata: str | None = None) -> Result:
        found = _calls(value)
        if found is None or not found[0]:
            return failed(
                self.name,
                "not-tool-call",
                'expected {"tool_calls": [...]} or a list of calls',
                text,
                0,
            )
        calls, prefix = found
        tools = self._tools_for(metadata)
        if isinstance(tools, str):
            return failed(self.name, "no-tools", tools, text, None)
        for i, call in enumerate(calls):
            failure = self._check_call(call, (*prefix, i), tools, text)
            if failure is not None:
                return failure
        return passed(self.name)

    def _check_call(
        self, call: Any, path: tuple[str | int, ...], tools: dict[str, str], text: str
    ) -> Result | None:
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            return failed(
                self.name,
                "not-tool-call",
                f"call {path[-1]} has no function.name",
                text,
                value_offset(text, path),
            )
        if call.get("type", "function") != "function":
            return failed(
                self.name,
                "not-tool-call",
                f"call {path[-1]} has type {call.get('type')!r}, not 'function'",
                text,
                value_offset(text, (*path, "type")),
            )
        name = fn["name"]
        if name not in tools:
            known = ", ".join(sorted(tools)) or "none"
            return failed(
                self.name,
                "unknown-tool",
                f"no tool named {name!r} (known: {known})",
                text,
                value_offset(text, (*path, "function", "name")),
            )
        compiled = compile_schema_text(tools[name], f"tool {name}")
        args_path = (*path, "function", "arguments")
        args = fn.get("arguments", {})
        if not isinstance(args, str):
            failure = schema_failure(self.name, compiled, args, text, args_path)
            return failure and replace(failure, message=f"{name}: {failure.message}")
        return self._check_encoded_args(compiled, name, args, args_path, text)

    def _check_encoded_args(
        self, compiled: CompiledSchema, name: str, args: str, path: tuple[str | int, ...], text: str
    ) -> Result | None:
        string_at = value_offset(text, path)
        try:
            parsed = orjson.loads(args)
        except orjson.JSONDecodeError as exc:
            inner = json_syntax_error(self.name, args, exc)
            return _moved(
                inner,
                f"arguments of {name} are not JSON: {inner.message}",
                "arguments-" + inner.kind,
                text,
                string_at,
            )
        inner_failure = schema_failure(self.name, compiled, parsed, args)
        if inner_failure is None:
            return None
        return _moved(
            inner_failure, f"{name}: {inner_failure.message}", inner_failure.kind, text, string_at
        )


def _moved(inner: Result, message: str, kind: str, text: str, string_at: int | None) -> Result:
    """Re-anchor a failure found inside the arguments string onto the outer text."""
    if string_at is None or inner.offset is None:
        return failed(inner.rule, kind, message, text, string_at)
    return failed(inner.rule, kind, message, text, decoded_to_raw(text, string_at, inner.offset))
