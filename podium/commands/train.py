"""Training commands: SFT and GRPO runs whose checkpoints come back registered.

    podium train sft  --model base --table demo.json_sft --out json-sft --preset cpu-smoke
    podium train sft  --model base --table demo.json_sft --out json-lora --preset cpu-small \
        --method lora --steps 40 --set lora_r=8
    podium train grpo --model json-sft --table demo.json_sft --out json-grpo \
        --reward validate:json --reward length:300*0.2 --preset cpu-smoke
    podium train sft ... --card run.md     # write the run card, run nothing
    podium train presets [--json]          # what each preset sets

Every card field is an option (`podium train sft --help`). Presets fill every setting
the command line leaves out: `cpu-smoke` runs in seconds
to a minute, `cpu-small` 5-20 minutes on 2 cores (`podium train presets` says why),
`gpu` is a real run. Any card field
can be set with `--set FIELD=VALUE` (see `podium jobs kinds`). The final checkpoint is
registered as `--out`, periodic ones as `OUT-step-N`; `podium generate --model OUT`
samples from it at once.
"""

from __future__ import annotations

import json
from typing import Any

import click

from podium.commands.terminal import safe_console

console = safe_console(highlight=False, soft_wrap=True)


def _announce(config: Any, result: Any, deferred: bool, extra: dict[str, Any]) -> None:
    if deferred or not isinstance(result, dict):
        return
    summary = (result.get("outputs") or {}).get("summary") or {}
    console.print(
        f"checkpoint {summary.get('checkpoint', config.out)} registered at "
        f"{summary.get('path')}; sample it with "
        f"`podium generate --model {config.out} --table TABLE --out NS.NAME`"
    )


def _rewards(values: dict[str, Any], extra: dict[str, Any]) -> None:
    from trainers.config import RewardSpec

    if extra["reward"]:
        values["rewards"] = [RewardSpec.parse(r).model_dump() for r in extra["reward"]]


def presets_command() -> click.Command:
    @click.command("presets", help="What each preset sets, for SFT and GRPO.")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    def presets(as_json: bool) -> None:
        from trainers.presets import PRESET_NAMES, PRESET_SUMMARIES, preset_defaults

        table = {k: {p: preset_defaults(k, p) for p in PRESET_NAMES} for k in ("sft", "grpo")}
        if as_json:
            click.echo(json.dumps(table, indent=2))
            return
        for name in PRESET_NAMES:
            console.print(f"{name}: {PRESET_SUMMARIES[name]}")
        for kind, by_preset in table.items():
            for name, values in by_preset.items():
                shown = ", ".join(f"{k}={v}" for k, v in values.items())
                console.print(f"{kind} {name}: {shown}")

    return presets


def click_commands() -> dict[str, click.Command]:
    from podium.commands.options import job_command

    reward = click.Option(
        ["--reward", "reward"],
        multiple=True,
        metavar="RULE[*WEIGHT]",
        help="A reward (repeatable): validate:RULE, sandbox:output, sandbox:tests, "
        "exact_match, length:N; sets `rewards`.",
    )
    group = click.Group("train", help=__doc__, no_args_is_help=True)
    group.add_command(
        job_command("sft", defaults={"model": "base"}, done=_announce),
        "sft",
    )
    group.add_command(
        job_command(
            "grpo", defaults={"model": "base"}, extra=[reward], hook=_rewards, done=_announce
        ),
        "grpo",
    )
    group.add_command(presets_command(), "presets")
    return {"train": group}
