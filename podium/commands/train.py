"""Training commands: SFT and GRPO runs whose checkpoints come back registered.

    podium train sft  --model base --table demo.json_sft --out json-sft --preset cpu-smoke
    podium train sft  --model base --table demo.json_sft --out json-lora --preset cpu-small \
        --method lora --steps 40 --set lora_r=8
    podium train grpo --model json-sft --table demo.json_sft --out json-grpo \
        --reward validate:json --reward length:300*0.2 --preset cpu-smoke
    podium train sft ... --card run.md     # write the run card, run nothing
    podium train presets [--json]          # what each preset sets

Presets fill every setting the command line leaves out: `cpu-smoke` runs in seconds
to a minute, `cpu-small` a few minutes on 2 cores, `gpu` is a real run. Any card field
can be set with `--set FIELD=VALUE` (see `podium jobs kinds`). The final checkpoint is
registered as `--out`, periodic ones as `OUT-step-N`; `podium generate --model OUT`
samples from it at once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.console import Console

from podium.errors import InvalidInput

console = Console(highlight=False, soft_wrap=True)
train_app = typer.Typer(help="Train SFT and GRPO checkpoints with TRL.", no_args_is_help=True)

ModelOpt = Annotated[str, typer.Option("--model", help="Registered base model or checkpoint.")]
TableOpt = Annotated[str, typer.Option("--table", help="Training table NAMESPACE.TABLE.")]
OutOpt = Annotated[str, typer.Option("--out", help="Name of the new checkpoint.")]
SnapshotOpt = Annotated[int | None, typer.Option("--snapshot", help="Snapshot of --table.")]
PresetOpt = Annotated[str, typer.Option("--preset", help="cpu-smoke, cpu-small or gpu.")]
MethodOpt = Annotated[str | None, typer.Option("--method", help="full or lora.")]
StepsOpt = Annotated[int | None, typer.Option("--steps", help="Optimizer steps.")]
LrOpt = Annotated[float | None, typer.Option("--lr", help="Peak learning rate.")]
SeedOpt = Annotated[int | None, typer.Option("--seed", help="Random seed.")]
ValidOpt = Annotated[
    bool, typer.Option("--only-valid", help="Skip rows its validation report marks malformed.")
]
SetOpt = Annotated[
    list[str] | None, typer.Option("--set", help="Any card field, FIELD=VALUE (repeatable).")
]
CardOpt = Annotated[
    Path | None, typer.Option("--card", help="Write the run card here and run nothing.")
]
QueueOpt = Annotated[bool, typer.Option("--queue", help="Queue for `podium worker`.")]


def parse_sets(items: list[str] | None) -> dict[str, Any]:
    """`FIELD=VALUE` pairs, each VALUE read as YAML (numbers, booleans, lists)."""
    values: dict[str, Any] = {}
    for item in items or []:
        key, eq, raw = item.partition("=")
        if not eq or not key.strip():
            raise InvalidInput(f"--set {item!r}: write FIELD=VALUE, e.g. --set lora_r=8.")
        values[key.strip()] = yaml.safe_load(raw) if raw else ""
    return values


def build_config(kind: str, fields: dict[str, Any]) -> Any:
    """The run-card model for `kind` from command-line values (None = preset default)."""
    from pydantic import ValidationError

    from podium.models.registry import get_model
    from trainers.config import GrpoConfig, SftConfig

    model = SftConfig if kind == "sft" else GrpoConfig
    data = {k: v for k, v in fields.items() if v is not None}
    data["model"] = get_model(data["model"]).name  # the card names a checkpoint, not an alias
    try:
        cfg = model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'card'}: {e['msg']}" for e in exc.errors()
        )
        raise InvalidInput(f"Invalid {kind} settings: {problems}.") from None
    if kind == "grpo":
        from trainers.rewards import check_rewards

        check_rewards(cfg.rewards)
    return cfg


def _launch(kind: str, cfg: Any, card: Path | None, queue: bool) -> None:
    from podium.jobs.launch import run_or_write_card

    job = run_or_write_card(kind, cfg, card, foreground=not queue)
    if isinstance(job, dict):
        summary = (job.get("outputs") or {}).get("summary") or {}
        console.print(
            f"checkpoint {summary.get('checkpoint', cfg.out)} registered at {summary.get('path')}; "
            f"sample it with `podium generate --model {cfg.out} --table TABLE --out NS.NAME`"
        )


@train_app.command("sft")
def sft(
    table: TableOpt,
    out: OutOpt,
    model: ModelOpt = "base",
    snapshot: SnapshotOpt = None,
    preset: PresetOpt = "cpu-smoke",
    method: MethodOpt = None,
    steps: StepsOpt = None,
    lr: LrOpt = None,
    seed: SeedOpt = None,
    only_valid: ValidOpt = False,
    set_: SetOpt = None,
    card: CardOpt = None,
    queue: QueueOpt = False,
) -> None:
    """Supervised fine-tuning on the assistant turns of a chat table."""
    fields = dict(
        model=model,
        table={"name": table, "snapshot_id": snapshot},
        out=out,
        preset=preset,
        method=method,
        max_steps=steps,
        learning_rate=lr,
        seed=seed,
        only_valid=only_valid,
    )
    _launch("sft", build_config("sft", {**fields, **parse_sets(set_)}), card, queue)


@train_app.command("grpo")
def grpo(
    table: TableOpt,
    out: OutOpt,
    model: ModelOpt = "base",
    reward: Annotated[
        list[str] | None,
        typer.Option("--reward", help="RULE[*WEIGHT], repeatable (see `podium train --help`)."),
    ] = None,
    snapshot: SnapshotOpt = None,
    preset: PresetOpt = "cpu-smoke",
    method: MethodOpt = None,
    steps: StepsOpt = None,
    lr: LrOpt = None,
    seed: SeedOpt = None,
    only_valid: ValidOpt = False,
    set_: SetOpt = None,
    card: CardOpt = None,
    queue: QueueOpt = False,
) -> None:
    """GRPO with rewards: validate:RULE, sandbox:output, sandbox:tests, exact_match, length:N."""
    from trainers.config import RewardSpec

    fields = dict(
        model=model,
        table={"name": table, "snapshot_id": snapshot},
        out=out,
        preset=preset,
        method=method,
        max_steps=steps,
        learning_rate=lr,
        seed=seed,
        only_valid=only_valid,
        rewards=[RewardSpec.parse(r).model_dump() for r in reward] if reward else None,
    )
    _launch("grpo", build_config("grpo", {**fields, **parse_sets(set_)}), card, queue)


@train_app.command("presets")
def presets(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """What each preset sets, for SFT and GRPO."""
    from trainers.presets import PRESET_NAMES, preset_defaults

    table = {k: {p: preset_defaults(k, p) for p in PRESET_NAMES} for k in ("sft", "grpo")}
    if as_json:
        typer.echo(json.dumps(table, indent=2))
        return
    for kind, by_preset in table.items():
        for name, values in by_preset.items():
            shown = ", ".join(f"{k}={v}" for k, v in values.items())
            console.print(f"{kind} {name}: {shown}")


def register(app: typer.Typer) -> None:
    app.add_typer(train_app, name="train")
