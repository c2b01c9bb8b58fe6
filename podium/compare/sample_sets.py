"""Finding samples that already exist, so a comparison never generates the same thing twice.

A set of samples is identified by its key: the checkpoint (registry name and the
location it was served from), the prompt set pinned to a snapshot, the prompt column
and the sampling parameters. Any `generate` samples table whose lineage and stored
config match the key and that holds every wanted prompt is reused as is; otherwise
the comparison generates into the key's own table (`compare.samples_<hash>`), which
the `generate` job resumes, so a second comparison with the same key sends no
request at all.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import pyarrow.compute as pc

from generators.generate import PROP_CONFIG, SAMPLES_KIND, GenerateConfig, sampling_json
from podium.models.registry import ModelInfo
from podium.store.catalog.catalog import list_tables, load_table, open_catalog, parse_name
from podium.store.read.read import iter_table_batches
from podium.store.read.snapshots import resolve_snapshot
from podium.store.schema import (
    PROP_KIND,
    PROP_LINEAGE_CHECKPOINT,
    PROP_LINEAGE_CHECKPOINT_LOCATION,
    PROP_LINEAGE_INPUT,
)

SAMPLES_NAMESPACE = "compare"


@dataclass(frozen=True)
class SampleKey:
    checkpoint: str
    location: str
    input_ref: str  # NAME@SNAPSHOT
    prompt_column: str | None
    sampling: str  # canonical JSON of the sampling parameters

    @classmethod
    def of(cls, model: ModelInfo, input_ref: str, cfg: GenerateConfig) -> SampleKey:
        return cls(
            model.name,
            model.location,
            input_ref,
            cfg.prompt_column,
            json.dumps(sampling_json(cfg), sort_keys=True),
        )

    def digest(self) -> str:
        text = json.dumps(
            [self.checkpoint, self.location, self.input_ref, self.prompt_column, self.sampling]
        )
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def own_table(self) -> str:
        return f"{SAMPLES_NAMESPACE}.samples_{self.digest()}"


def _matches(properties: dict[str, str], key: SampleKey) -> bool:
    if properties.get(PROP_KIND) != SAMPLES_KIND:
        return False
    lineage = (
        properties.get(PROP_LINEAGE_INPUT),
        properties.get(PROP_LINEAGE_CHECKPOINT),
        properties.get(PROP_LINEAGE_CHECKPOINT_LOCATION),
    )
    if lineage != (key.input_ref, key.checkpoint, key.location):
        return False
    try:
        stored: dict[str, Any] = json.loads(properties.get(PROP_CONFIG, ""))
    except json.JSONDecodeError:
        return False
    if stored.get("prompt_column") != key.prompt_column:
        return False
    keys = json.loads(key.sampling).keys()
    return json.dumps({k: stored.get(k) for k in keys}, sort_keys=True) == key.sampling


def prompt_ids_in(table_name: str) -> set[str]:
    table = load_table(table_name)
    found: set[str] = set()
    for batch in iter_table_batches(
        table, resolve_snapshot(table, None), columns=["prompt_id", "error"]
    ):
        ok = batch.filter(pc.is_null(batch.column("error")))
        found.update(pc.unique(ok.column("prompt_id")).to_pylist())
    return found


def find_samples(key: SampleKey, prompt_ids: Collection[str]) -> str | None:
    """A samples table with this key holding every prompt in `prompt_ids`, if any.

    The key's own table is preferred; other tables are found by their properties.
    """
    catalog = open_catalog()
    wanted = set(prompt_ids)
    own = key.own_table()
    names = [own] + [n for n in list_tables(catalog) if n != own]
    for name in names:
        ident = parse_name(name)
        if not catalog.table_exists(ident):
            continue
        properties = dict(catalog.load_table(ident).properties)
        if _matches(properties, key) and wanted <= prompt_ids_in(name):
            return name
    return None
