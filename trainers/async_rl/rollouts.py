"""The rollouts table: every sample an async run generates, as data.

The SFT schema (prompt turns plus the completion as the assistant's turn, so a run's
rollouts are browsed, searched, validated and reviewed like any table) plus:

- `reward` (double): the summed, weighted reward the learner used;
- `policy_version` (int): the version of the weights that generated the sample;
- `trained_step` (int): the learner step that trained on it (0-based: step `s`
  starts from version `s`, so `trained_step - policy_version` is the sample's lag);
- `replica` (int): which replica generated it.

`id` is the rollout id `<slot>-<completion>` (see `trainers.async_rl.controller`): a
slot regenerated after its replica died keeps its number, and the writer refuses an id
it has written, so every sample lands exactly once. One append per learner step, with
the job's lineage as table properties; the default name is `<namespace>.<out>_rollouts`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
from pyiceberg.schema import Schema
from pyiceberg.types import DoubleType, IntegerType, NestedField

from podium.errors import InvalidInput
from podium.store.catalog.catalog import table_exists
from podium.store.catalog.kinds import ROLLOUTS
from podium.store.schema import PROP_KIND, SFT_ARROW_SCHEMA, SFT_SCHEMA
from podium.store.write.write import write_table

ROLLOUTS_KIND = ROLLOUTS

ROLLOUTS_SCHEMA = Schema(
    *SFT_SCHEMA.fields,
    NestedField(13, "reward", DoubleType(), required=False),
    NestedField(14, "policy_version", IntegerType(), required=False),
    NestedField(15, "trained_step", IntegerType(), required=False),
    NestedField(16, "replica", IntegerType(), required=False),
)


ROLLOUTS_ARROW_SCHEMA = pa.schema(
    [
        *SFT_ARROW_SCHEMA,
        pa.field("reward", pa.float64()),
        pa.field("policy_version", pa.int32()),
        pa.field("trained_step", pa.int32()),
        pa.field("replica", pa.int32()),
    ]
)


ROLLOUTS_NAMESPACE = "rollouts"


def default_rollouts_name(out: str) -> str:
    """`rollouts.<out>`, `out` made a legal name: a namespace of their own, not the
    training table's (they crowded `demo` and Home beside the datasets)."""
    stem = re.sub(r"[^A-Za-z0-9_]", "_", out)
    if not re.match(r"[A-Za-z_]", stem):
        stem = "_" + stem
    return f"{ROLLOUTS_NAMESPACE}.{stem}"


def rollouts_note(name: str, named: bool) -> str:
    """Where a run's samples go, said where the run is shown (the job log, the Train
    page): a default name, which nobody chose, says how to choose another."""
    if named:
        return f"every sample is written to {name}"
    return (
        f"every sample is written to {name}, in the {ROLLOUTS_NAMESPACE} namespace by "
        "default; set `rollouts` (--rollouts NAMESPACE.TABLE) to choose"
    )


def check_rollouts_free(name: str) -> None:
    if table_exists(name):
        raise InvalidInput(
            f"Rollouts table {name} already exists (an earlier run's samples); choose "
            "another --rollouts NAMESPACE.TABLE, or drop that table."
        )


def rollout_row(
    *,
    rollout_id: str,
    prompt: Sequence[Mapping[str, str]],
    completion: str,
    reward: float,
    policy_version: int,
    trained_step: int,
    replica: int,
    metadata: Mapping[str, Any],
) -> dict[str, Any]:
    return {
        "id": rollout_id,
        "messages": [
            *({"role": m["role"], "content": m["content"]} for m in prompt),
            {"role": "assistant", "content": completion},
        ],
        "system": None,
        "source": "async-rl",
        "split": "train",
        "tags": [f"replica-{replica}", f"version-{policy_version}"],
        "metadata": json.dumps(dict(metadata)),
        "created_at": datetime.now(UTC),
        "reward": float(reward),
        "policy_version": policy_version,
        "trained_step": trained_step,
        "replica": replica,
    }


@dataclass
class RolloutsWriter:
    """Appends each step's rows once; the first append creates the table."""

    name: str
    properties: dict[str, str]
    written: set[str] = field(default_factory=set)
    rows: int = 0
    duplicates: int = 0  # rows refused because their id was written (must stay 0)

    def append(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """Write the rows not written before; how many were written."""
        fresh = [dict(r) for r in rows if r["id"] not in self.written]
        self.duplicates += len(rows) - len(fresh)
        if not fresh:
            return 0
        first = not table_exists(self.name)
        write_table(
            self.name,
            pa.Table.from_pylist(fresh, schema=ROLLOUTS_ARROW_SCHEMA),
            mode="create" if first else "append",
            schema=ROLLOUTS_SCHEMA if first else None,
            properties={PROP_KIND: ROLLOUTS_KIND, **self.properties} if first else None,
        )
        self.written.update(r["id"] for r in fresh)
        self.rows += len(fresh)
        return len(fresh)
