"""A job kind's settings as flat fields, and bad settings as one message everywhere.

The kind's pydantic config model is the only source: `flat_fields` turns it into the
list the CLI options, the app form, `podium jobs kinds` and the docs table are built
from, each field named by its card path (`table.snapshot_id`) and its command-line
option (`--snapshot`). `settings_error` renders a `ValidationError` as one
`InvalidInput` whose text is the same whether the values came from options, a card or
a form, e.g. `n (--n): must be >= 1 (got 0)`.

Only pydantic is imported here, so the CLI can build options and help without the
kinds' heavy dependencies.
"""

from __future__ import annotations

import enum
import json
import logging
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import AliasChoices, BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from podium.errors import InvalidInput
from podium.store.read.refs import TableRef

log = logging.getLogger(__name__)

# Every kind's input table is the TableRef field `table`: `--table NAME --snapshot ID`.
INPUT_TABLE = "table"

# What an option carries: a scalar, a choice, a repeatable value or a YAML document.
ValueKind = Literal["bool", "int", "float", "str", "choice", "list", "yaml"]


@dataclass(frozen=True)
class FlatField:
    path: str  # card path: "n", "table.name", "table.snapshot_id"
    option: str  # "--n", "--table", "--snapshot"
    kind: ValueKind
    help: str
    default: Any
    required: bool
    choices: tuple[Any, ...] = ()
    constraints: tuple[str, ...] = ()  # ">= 1", "<= 64"


def option_for(name: str) -> str:
    return "--" + name.replace("_", "-").replace(".", "-")


def flat_fields(
    model: type[BaseModel], renames: Mapping[str, str] | None = None
) -> list[FlatField]:
    """Every setting of `model`; TableRef fields become a name and a snapshot option.

    `renames` maps a card path to the option the CLI has always used for it (a kind's
    `JobKind.options`), e.g. {"rules": "--rule"}.
    """
    renames = renames or {}
    _, filled = applied_defaults(model)
    fields: list[FlatField] = []
    for name, info in model.model_fields.items():
        base, optional = unwrap_optional(info.annotation)
        default = None if info.is_required() else info.get_default(call_default_factory=True)
        default = filled.get(name, default)
        required = info.is_required()
        help_text = info.description or ""
        if base is TableRef:
            ref = default if isinstance(default, TableRef) else None
            table_option = renames.get(name, option_for(name))
            fields.append(
                FlatField(
                    f"{name}.name", table_option, "str", help_text, ref and ref.name, required
                )
            )
            own = "--snapshot" if name == INPUT_TABLE else table_option + "-snapshot"
            snapshot_option = renames.get(f"{name}.snapshot_id", own)
            fields.append(
                FlatField(
                    f"{name}.snapshot_id",
                    snapshot_option,
                    "int",
                    f"Snapshot of {table_option} (default: current when the job is queued).",
                    ref and ref.snapshot_id,
                    False,
                )
            )
            continue
        kind, choices = value_kind(base)
        fields.append(
            FlatField(
                name,
                renames.get(name, option_for(name)),
                kind,
                help_text,
                default,
                required,
                choices,
                _constraints(info.metadata),
            )
        )
    return fields


def old_names(model: type[BaseModel]) -> dict[str, str]:
    """{old name: its setting} for the settings of `model` that were renamed: a field
    declared with `validation_alias=AliasChoices(NAME, OLD, ...)` still takes its old
    names in cards, forms and `--set` (and `validate_config` says the new one)."""
    found: dict[str, str] = {}
    for name, info in model.model_fields.items():
        alias = info.validation_alias
        if isinstance(alias, AliasChoices):
            olds = [old for old in alias.choices if isinstance(old, str) and old != name]
            found.update(dict.fromkeys(olds, name))
    return found


def say_renamed(kind: str, old: str, new: str) -> None:
    """The notice a card, form or `--set` that uses a setting's old name gets."""
    log.warning(
        "notice: %r setting %r is now called %r; the old name still works, but write %r",
        kind,
        old,
        new,
        new,
    )


def current_path(kind: str, model: type[BaseModel], path: str) -> str:
    """A dotted card path (`--set input.snapshot_id=3`) under its setting's current
    name (`table.snapshot_id`), with the notice when it used an old one."""
    head, dot, rest = path.partition(".")
    new = old_names(model).get(head)
    if new is None:
        return path
    say_renamed(kind, head, new)
    return new + dot + rest


def applied_defaults(model: type[BaseModel]) -> tuple[str, dict[str, Any]]:
    """The values a card that leaves a field out really gets, where the model fills them
    in before validation rather than from the field's own default (a training preset):
    (where they come from, values by field name). Help and docs show these."""
    values = getattr(model, "applied_defaults", None)
    return values() if callable(values) else ("", {})


def unwrap_optional(annotation: Any) -> tuple[Any, bool]:
    """`X | None` -> (X, True); anything else -> (annotation, False). `Annotated[X, ...]`
    counts as X (pydantic strips it from a plain field, not from inside `| None`: an
    optional `TableName` became a YAML box, and the report name "T__validation\n...")."""
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return _plain_type(args[0]), len(args) < len(get_args(annotation))
    return _plain_type(annotation), False


def _plain_type(annotation: Any) -> Any:
    return get_args(annotation)[0] if get_origin(annotation) is Annotated else annotation


def value_kind(base: Any) -> tuple[ValueKind, tuple[Any, ...]]:
    if base is bool:
        return "bool", ()
    if base is int:
        return "int", ()
    if base is float:
        return "float", ()
    if base is str or (isinstance(base, type) and base.__name__ in ("Path", "PosixPath")):
        return "str", ()
    if get_origin(base) is Literal:
        return "choice", get_args(base)
    if isinstance(base, type) and issubclass(base, enum.Enum):
        return "choice", tuple(m.value for m in base)
    if get_origin(base) in (list, tuple) and get_args(base)[:1] in ((str,), (int,), (float,)):
        return "list", ()
    return "yaml", ()


def _constraints(metadata: list[Any]) -> tuple[str, ...]:
    signs = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<", "min_length": "length >="}
    found = []
    for item in metadata:
        for attr, sign in signs.items():
            value = getattr(item, attr, None)
            if value is not None:
                found.append(f"{sign} {value}")
    return tuple(found)


def option_names(fields: list[FlatField]) -> dict[str, str]:
    """Card path -> option, including the TableRef field itself (-> its name option)."""
    names = {f.path: f.option for f in fields}
    for f in fields:
        if f.path.endswith(".name"):
            names.setdefault(f.path.removesuffix(".name"), f.option)
    return names


def settings_error(
    kind: str,
    exc: ValidationError | None,
    fields: list[FlatField],
    extra: list[str] | None = None,
) -> InvalidInput:
    """One message for bad settings, however they were given."""
    problems = list(extra or [])
    if exc is not None:
        problems.extend(
            describe_error(err, fields)
            for err in exc.errors()
            if not (extra and err["type"] == "extra_forbidden")  # listed in `extra` already
        )
    return InvalidInput(f"Invalid {kind!r} settings:\n" + "\n".join(f"  {p}" for p in problems))


def describe_error(err: Any, fields: list[FlatField]) -> str:
    """`path (--option): what is wrong (got VALUE)` for one pydantic error."""
    loc = [str(part) for part in err["loc"]]
    path = ".".join(loc) or "(settings)"
    option = _option_of(loc, option_names(fields))
    where = f"{path} ({option})" if option else path
    text = _short_message(err)
    field = next((f for f in fields if f.path in (path, f"{path}.name")), None)
    if err["type"] == "missing" or (field and field.required and err.get("input") is None):
        text = "required, not given" if err["type"] == "missing" else "required, left empty"
        help_text = field.help.rstrip(".") if field and field.help else ""
        return f"{where}: {text}" + (f" ({help_text})" if help_text else "")
    if err["type"] == "extra_forbidden":
        return f"{where}: {text}"
    given = repr(err.get("input"))
    if len(given) > 60:
        given = given[:57] + "..."
    return f"{where}: {text} (got {given})"


def _option_of(loc: list[str], names: Mapping[str, str]) -> str | None:
    for end in range(len(loc), 0, -1):  # the longest card path that has an option
        option = names.get(".".join(loc[:end]))
        if option:
            return option
    return None


def _short_message(err: Any) -> str:
    ctx = err.get("ctx") or {}
    kind = err["type"]
    bounds = {
        "greater_than_equal": ("ge", ">="),
        "greater_than": ("gt", ">"),
        "less_than_equal": ("le", "<="),
        "less_than": ("lt", "<"),
    }
    if kind in bounds:
        key, sign = bounds[kind]
        bound = ctx.get(key)
        return f"must be {sign} {f'{bound:g}' if isinstance(bound, float) else bound}"
    fixed = {
        "extra_forbidden": "unknown setting",
        "int_parsing": "must be a whole number",
        "int_type": "must be a whole number",
        "int_from_float": "must be a whole number",
        "float_parsing": "must be a number",
        "float_type": "must be a number",
        "bool_parsing": "must be true or false",
        "bool_type": "must be true or false",
        "string_type": "must be text",
        "list_type": "must be a list",
        "dict_type": "must be a mapping",
        "model_type": "must be a mapping of its fields",
    }
    if kind in fixed:
        return fixed[kind]
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected')}"
    if kind == "enum":
        return f"must be one of {ctx.get('expected')}"
    message = str(err["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    return message[:1].lower() + message[1:]


def field_json(f: FlatField) -> dict[str, Any]:
    """One field for `podium jobs kinds --json` (defaults made JSON-safe)."""
    return {
        "name": f.path,
        "option": f.option,
        "type": f.kind,
        "choices": [to_jsonable_python(c) for c in f.choices],
        "default": to_jsonable_python(f.default),
        "required": f.required,
        "constraints": list(f.constraints),
        "help": f.help,
    }


def markdown_table(fields: list[FlatField]) -> str:
    """The docs table of a kind's settings: card path, option, type, default, help."""
    lines = ["| card field | option | type | default | help |", "|---|---|---|---|---|"]
    for f in fields:
        kind = "|".join(map(str, f.choices)) if f.choices else f.kind
        default = "required" if f.required else json.dumps(to_jsonable_python(f.default))
        notes = f" ({', '.join(f.constraints)})" if f.constraints else ""
        cells = [f"`{f.path}`", f"`{f.option}`", kind, f"`{default}`", f.help + notes]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"
