"""Generation and vibe-check commands.

    podium generate --model base --table demo.chat --out gen.chat_smol \
        [--n 2] [--max-tokens 64] [--temperature 0.7] [--schema schema.json] [--card CARD.md]
    podium generate ... --set batch_size=16     # any card setting (`podium generate --help`)
    podium vibes submit "PROMPT" --ideal "what good looks like" --tag json --model base
    podium vibes list [--tag json] [--search TEXT] [--json]
    podium vibes evalset --tag json --out evals.json_fails   # a prompts table for `generate`
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import click
import typer

from podium.commands.terminal import neutralise_json, safe_console
from podium.errors import InvalidInput

console = safe_console(highlight=False, soft_wrap=True)
vibes_app = typer.Typer(help="Vibe-check prompts and eval sets.", no_args_is_help=True)


def _print_json(value: Any) -> None:
    typer.echo(neutralise_json(json.dumps(value, ensure_ascii=False, default=str, indent=2)))


def load_schema(path: Path) -> dict[str, Any]:
    try:
        schema = json.loads(path.expanduser().read_text())
    except OSError as exc:
        raise InvalidInput(f"Cannot read JSON Schema {path}: {exc.strerror}.") from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path} is not valid JSON (line {exc.lineno}): {exc.msg}.") from None
    if not isinstance(schema, dict):
        raise InvalidInput(f"{path} must hold a JSON Schema object ({{...}}), not {schema!r:.60}.")
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise InvalidInput(f"{path} is not a valid JSON Schema: {exc.message}.") from None
    return schema


def _read_schema(values: dict[str, Any], extra: dict[str, Any]) -> None:
    if extra["schema"] is not None:
        values["json_schema"] = load_schema(extra["schema"])


def _say_where(config: Any, result: Any, deferred: bool, extra: dict[str, Any]) -> None:
    if not deferred:
        console.print(f"samples in {config.out}; browse them with `podium show {config.out}`")


def generate_command() -> click.Command:
    """`podium generate`: every GenerateConfig field is an option (see `--help`)."""
    from podium.commands.options import job_command

    return job_command(
        "generate",
        defaults={"model": "base"},
        extra=[
            click.Option(
                ["--schema", "schema"],
                type=click.Path(path_type=Path, dir_okay=False),
                help="JSON Schema file for the output (sets json_schema).",
            )
        ],
        hook=_read_schema,
        done=_say_where,
        help="Sample a checkpoint on every prompt of a table into a new samples table.",
    )


@vibes_app.command("submit")
def submit(
    prompt: Annotated[str, typer.Argument(help="The prompt the model does badly on.")],
    ideal: Annotated[str, typer.Option(help="What a good answer looks like.")] = "",
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Tag (repeatable).")] = None,
    model: Annotated[str, typer.Option(help="Checkpoint to ask ('' = do not ask).")] = "base",
    max_tokens: Annotated[int, typer.Option(help="Most tokens in the answer.")] = 256,
) -> None:
    """Ask the checkpoint (answer streamed), then store prompt, expectation and answer.

    The submitter is who this shell acts as (`podium users whoami`)."""
    from generators.vibes import answer_stream, may_submit, submit_vibe

    may_submit()  # before the model is asked (or its server started)
    answer = ""
    if model:
        from podium.models import get_model

        model = get_model(model).name
        for piece in answer_stream(model, prompt, max_tokens=max_tokens):
            answer += piece
            console.out(piece, end="")
        console.out("")
    vid = submit_vibe(prompt, ideal, tag or [], model, answer)
    console.print(f"stored {vid} in vibes.prompts")


@vibes_app.command("list")
def list_cmd(
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Only these tags.")] = None,
    search: Annotated[str | None, typer.Option(help="Substring in any text.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Vibe-check submissions, newest first."""
    from generators.vibes import list_vibes
    from podium.commands.terminal import plain_text

    rows = list_vibes(tags=tag, search=search)
    if as_json:
        _print_json(rows)
        return
    if not rows:
        console.print("No submissions yet; add one with `podium vibes submit PROMPT`.")
    for r in rows:
        title = f"{r['id']} · {r['checkpoint']} · {', '.join(r['tags'] or [])}"
        console.rule(plain_text(title), align="left")  # what people typed: data, not markup
        console.print(
            plain_text(f"prompt: {r['prompt']}\nideal:  {r['ideal']}\nanswer: {r['answer']}")
        )


@vibes_app.command("evalset")
def evalset(
    out: Annotated[str, typer.Option("--out", help="Eval-set table to create.")],
    tag: Annotated[
        list[str] | None, typer.Option("--tag", help="Submissions with any tag.")
    ] = None,
    ids: Annotated[
        list[str] | None, typer.Option("--id", help="Submission id (repeatable).")
    ] = None,
) -> None:
    """Turn selected submissions into a prompts table the generate job can run."""
    from generators.vibes import build_eval_set, eval_set_written

    count = build_eval_set(out, tags=tag, ids=ids)
    console.print(f"{eval_set_written(count, out)} Run `podium generate --table {out} ...`")


def register(app: typer.Typer) -> None:
    app.add_typer(vibes_app, name="vibes")


def click_commands() -> dict[str, click.Command]:
    return {"generate": generate_command()}
