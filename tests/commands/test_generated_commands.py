"""`podium import`, `export` and `compare` are generated from their job kinds' models like
`generate` and `validate`: every card field is an option, plus `--set` and `--card`,
and their old positional arguments and option names still work."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import cli_fork
import pytest
import yaml

PODIUM = [sys.executable, "-m", "podium.cli"]


def podium(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    proc = cli_fork.run(
        [*PODIUM, *args], capture_output=True, text=True, timeout=120, cwd=cwd, env=_env()
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def _env() -> dict[str, str]:
    """This checkout importable from any directory (a command run from the data's)."""
    repo = str(Path(__file__).resolve().parents[2])
    return {**os.environ, "PYTHONPATH": os.pathsep.join([repo, os.environ.get("PYTHONPATH", "")])}


def front(card: Path) -> dict:
    return yaml.safe_load(card.read_text().split("---")[1])


@pytest.mark.parametrize("command", ["compare", "import", "export"])
def test_help_offers_set_and_card(command: str) -> None:
    shown = podium(command, "--help").stdout
    assert "--set PATH=VALUE" in shown and "--card FILE" in shown


def test_import_takes_any_card_setting(podium_home: Path, tmp_path: Path) -> None:
    data = tmp_path / "chat.jsonl"
    data.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n')
    card = tmp_path / "import.md"
    podium(
        "import", "chat.jsonl", "-t", "ns.chat", "--source", "web", "--set", "mode=append",
        "--allow-duplicate-ids", "--card", str(card), cwd=tmp_path,
    )  # fmt: skip
    # Run from another directory: the card names the file by its absolute path.
    assert front(card) == {
        **front(card),
        "kind": "import",
        "path": str(data),
        "out": "ns.chat",  # given as -t, the option the output had before
        "source": "web",
        "mode": "append",
        "allow_duplicate_ids": True,
    }


def test_export_keeps_its_positionals_and_takes_set(podium_home: Path, tmp_path: Path) -> None:
    data = tmp_path / "chat.jsonl"
    data.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n')
    podium("import", str(data), "--table", "ns.chat")
    card = tmp_path / "export.md"
    podium("export", "ns.chat", "out.jsonl", "--set", "format=parquet", "--card", str(card))
    written = front(card)
    assert written["table"]["name"] == "ns.chat" and written["format"] == "parquet"
    assert written["path"].endswith("exports/out.jsonl")


def test_old_cards_and_set_paths_still_run_and_name_the_new_setting(
    podium_home: Path, tmp_path: Path
) -> None:
    """Every kind's input table is `table` now; an import card's output `table` is `out`."""
    data = tmp_path / "chat.jsonl"
    data.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n')
    old_import = tmp_path / "import.md"
    old_import.write_text(f"---\nkind: import\npath: {data}\ntable: ns.chat\n---\n")
    said = podium("run", str(old_import)).stderr
    assert "'import' setting 'table' is now called 'out'" in said
    old_export = tmp_path / "export.md"
    old_export.write_text("---\nkind: export\ninput:\n  name: ns.chat\npath: old.jsonl\n---\n")
    said = podium("run", str(old_export)).stderr
    assert "'export' setting 'input' is now called 'table'" in said
    assert (podium_home / "exports" / "old.jsonl").read_text().count("\n") == 1
    said = podium("export", "ns.chat", "set.jsonl", "--set", "input.snapshot_id=null").stderr
    assert "'export' setting 'input' is now called 'table'" in said
