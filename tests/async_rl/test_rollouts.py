"""The rollouts table in a real Iceberg catalog: SFT schema plus the RL columns, one
append per step, each rollout id once."""

from __future__ import annotations

from pathlib import Path

import pytest

from podium.errors import InvalidInput
from podium.store.catalog.catalog import load_table
from podium.store.schema import PROP_KIND
from trainers.async_rl.rollouts import (
    RolloutsWriter,
    check_rollouts_free,
    default_rollouts_name,
    rollout_row,
    rollouts_note,
)


def row(rid: str, version: int, step: int) -> dict[str, object]:
    return rollout_row(
        rollout_id=rid,
        prompt=[{"role": "user", "content": "Say hi"}],
        completion="hi",
        reward=1.0,
        policy_version=version,
        trained_step=step,
        replica=1,
        metadata={"slot": 0},
    )


def test_rows_land_once_with_the_rl_columns(podium_home: Path) -> None:
    writer = RolloutsWriter("demo.run_rollouts", {"podium.lineage.job_id": "j1"})
    assert writer.append([row("0-0", 0, 0), row("0-1", 0, 0)]) == 2
    # The same slot again (a replaced replica's late answer) is refused, not duplicated.
    assert writer.append([row("0-1", 0, 0), row("1-0", 0, 1)]) == 1
    assert writer.duplicates == 1
    table = load_table("demo.run_rollouts")
    assert table.properties[PROP_KIND] == "rollouts"
    assert table.properties["podium.lineage.job_id"] == "j1"
    data = table.scan().to_arrow().sort_by("id").to_pylist()
    assert [r["id"] for r in data] == ["0-0", "0-1", "1-0"]
    assert [r["trained_step"] - r["policy_version"] for r in data] == [0, 0, 1]
    assert data[0]["messages"][-1] == {"role": "assistant", "content": "hi"}
    with pytest.raises(InvalidInput, match="already exists"):
        check_rollouts_free("demo.run_rollouts")


def test_default_name_comes_from_out(podium_home: Path) -> None:
    # A namespace of their own: they landed in the training table's (demo) and crowded Home.
    assert default_rollouts_name("json-grpo.v2") == "rollouts.json_grpo_v2"
    assert default_rollouts_name("7b") == "rollouts._7b"


def test_a_default_rollouts_table_says_where_it_is_and_how_to_choose() -> None:
    """Before: the samples landed in demo.<out>_rollouts and nothing said so."""
    default = rollouts_note("rollouts.grpo_1", named=False)
    assert "in the rollouts namespace by default" in default
    assert "--rollouts NAMESPACE.TABLE" in default
    assert rollouts_note("runs.mine", named=True) == "every sample is written to runs.mine"
    from trainers.config import GrpoConfig

    help_text = GrpoConfig.model_fields["rollouts"].description or ""
    assert "rollouts.<out>" in help_text
