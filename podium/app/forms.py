"""Streamlit forms generated from a job kind's pydantic config model.

`field_specs(model)` decides, without Streamlit, which widget each field gets (its
label, help text, options and default all come from the model); `render_form` draws
them and `collect` turns what they return into values for `model.model_validate`. A
page uses it as:

    with st.form("new-job"):
        raw = render_form(Model, key="new-job", tables=list_tables())
        if st.form_submit_button(QUEUE_VERB):
            values = collect(field_specs(Model), raw)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Literal

import streamlit as st
import yaml
from pydantic import BaseModel

from podium.app.feedback import job_queued, show_error
from podium.errors import InvalidInput, PodiumError
from podium.jobs.card_yaml import load_yaml
from podium.jobs.fields import ValueKind, unwrap_optional, value_kind
from podium.jobs.logbook import kind_model, submit_config
from podium.store.read.refs import TableRef

QUEUE_VERB = "Queue job"  # the one verb for submitting a job, on every page

Widget = Literal["checkbox", "int", "float", "select", "table", "text", "lines", "yaml"]


@dataclass(frozen=True)
class FieldSpec:
    name: str
    widget: Widget
    help: str
    default: Any
    required: bool
    optional: bool  # None is a valid value (blank input)
    options: tuple[Any, ...] = ()

    @property
    def label(self) -> str:
        return field_label(self.name)


# Words a label spells as people write them; a trailing unit reads as "(s)".
_WORDS = {
    "id": "ID", "ids": "IDs", "json": "JSON", "lora": "LoRA", "llm": "LLM", "gpu": "GPU",
    "cpu": "CPU", "url": "URL", "sql": "SQL", "vllm": "vLLM", "sft": "SFT", "grpo": "GRPO",
    "kl": "KL", "lr": "LR", "top": "Top", "p": "p", "k": "k",
}  # fmt: skip
_UNITS = {"s": "s", "ms": "ms", "mb": "MB", "gb": "GB", "pct": "%"}


def field_label(name: str) -> str:
    """'max_tokens' -> 'Max tokens', 'retry_max_wait_s' -> 'Retry max wait (s)': what a
    form shows; the card and the CLI keep the field's own name."""
    words = [w for w in name.split("_") if w]
    unit = _UNITS.get(words[-1]) if len(words) > 1 else None
    if unit:
        words = words[:-1]
    spelled = [_WORDS.get(w, w) for w in words]
    if spelled and spelled[0] == words[0]:
        spelled[0] = spelled[0][:1].upper() + spelled[0][1:]
    return " ".join(spelled) + (f" ({unit})" if unit else "")


def number_format(value: float | None) -> tuple[str | None, float | None]:
    """(format, step) for a float field: a learning rate of 0.0005 shows as 5.0e-04 with
    a step of 1e-4, never rounded to 0.00 by the default two decimals."""
    if value is None or value == 0 or abs(value) >= 0.01:
        return None, None
    step = 10 ** math.floor(math.log10(abs(value)))
    return "%.1e", float(step)


def field_specs(model: type[BaseModel]) -> list[FieldSpec]:
    specs = []
    for name, field in model.model_fields.items():
        base, optional = unwrap_optional(field.annotation)
        default = None if field.is_required() else field.get_default(call_default_factory=True)
        widget, options = _widget_for(base)
        specs.append(
            FieldSpec(
                name=name,
                widget=widget,
                help=field.description or "",
                default=default,
                required=field.is_required(),
                optional=optional,
                options=options,
            )
        )
    return specs


_WIDGETS: dict[ValueKind, Widget] = {
    "bool": "checkbox",
    "int": "int",
    "float": "float",
    "choice": "select",
    "str": "text",
    "list": "lines",
    "yaml": "yaml",
}


def _widget_for(base: Any) -> tuple[Widget, tuple[Any, ...]]:
    if base is TableRef:
        return "table", ()
    kind, choices = value_kind(base)
    return _WIDGETS[kind], choices


def render_form(
    model: type[BaseModel],
    key: str,
    tables: list[str] | None = None,
    values: dict[str, Any] | None = None,
    advanced: Collection[str] = (),
    fixed: Collection[str] = (),
) -> dict[str, Any]:
    """Draw one widget per field of `model` (those named in `advanced` inside an
    "Advanced" expander, those in `fixed` not at all: the page chose them above the
    form); returns the raw widget values by field. No other field is left out.

    A value in `values` seeds its widget, and seeds it again whenever it changes (an
    output name derived from the chosen input follows that input), while an edit the
    user typed stays until then."""
    values = values or {}
    specs = [s for s in field_specs(model) if s.name not in fixed]
    raw = {
        spec.name: _render(spec, f"{key}.{spec.name}", tables or [], values.get(spec.name))
        for spec in specs
        if spec.name not in advanced
    }
    if any(spec.name in advanced for spec in specs):
        with st.expander("Advanced"):
            for spec in specs:
                if spec.name in advanced:
                    where = f"{key}.{spec.name}"
                    raw[spec.name] = _render(spec, where, tables or [], values.get(spec.name))
    return raw


def queue_form(
    kind: str,
    key: str,
    tables: list[str] | None = None,
    advanced: Collection[str] = (),
    values: dict[str, Any] | None = None,
    fixed: dict[str, Any | Callable[[], Any]] | None = None,
    check: Callable[[dict[str, Any]], None] | None = None,
) -> str | None:
    """A form for any job kind with the one submit button, "Queue job"; returns the
    queued job's id (and says so, with a link to its Logbook entry).

    `fixed` holds values the page chose above the form (a table, a model); they are part
    of the card like any field (a callable is called at submit, so work such as storing
    a pasted schema happens only then, and its error shows like any other). The values go
    through the same validation and preflight as a card or the CLI, so a bad value shows
    the same message here as in a terminal. `check(values)` may refuse more (raising
    PodiumError) before anything is queued.
    """
    model = kind_model(kind)
    fixed = fixed or {}
    with st.form(key):
        raw = render_form(
            model, key=key, tables=tables, values=values, advanced=advanced, fixed=fixed
        )
        notes = st.text_area("Notes", key=f"{key}.notes")
        queued = st.form_submit_button(QUEUE_VERB, icon=":material/send:", type="primary")
    if not queued:
        return None
    specs = [s for s in field_specs(model) if s.name not in fixed]
    try:
        chosen = {k: v() if callable(v) else v for k, v in fixed.items()}
        values = {**collect(specs, raw), **chosen}
        if check is not None:
            check(values)
        job_id = submit_config(kind, values, notes)
    except PodiumError as exc:
        show_error(exc)
        return None
    job_queued(job_id)
    return job_id


def _seeded(key: str, value: Any) -> None:
    """Put `value` in the widget's state when it is new or its seed changed (widgets
    then get no `value=` argument, so Streamlit never sees two sources for one value)."""
    seed_key = f"{key}.__seed"
    seed = repr(value)
    if key not in st.session_state or st.session_state.get(seed_key) != seed:
        st.session_state[seed_key] = seed
        if key in st.session_state or value is not None:
            st.session_state[key] = value


def _render(spec: FieldSpec, key: str, tables: list[str], value: Any) -> Any:
    value = spec.default if value is None else value
    label = spec.label + (" *" if spec.required else "")
    # The field's own name (as in a card and the CLI) stays in the help.
    kw: dict[str, Any] = {
        "key": key,
        "help": f"`{spec.name}`: {spec.help}" if spec.help else f"`{spec.name}`",
    }
    if spec.widget == "checkbox":
        _seeded(key, bool(value))
        return st.checkbox(label, **kw)
    if spec.widget in ("int", "float") and not spec.optional:
        number = int if spec.widget == "int" else float
        _seeded(key, number(value) if value is not None else number(0))
        if number is int:
            return st.number_input(label, step=1, **kw)
        shown, step = number_format(value)
        return st.number_input(label, step=step, format=shown, **kw)
    if spec.widget == "select":
        options = ([None] if spec.optional else []) + list(spec.options)
        _seeded(key, value if value in options else options[0])
        return st.selectbox(label, options, format_func=_blank_none, **kw)
    if spec.widget == "table":
        ref = (
            value
            if isinstance(value, TableRef)
            else TableRef.model_validate(value)
            if value
            else None
        )
        choices = ([None] if spec.optional else []) + tables
        _seeded(key, ref.name if ref and ref.name in choices else (choices[0] if choices else None))
        name = st.selectbox(label, choices, format_func=_blank_none, **kw)
        _seeded(f"{key}.snapshot", str(ref.snapshot_id or "") if ref else "")
        snap = st.text_input(
            f"{spec.label} snapshot",
            key=f"{key}.snapshot",
            help="Snapshot id to read; blank = current when queued.",
        )
        return {"name": name, "snapshot_id": snap}
    if spec.widget == "lines":
        _seeded(key, "\n".join(map(str, value or [])))
        return st.text_area(label, **kw)
    if spec.widget == "yaml":
        _seeded(key, "" if value is None else yaml.safe_dump(_plain(value), sort_keys=False))
        return st.text_area(label + " (YAML)", **kw)
    _seeded(key, "" if value is None else str(value))
    return st.text_input(label, **kw)


def collect(specs: list[FieldSpec], raw: dict[str, Any]) -> dict[str, Any]:
    """Widget values -> card values (blank optional fields become None)."""
    values: dict[str, Any] = {}
    for spec in specs:
        value = raw.get(spec.name)
        if spec.widget == "table":
            if not value or not value.get("name"):
                values[spec.name] = None
                continue
            snap = str(value.get("snapshot_id") or "").strip()
            values[spec.name] = {"name": value["name"], "snapshot_id": snap or None}
        elif spec.widget == "lines":
            values[spec.name] = [s.strip() for s in (value or "").splitlines() if s.strip()]
        elif spec.widget == "yaml":
            values[spec.name] = _parse_yaml(value)
        elif isinstance(value, str) and not value.strip() and (spec.optional or spec.required):
            values[spec.name] = None if spec.optional else value
        else:
            values[spec.name] = value
    # Leave out blank required fields so validation says "required field is missing".
    return {k: v for k, v in values.items() if not (v in (None, "") and _required(specs, k))}


def _required(specs: list[FieldSpec], name: str) -> bool:
    return any(s.name == name and s.required for s in specs)


def _parse_yaml(text: Any) -> Any:
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        return load_yaml(text, "field")
    except InvalidInput:
        return text  # the model then reports the field as invalid (shortened, never expanded)


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _blank_none(option: Any) -> str:
    return "—" if option is None else str(option)
