"""Computing signals over one table snapshot: the `signals` job kind.

    podium signals run demo.chat --signal near-dup,exact-dup,private-data

Every signal named is checked (its settings, the eval tables it needs) before the
snapshot is read; then each signal streams the snapshot and its values are written
to its own table `NS.TABLE__sig_KIND` in one commit, so a run that fails or is
killed leaves every signal table as it was.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from pydantic import BaseModel, Field, field_validator
from pyiceberg.table import Table

from podium.errors import InvalidInput
from podium.reporting import JobOutputs, Reporter
from podium.signals.map_settings import (
    EmbeddingSettings,
    ProjectionSettings,
    SemanticDupSettings,
    TopicsSettings,
)
from podium.signals.registry import SIGNAL_KINDS, SignalKind, signal_kind
from podium.signals.rubric import RubricSettings
from podium.signals.settings import (
    ContaminationSettings,
    ExactDupSettings,
    LanguageSettings,
    LengthSettings,
    NearDupSettings,
    PrivateDataSettings,
)
from podium.signals.signal import RowSignal, Signal, TableSignal
from podium.signals.store import Described, signal_table_name, write_signal
from podium.signals.turns import Turns, columns_of, turns_of
from podium.store.catalog.catalog import full_name, load_table, name_of
from podium.store.read.plan import plan_snapshot
from podium.store.read.read import iter_table_batches
from podium.store.read.refs import TableRef
from podium.store.read.snapshots import resolve_snapshot
from podium.validate.turns import Columns


class SignalsConfig(BaseModel):
    """Compute signals over every row of a table snapshot."""

    table: TableRef = Field(description="The table to describe, pinned to a snapshot.")
    signals: list[str] = Field(
        min_length=1,
        description="Signals to compute (comma-separated or repeated): "
        + ", ".join(SIGNAL_KINDS)
        + ".",
    )
    roles: list[str] = Field(
        [], description="Roles of the turns the signals read (empty: every turn)."
    )
    batch_rows: int = Field(2048, ge=1, le=1_000_000, description="Rows read per batch.")
    nodes: int = Field(
        0,
        ge=0,
        le=1024,
        description="near-dup, exact-dup, contamination: read in Ray tasks spread over up "
        "to this many nodes, one per group of data files (near-dup's buckets shuffled by "
        "band): the same values as in one process; 0 or other signals: in the job's own "
        "process.",
    )
    length: LengthSettings = Field(
        default_factory=LengthSettings, description="length: no settings."
    )
    language: LanguageSettings = Field(
        default_factory=LanguageSettings,
        description="language: engine (fasttext|lingua), accuracy (lingua: low|high), "
        "max_chars, languages (ISO 639-1 codes).",
    )
    private_data: PrivateDataSettings = Field(
        default_factory=PrivateDataSettings,
        description="private-data: kinds (email, phone, ip_address, card_number, iban, secret).",
    )
    exact_dup: ExactDupSettings = Field(
        default_factory=ExactDupSettings, description="exact-dup: no settings."
    )
    near_dup: NearDupSettings = Field(
        default_factory=NearDupSettings,
        description="near-dup: shingle (characters), num_perm, bands, threshold (exact "
        "Jaccard), seed.",
    )
    contamination: ContaminationSettings = Field(
        default_factory=ContaminationSettings,
        description="contamination: evals (NS.TABLE[@SNAPSHOT] each; --eval), ngram "
        "(words), eval_roles.",
    )
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    topics: TopicsSettings = Field(default_factory=TopicsSettings)
    projection: ProjectionSettings = Field(default_factory=ProjectionSettings)
    semantic_dup: SemanticDupSettings = Field(
        default_factory=SemanticDupSettings,
        description="semantic-dup: threshold (cosine), neighbours (per row, by the index).",
    )
    rubric: RubricSettings = Field(
        default_factory=RubricSettings,
        description="rubric: judge (a registered model), prompt ({question}, {answer}), "
        "max_tokens, concurrency.",
    )

    @field_validator("signals")
    @classmethod
    def _known_signals(cls, signals: list[str]) -> list[str]:
        names = [n.strip() for item in signals for n in item.split(",") if n.strip()]
        if not names:
            raise InvalidInput("Name at least one signal: " + ", ".join(SIGNAL_KINDS) + ".")
        return list(dict.fromkeys(signal_kind(n).name for n in names))

    @field_validator("roles")
    @classmethod
    def _split_roles(cls, roles: list[str]) -> list[str]:
        return [r.strip() for item in roles for r in item.split(",") if r.strip()]


@dataclass
class SnapshotSource:
    """One snapshot of a loaded table, streamed as turns in bounded batches; signals
    may scan it more than once."""

    loaded: Table
    snapshot_id: int
    columns: Columns
    roles: tuple[str, ...]
    batch_rows: int
    total: int
    reporter: Reporter = field(default_factory=Reporter)

    @property
    def table(self) -> str:
        return name_of(self.loaded)

    def turns(self) -> Iterator[Turns]:
        wanted = [self.columns.id, self.columns.messages]
        done = 0
        texts = 0
        for batch in iter_table_batches(
            self.loaded, self.snapshot_id, columns=wanted, batch_size=self.batch_rows
        ):
            self.reporter.check_cancelled()
            turns = turns_of(batch, self.columns, self.roles)
            texts += sum(1 for t in turns.texts if t)
            yield turns
            done += batch.num_rows
            self.reporter.progress(done, self.total)
        if not texts:
            which = f"of role {', '.join(self.roles)} " if self.roles else ""
            raise InvalidInput(
                f"Table {self.table}@{self.snapshot_id} has no turn {which}with text; there "
                "is nothing to compute signals of (pick other --roles or another table)."
            )


def open_source(
    name: str, snapshot: int | str | None, roles: list[str], batch_rows: int, reporter: Reporter
) -> SnapshotSource:
    """The snapshot to describe, refused with a clear message when it cannot be."""
    table = load_table(full_name(name))
    sid = resolve_snapshot(table, snapshot)  # a missing or expired snapshot: NotFound
    if sid is None:
        raise InvalidInput(
            f"Table {name_of(table)} has no snapshot (no rows); nothing to describe."
        )
    columns = columns_of(table)
    stored = [f.name for f in table.schema().fields]
    missing = [c for c in (columns.id, columns.messages) if c not in stored]
    if missing:
        raise InvalidInput(
            f"Table {name_of(table)} has no {' or '.join(map(repr, missing))} column (columns: "
            f"{', '.join(stored)}); signals read chat messages by row id. Map its columns "
            "(podium map) or import it as SFT."
        )
    total = plan_snapshot(table, sid).total
    return SnapshotSource(table, sid, columns, tuple(roles), batch_rows, total, reporter)


# The signals `nodes` spreads over a Ray cluster (podium.signals.on_ray).
ON_RAY = ("near-dup", "exact-dup", "contamination")


def signals_of(config: SignalsConfig) -> list[tuple[SignalKind, Signal[Any]]]:
    """The configured signals, each built with its settings and checked."""
    built = []
    for name in config.signals:
        kind = signal_kind(name)
        settings = getattr(config, kind.settings_field)
        signal = kind.load()(settings)
        signal.check()
        if config.nodes and kind.name in ON_RAY:
            signal.nodes = config.nodes  # type: ignore[attr-defined]
        built.append((kind, signal))
    return built


def described_settings(signal: Signal[Any], roles: list[str]) -> dict[str, Any]:
    settings: dict[str, Any] = signal.settings.model_dump(mode="json")
    settings["roles"] = roles
    settings.update(signal.pinned())
    return settings


def signal_batches(
    signal: Signal[Any], source: SnapshotSource, reporter: Reporter
) -> Iterator[pa.RecordBatch]:
    if isinstance(signal, RowSignal):
        for turns in source.turns():
            out = signal.compute(turns)
            if out.num_rows:
                yield out
    elif isinstance(signal, TableSignal):
        yield from signal.run(source, reporter)
    else:  # pragma: no cover - the two shapes are the only ones
        raise TypeError(type(signal))


def compute_signals(
    config: SignalsConfig, reporter: Reporter | None = None
) -> list[dict[str, Any]]:
    """Compute and store every configured signal; one summary per signal."""
    reporter = reporter or Reporter()
    built = signals_of(config)  # every bad setting before any work
    for _, signal in built:
        signal.prepare()
    source = open_source(
        config.table.name, config.table.snapshot_id, config.roles, config.batch_rows, reporter
    )
    results = []
    for kind, signal in built:
        out = signal_table_name(source.table, kind.name)
        reporter.phase(f"{kind.name}: {source.table}@{source.snapshot_id} -> {out}")
        described = Described(
            kind.name,
            signal.version,
            described_settings(signal, config.roles),
            source.table,
            source.snapshot_id,
        )
        written = write_signal(
            out,
            signal_batches(signal, source, reporter),
            signal.schema,
            described,
            reporter.lineage,
            signal.summary,
        )
        signal.after_write(written)
        snapshot = written.current_snapshot()
        summary = {"signal": kind.name, "table": out, **signal.summary()}
        summary["snapshot_id"] = snapshot.snapshot_id if snapshot else None
        reporter.log(f"{kind.name}: {json.dumps(signal.summary(), sort_keys=True)} -> {out}")
        results.append(summary)
    return results


def run_signals(config: SignalsConfig, reporter: Reporter) -> JobOutputs:
    """The `signals` job: every signal table written, named as the job's outputs."""
    results = compute_signals(config, reporter)
    tables = [f"{r['table']}@{r['snapshot_id']}" for r in results]
    return JobOutputs(tables=tables, summary={"signals": results})


def preflight(config: SignalsConfig) -> SignalsConfig:
    """Before a job exists: the table can be described and every signal's settings hold."""
    signals_of(config)
    open_source(config.table.name, config.table.snapshot_id, config.roles, 1, Reporter())
    return config
