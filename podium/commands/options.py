"""A job kind's command, generated from its config model.

    command = job_command("generate", extra=[SCHEMA_OPTION], hook=read_schema)

Every field of the kind's model becomes an option (`flat_fields`: name, help, default,
constraints; a TableRef field becomes `--table` and `--snapshot`), plus `--set
PATH=VALUE` (dotted card path, YAML value), `--card PATH` (write the run card, run
nothing) and `--queue` (leave it to `podium worker`). Values go to the model as typed
text, so a bad one is reported by the same `InvalidInput` as in a card or a form.
A command keeps its own conveniences as small hooks: extra options, positional
arguments, CLI defaults, and a function that adjusts the values before validation.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from podium.errors import InvalidInput
from podium.jobs.card_yaml import load_yaml
from podium.jobs.fields import FlatField, applied_defaults, current_path
from podium.jobs.kinds import get_kind
from podium.jobs.plugins import load_plugins

Hook = Callable[[dict[str, Any], dict[str, Any]], None]  # (card values, extra options)
# (config, result, queued or card written, extra options)
Done = Callable[[Any, Any, bool, dict[str, Any]], None]

_METAVARS = {"int": "INTEGER", "float": "NUMBER", "str": "TEXT", "list": "TEXT", "yaml": "YAML"}


def job_command(
    kind: str,
    name: str | None = None,
    *,
    arguments: Sequence[str] = (),
    aliases: Mapping[str, Sequence[str]] | None = None,
    defaults: Mapping[str, Any] | None = None,
    extra: Sequence[click.Parameter] = (),
    hook: Hook | None = None,
    done: Done | None = None,
    queue: bool = True,
    help: str | None = None,
    cls: type[click.Command] = click.Command,
) -> click.Command:
    """The command that starts a `kind` job.

    `arguments`: card paths taken positionally (e.g. ("table.name",)); `aliases`: extra
    option names per card path (e.g. {"rules": ["-r"]}); `defaults`: CLI defaults that
    differ from the model's (e.g. {"model": "base"}).
    """
    load_plugins()
    job_kind = get_kind(kind)
    fields = job_kind.fields()
    defaults = dict(defaults or {})
    applied = applied_defaults(job_kind.config_model())
    params: list[click.Parameter] = [
        _param(f, f.path in arguments, (aliases or {}).get(f.path, ()), defaults, applied)
        for f in fields
    ]
    params.sort(key=lambda p: not isinstance(p, click.Argument))  # positionals first
    params += [
        *extra,
        click.Option(
            ["--set", "_sets"],
            multiple=True,
            metavar="PATH=VALUE",
            help="Any card setting by its dotted path, VALUE read as YAML "
            "(e.g. --set table.snapshot_id=3); repeatable. See `podium jobs kinds "
            f"{kind}`.",
        ),
        click.Option(
            ["--card", "_card"],
            type=click.Path(path_type=Path, dir_okay=False),
            help="Write the run card here and run nothing.",
        ),
    ]
    if queue:
        params.append(
            click.Option(["--queue", "_queue"], is_flag=True, help="Queue for `podium worker`.")
        )

    def callback(**given: Any) -> None:
        values: dict[str, Any] = {}
        for f in fields:
            value = given.pop(_ident(f))
            if value is None or value == ():
                value = defaults.get(f.path)
            if value is not None:
                set_path(values, f.path, _typed(f, value))
        for item in given.pop("_sets"):
            key, value = parse_set(item)
            set_path(values, current_path(kind, job_kind.config_model(), key), value)
        card: Path | None = given.pop("_card")
        queued = bool(given.pop("_queue", False))
        if hook is not None:
            hook(values, given)
        config, result = start_job(kind, values, card, queued)
        if done is not None:
            done(config, result, card is not None or queued, given)

    return cls(
        name or kind,
        callback=callback,
        params=params,
        help=help or job_kind.description,
        short_help=job_kind.description,
    )


def start_job(kind: str, values: dict[str, Any], card: Path | None, queued: bool) -> Any:
    """Validate `values` as a `kind` card, then write, queue or run it; (config, result)."""
    from podium.jobs.cards import validate_config
    from podium.jobs.launch import run_or_write_card

    config = validate_config(kind, values)
    return config, run_or_write_card(kind, config, card, foreground=not queued)


def _ident(f: FlatField) -> str:
    return "f_" + f.path.replace(".", "__")  # never clashes with a command's extra options


def _param(
    f: FlatField,
    positional: bool,
    aliases: Sequence[str],
    defaults: Mapping[str, Any],
    applied: tuple[str, Mapping[str, Any]] = ("", {}),
) -> click.Parameter:
    if positional:
        return click.Argument([_ident(f)], required=f.required, metavar=f.option[2:].upper())
    source, filled = applied
    from_model = f.path not in defaults and f.path in filled
    default = defaults.get(f.path, filled.get(f.path, f.default))
    origin = f" from {source}" if from_model and source else ""
    notes = []
    if f.required and f.path not in defaults:
        notes.append("required")
    elif default not in (None, [], {}, ()) and f.kind != "bool":
        notes.append(f"default: {_shown(default)}{origin}")
    notes.extend(f.constraints)
    help_text = f.help + (f"  [{'; '.join(notes)}]" if notes else "")
    if f.kind == "bool":
        negative = "--no-" + f.option.removeprefix("--")
        shown = "on" if default else "off"
        return click.Option(
            [f"{f.option}/{negative}", _ident(f)],
            default=None,
            help=f"{f.help}  [default: {shown}{origin}]",
        )
    metavar = "[" + "|".join(map(str, f.choices)) + "]" if f.choices else _METAVARS[f.kind]
    return click.Option(
        [f.option, *aliases, _ident(f)],
        multiple=f.kind == "list",
        metavar=metavar,
        help=help_text + ("  Repeatable." if f.kind == "list" else ""),
    )


def _shown(value: Any) -> str:
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    if isinstance(value, list) and value and hasattr(value[0], "model_dump"):
        value = [v.model_dump(mode="json") for v in value]
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _typed(f: FlatField, value: Any) -> Any:
    """Option text as a card would hold it (numbers and YAML parsed, text kept as text),
    so that pydantic reports a bad value exactly as it does for a card."""
    if f.kind == "list":
        return list(value)
    if f.kind in ("int", "float", "yaml") and isinstance(value, str):
        return _yaml(f.option, value)
    return value


def parse_set(item: str) -> tuple[str, Any]:
    """`PATH=VALUE` from `--set`, VALUE read as YAML (numbers, booleans, lists)."""
    key, eq, raw = item.partition("=")
    if not eq or not key.strip():
        raise InvalidInput(f"--set {item!r}: write PATH=VALUE, e.g. --set max_tokens=64.")
    return key.strip(), _yaml(f"--set {key.strip()}", raw) if raw else ""


def _yaml(where: str, text: str) -> Any:
    return load_yaml(text, where)


def set_path(values: dict[str, Any], path: str, value: Any) -> None:
    """values["a"]["b"] = value for path "a.b", creating the mappings between."""
    *parents, last = path.split(".")
    node = values
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[last] = value
