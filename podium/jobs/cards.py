"""Run cards: a job as a Markdown file whose YAML front matter is its full config.

    ---
    kind: import
    path: data/chat.jsonl
    table: demo.chat
    ---
    Free notes about why this run exists.

The front matter is `kind` plus the kind's config fields, flat. The kind's pydantic
model validates it; every bad or unknown field is reported at once. Input tables
(`TableRef` fields) are pinned to the snapshot they will read before a card is written
or queued, so a stored card re-runs exactly; so is the seed of a kind that samples (a
`seed` field that may be null gets a number drawn once, here), since a card that
samples without one can never be re-run to the same result.
"""

from __future__ import annotations

import dataclasses
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from podium.errors import InvalidInput, NotFound
from podium.jobs.card_yaml import MAX_YAML_BYTES, dump_yaml, load_yaml
from podium.jobs.environment import ENV_KEY, capture
from podium.jobs.fields import old_names, say_renamed, settings_error
from podium.jobs.kinds import get_kind
from podium.jobs.plugins import load_plugins
from podium.store.read.refs import TableRef

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*(?:\r?\n|\Z)(.*)\Z", re.S | re.M)


@dataclass
class Card:
    kind: str
    config: BaseModel
    notes: str = ""
    environment: dict[str, Any] | None = None  # what it ran with: podium/jobs/environment.py
    # Set only by podium.jobs.preflight.checked_card: this card's config passed its
    # preflight, so queueing it does not check it again. Not an init argument (and so
    # dropped by dataclasses.replace): a card built by hand is always checked.
    checked: bool = dataclasses.field(default=False, init=False, compare=False)

    def text(self) -> str:
        return render_card(self.kind, self.config, self.notes, self.environment)


def render_card(
    kind: str, config: BaseModel, notes: str = "", environment: dict[str, Any] | None = None
) -> str:
    """The card's text; its `environment:` is the current one unless one is given."""
    front = {
        "kind": kind,
        **config.model_dump(mode="json"),
        ENV_KEY: capture(config) if environment is None else environment,
    }
    body = dump_yaml(front, sort_keys=False, allow_unicode=True, width=100)
    notes = notes.strip()
    return f"---\n{body}---\n" + (f"{notes}\n" if notes else "")


def card_template(kind: str) -> str:
    """A card for `kind` with every field at its default and its help as a comment."""
    load_plugins()
    model = get_kind(kind).config_model()
    lines = ["---", f"kind: {kind}"]
    for name, field in model.model_fields.items():
        required = field.is_required()
        help_text = (field.description or "").strip().replace("\n", "\n# ")
        lines.append(f"# {help_text}{' (required)' if required else ''}".rstrip())
        value = None if required else field.get_default(call_default_factory=True)
        # Models anywhere in the default (grpo's list of RewardSpec) as plain YAML values.
        value = to_jsonable_python(value)
        dumped = yaml.safe_dump({name: value}, sort_keys=False, default_flow_style=True)
        lines.append(f"{name}:" if required else dumped.strip()[1:-1])
    return "\n".join(lines) + "\n---\nNotes: why this run exists.\n"


def write_card(kind: str, config: BaseModel, path: str | Path, notes: str = "") -> Path:
    """Write `config` as a run card at `path` (parents created) and return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_card(kind, config, notes), encoding="utf-8")
    return path


def read_card(path: str | Path) -> Card:
    path = Path(path)
    if not path.is_file():
        raise NotFound(f"No run card at {path}. Write one with a command's --card PATH option.")
    size = path.stat().st_size
    if size > MAX_YAML_BYTES:  # refused before reading, so a huge file costs nothing
        raise InvalidInput(
            f"{path} is {size:,} bytes; a run card is at most {MAX_YAML_BYTES:,}. Keep large "
            "data in a table or a file and name it in the card."
        )
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"{path} is not UTF-8 text (byte {exc.start}); save the card as UTF-8."
        ) from None
    return parse_card(text, source=str(path))


def parse_card(text: str, source: str = "run card") -> Card:
    """Split, parse and validate a card; InvalidInput lists every problem found."""
    if len(text) > MAX_YAML_BYTES:
        raise InvalidInput(f"{source} is over {MAX_YAML_BYTES:,} characters; cards are small.")
    match = _FRONT_MATTER.match(text.lstrip("\ufeff"))
    if match is None:
        raise InvalidInput(
            f"{source} has no YAML front matter: it must start with a line '---', then "
            "`kind: NAME` and the job's fields, then a closing '---' line."
        )
    front = load_yaml(match.group(1), source, first_line=2) or {}  # after the '---' line
    if not isinstance(front, dict):
        raise InvalidInput(f"{source}: the front matter must be a mapping of field: value.")
    kind = front.pop("kind", None)
    if not kind:
        raise InvalidInput(f"{source}: the front matter needs `kind: NAME` ({_known_kinds()}).")
    environment = front.pop(ENV_KEY, None)
    if environment is not None and not isinstance(environment, dict):
        raise InvalidInput(
            f"{source}: `{ENV_KEY}` must be the mapping a run recorded; delete it to record "
            "the current environment instead."
        )
    config = validate_config(str(kind), front)
    return Card(str(kind), config, match.group(2).strip(), environment)


def card_environment(text: str) -> dict[str, Any] | None:
    """The environment a stored card recorded, without validating the rest of it."""
    match = _FRONT_MATTER.match(text.lstrip("\ufeff"))
    try:
        front = load_yaml(match.group(1), "run card") if match else None
    except InvalidInput:
        return None
    environment = front.get(ENV_KEY) if isinstance(front, dict) else None
    return environment if isinstance(environment, dict) else None


def validate_config(kind: str, data: dict[str, Any]) -> BaseModel:
    """`data` as `kind`'s config; every bad or unknown field in one InvalidInput whose
    text is the same for options, cards and forms (see podium/jobs/fields.py)."""
    load_plugins()
    job_kind = get_kind(kind)
    model = job_kind.config_model()
    fields = job_kind.fields()
    unknown = [
        f"{key}: unknown setting (settings of {kind!r}: {', '.join(model.model_fields)})"
        for key in data
        if key not in _accepted_keys(model)
    ]
    renamed = {old: new for old, new in old_names(model).items() if old in data}
    unknown += [
        f"{old}: the old name of {new}, which is given too; keep only {new}"
        for old, new in renamed.items()
        if new in data
    ]
    try:
        config = model.model_validate(data)
    except ValidationError as exc:
        raise settings_error(kind, exc, fields, unknown) from None
    if unknown:
        raise settings_error(kind, None, fields, unknown)
    for old, new in renamed.items():
        say_renamed(kind, old, new)
    return config


def _accepted_keys(model: type[BaseModel]) -> set[str]:
    keys = set(model.model_fields)
    keys.update(f.alias for f in model.model_fields.values() if f.alias)
    keys.update(old_names(model))
    return keys


def _known_kinds() -> str:
    from podium.jobs.kinds import KINDS

    return "known kinds: " + ", ".join(sorted(KINDS))


def table_refs(config: BaseModel) -> list[TableRef]:
    """Every input table of a config, in field order."""
    return list(_walk_refs(config))


def _walk_refs(value: Any) -> Iterator[TableRef]:
    if isinstance(value, TableRef):
        yield value
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from _walk_refs(getattr(value, name))
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _walk_refs(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _walk_refs(item)


SEED_FIELD = "seed"
SEED_LIMIT = 2**31 - 1  # what vLLM, torch and numpy all accept as a seed


def draw_seed() -> int:
    return secrets.randbelow(SEED_LIMIT)


def samples_without_seed(config: BaseModel) -> bool:
    """True for a sampling config (one with a nullable `seed`) whose seed is not set."""
    field = type(config).model_fields.get(SEED_FIELD)
    return field is not None and getattr(config, SEED_FIELD) is None


def pin_inputs(config: BaseModel) -> BaseModel:
    """A copy of `config` whose TableRefs name existing snapshots (current if unset) and
    whose unset sampling seed is a number, drawn now and kept by every re-run."""
    if isinstance(config, TableRef):
        return config.pinned()
    updates = {name: _pin(getattr(config, name)) for name in type(config).model_fields}
    if samples_without_seed(config):
        updates[SEED_FIELD] = draw_seed()
    return config.model_copy(update=updates)


def _pin(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return pin_inputs(value)
    if isinstance(value, list):
        return [_pin(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_pin(item) for item in value)
    if isinstance(value, dict):
        return {key: _pin(item) for key, item in value.items()}
    return value
