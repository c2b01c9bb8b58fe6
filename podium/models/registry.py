"""The checkpoint registry: base models, trained checkpoints and external endpoints.

Rows live in the app-state database beside the catalog (`podium.store.state.state`), so the
app, the worker and the CLI see the same models. An endpoint stores the *name* of the
environment variable that holds its API key (an allowed one), never the key; a key
Podium holds lives in the home (`podium.models.endpoint_keys`).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Integer,
    String,
    Table,
    Text,
    delete,
    insert,
    select,
    update,
)

from podium.errors import InvalidInput, NotFound
from podium.models.digest import checkpoint_digest
from podium.models.endpoint_keys import shown_url
from podium.models.model_names import DEFAULT_ALIAS as DEFAULT_ALIAS
from podium.models.model_names import check_name as check_name
from podium.models.state_rows import from_row
from podium.store.state.state import METADATA, engine

ModelKind = Literal["base", "trained", "endpoint"]
# The lineage key that marks a checkpoint of a run that stopped before its last step.
PARTIAL_KEY = "partial"
MODEL_KINDS: tuple[str, ...] = ("base", "trained", "endpoint")

models_table = Table(
    "podium_models",
    METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(128), unique=True, nullable=False),
    Column("kind", String(16), nullable=False),
    Column("path", Text),
    Column("url", Text),
    Column("api_key_env", String(128)),
    Column("remote_model", String(256)),
    Column("parent", String(128)),
    Column("job_id", String(64)),
    Column("lineage", Text, nullable=False, default="{}"),
    Column("step", Integer),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("is_default", Boolean, nullable=False, default=False),
)


@dataclass(frozen=True)
class ModelInfo:
    name: str
    kind: str
    path: str | None = None
    url: str | None = None
    api_key_env: str | None = None
    remote_model: str | None = None
    parent: str | None = None
    job_id: str | None = None
    lineage: dict[str, Any] = field(default_factory=dict)
    step: int | None = None
    created_at: str = ""
    is_default: bool = False

    @property
    def location(self) -> str:
        """Where it lives, as people may read it (an endpoint URL without credentials)."""
        return shown_url(self.url) if self.kind == "endpoint" else (self.path or "")

    @property
    def partial(self) -> str | None:
        """Why this checkpoint is not a finished run's ("cancelled at step 3 of 10"), or
        None: what every list of models shows beside its name."""
        note = self.lineage.get(PARTIAL_KEY)
        return str(note) if note else None

    @property
    def label(self) -> str:
        """The name, and "(partial: ...)" for a checkpoint of a run that did not finish."""
        return f"{self.name} (partial: {self.partial})" if self.partial else self.name

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "url": shown_url(self.url) or None, "partial": self.partial}


def _row_to_info(row: Any) -> ModelInfo:
    created = row.created_at
    return from_row(
        ModelInfo,
        row,
        lineage=json.loads(row.lineage or "{}"),
        created_at=created.isoformat() if created else "",
        is_default=bool(row.is_default),
    )


def check_checkpoint_dir(path: str | Path) -> Path:
    """A Hugging Face checkpoint directory (config.json + weights), resolved."""
    p = Path(path).expanduser().resolve()
    if not (p / "config.json").is_file():
        raise InvalidInput(
            f"{p} is not a Hugging Face checkpoint directory (no config.json). Pass the "
            "folder that `save_pretrained` wrote."
        )
    if not any(p.glob("*.safetensors")) and not any(p.glob("*.bin")):
        raise InvalidInput(f"{p} has a config.json but no *.safetensors or *.bin weights.")
    return p


def register_model(
    name: str,
    *,
    kind: ModelKind,
    path: str | None = None,
    url: str | None = None,
    api_key_env: str | None = None,
    remote_model: str | None = None,
    parent: str | None = None,
    job_id: str | None = None,
    lineage: dict[str, Any] | None = None,
    step: int | None = None,
    is_default: bool = False,
    replace: bool = False,
) -> ModelInfo:
    """Insert (or with `replace`, overwrite) one registry row in one transaction."""
    check_name(name)
    if kind not in MODEL_KINDS:
        raise InvalidInput(f"Unknown model kind {kind!r}; use one of {', '.join(MODEL_KINDS)}.")
    values = dict(
        name=name,
        kind=kind,
        path=path,
        url=url,
        api_key_env=api_key_env,
        remote_model=remote_model,
        parent=parent,
        job_id=job_id,
        lineage=json.dumps(lineage or {}, sort_keys=True),
        step=step,
        created_at=datetime.now(UTC),
        is_default=is_default,
    )
    with engine().begin() as conn:
        exists = conn.execute(select(models_table.c.id).where(models_table.c.name == name)).first()
        if exists and not replace:
            raise InvalidInput(
                f"A model named {name!r} is already registered; choose another name "
                "(or remove it first with `podium models remove NAME`)."
            )
        if is_default:
            conn.execute(update(models_table).values(is_default=False))
        if exists:
            conn.execute(update(models_table).where(models_table.c.name == name).values(**values))
        else:
            conn.execute(insert(models_table).values(**values))
    if path is not None and kind != "endpoint" and Path(path).is_dir():
        checkpoint_digest(path)  # hashed once now, so cards written later find it cached
    return get_model(name)


def register_checkpoint(
    name: str,
    path: str | Path,
    *,
    parent: str | None,
    job_id: str | None,
    lineage: dict[str, Any],
    step: int | None = None,
    kind: ModelKind = "trained",
) -> ModelInfo:
    """Register a Hugging Face checkpoint directory (what trainers call after saving).

    `parent` is the registered model it was trained from, `lineage` the dataset
    snapshots and run card that produced it (stored as JSON).
    """
    resolved = check_checkpoint_dir(path)
    if parent is not None:
        get_model(parent)  # a typo in the parent must not go unnoticed
    return register_model(
        name,
        kind=kind,
        path=str(resolved),
        parent=parent,
        job_id=job_id,
        lineage=lineage,
        step=step,
    )


def add_endpoint(
    url: str, name: str, *, api_key_env: str | None = None, remote_model: str | None = None
) -> ModelInfo:
    """Register any OpenAI-compatible server (`.../v1`) by URL."""
    if not re.match(r"^https?://", url):
        raise InvalidInput(f"Endpoint URL {url!r} must start with http:// or https://.")
    url = url.rstrip("/")
    if not url.endswith("/v1"):
        url += "/v1"
    if api_key_env:
        from podium.models.endpoint_keys import check_key_env

        check_key_env(api_key_env, url)
    return register_model(
        name, kind="endpoint", url=url, api_key_env=api_key_env, remote_model=remote_model
    )


def checkpoint_pin(name: str) -> str | None:
    """What a run card records for model `name`: its checkpoint's content digest, the URL
    (credentials left out: viewers read cards) and model id of an endpoint, or None when
    the name or its directory is gone."""
    info = get_model_or_none(name)
    if info is None:
        return None
    if info.kind == "endpoint":
        return f"endpoint:{shown_url(info.url)}#{info.remote_model or ''}"
    if not info.path or not Path(info.path).is_dir():
        return None
    return checkpoint_digest(info.path)


def get_model_or_none(name: str) -> ModelInfo | None:
    if name == DEFAULT_ALIAS:
        return _default_or_none()
    with engine().connect() as conn:
        row = conn.execute(select(models_table).where(models_table.c.name == name)).first()
    return _row_to_info(row) if row else None


def get_model(name: str) -> ModelInfo:
    info = get_model_or_none(name)
    if info is not None:
        return info
    known = ", ".join(m.name for m in list_models()) or "none yet"
    raise NotFound(
        f"No model named {name!r}. Known models: {known}. Register one with "
        "`podium models bootstrap`, `podium models add PATH` or `podium models add-endpoint URL`."
    )


def list_models() -> list[ModelInfo]:
    with engine().connect() as conn:
        rows = conn.execute(select(models_table).order_by(models_table.c.created_at)).all()
    return [_row_to_info(r) for r in rows]


def _default_or_none() -> ModelInfo | None:
    with engine().connect() as conn:
        row = conn.execute(select(models_table).where(models_table.c.is_default)).first()
    return _row_to_info(row) if row else None


def default_base() -> ModelInfo:
    info = _default_or_none()
    if info is None:
        raise NotFound("No default base model yet; run `podium models bootstrap`.")
    return info


def remove_model(name: str) -> None:
    """Forget a model (its files are left alone)."""
    get_model(name)
    with engine().begin() as conn:
        conn.execute(delete(models_table).where(models_table.c.name == name))
    from podium.models.endpoint_keys import forget_key

    forget_key(name)  # a later endpoint of this name starts without it


def mark_partial(names: list[str], note: str) -> None:
    """Say in each checkpoint's lineage that its run stopped early (`note`: "cancelled at
    step 3 of 10"), in one transaction."""
    with engine().begin() as conn:
        rows = conn.execute(
            select(models_table.c.name, models_table.c.lineage).where(
                models_table.c.name.in_(names)
            )
        ).all()
        for name, lineage in rows:
            marked = {**json.loads(lineage or "{}"), PARTIAL_KEY: note}
            conn.execute(
                update(models_table)
                .where(models_table.c.name == name)
                .values(lineage=json.dumps(marked, sort_keys=True))
            )


def forget_models(names: list[str]) -> None:
    """Unregister these names in one transaction (their files are the caller's)."""
    with engine().begin() as conn:
        conn.execute(delete(models_table).where(models_table.c.name.in_(names)))
