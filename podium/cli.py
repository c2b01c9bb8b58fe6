"""The `podium` command: a workbench for LLM post-training data.

\b
    podium demo                          # load the demo tables into $PODIUM_HOME
    podium tables                        # list tables (--json everywhere a list is printed)
    podium import data.jsonl --table ns.name [--format openai|sharegpt|prompt-response]
    podium show ns.name --search "error" --limit 5 [--snapshot ID] [--json]
    podium snapshots ns.name             # time travel: any id works with --snapshot
    podium export ns.name out.jsonl      # .jsonl or .parquet; re-import gives identical rows
    podium sql "SELECT count(*) FROM ns.name"
    podium app                           # the web UI on http://127.0.0.1:8501
    podium up                            # the web UI and the job worker together
    podium run CARD.md | submit CARD.md  # run a job card now, or queue it (podium worker)
    podium jobs [show|logs|cancel] ID    # the logbook from a shell
    podium validate ns.name --rule json-schema:schema.json
    podium models bootstrap | serve NAME # the base model; an OpenAI-compatible server
    podium generate --model base --table ns.name --out ns.samples
    podium sandbox run snippet.py        # untrusted code in the sandbox
    podium train sft --model base --table ns.name --out my-ckpt --preset cpu-smoke
    podium compare --models base,my-ckpt --table ns.prompts --out cmp
"""

# Each group of commands lives in `podium/commands/<area>.py` and registers itself here.

from __future__ import annotations

import importlib
import sys

import typer
from rich.console import Console

from podium.errors import PodiumError

app = typer.Typer(
    name="podium",
    help=__doc__,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    add_completion=False,
)

# Each module defines `register(app: typer.Typer) -> None`.
COMMAND_MODULES = (
    "podium.commands.store",
    "podium.commands.serve_app",
    "podium.commands.jobs",
    "podium.commands.validate",
    "podium.commands.models",
    "podium.commands.generate",
    "podium.commands.sandbox",
    "podium.commands.train",
    "podium.commands.compare",
)

for _module in COMMAND_MODULES:
    try:
        _mod = importlib.import_module(_module)
    except ModuleNotFoundError as exc:
        if exc.name != _module:  # a real import error inside the module must surface
            raise
        continue
    _mod.register(app)


def main() -> None:
    err = Console(stderr=True)
    try:
        # Without standalone mode, typer returns a command's exit code instead of exiting.
        code = app(standalone_mode=False)
    except PodiumError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except typer.Abort:
        err.print("aborted")
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:  # click's own usage errors
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        raise
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
