"""The documentation site: the command-line reference is generated from the commands
themselves (docs/hooks/cli_reference.py), so every command `podium --help` lists has its
page; the README stays a short front page whose links land on real pages."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from podium.cli import app

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location(
    "cli_reference", REPO / "docs" / "hooks" / "cli_reference.py"
)
assert spec is not None and spec.loader is not None
cli_reference = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cli_reference)


def listed_commands() -> list[str]:
    """The command names in the Commands section of `podium --help`."""
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0, result.output
    section = result.output.split("Commands:", 1)[1]
    return [m.group(1) for m in re.finditer(r"^  (\S+)\s", section, re.MULTILINE)]


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return cli_reference.render_pages()


def test_every_command_podium_help_lists_has_a_generated_page(pages: dict[str, str]) -> None:
    names = listed_commands()
    assert len(names) >= 30 and "show" in names and "delete-rows" in names
    for name in names:
        page = pages[f"reference/cli/{name}.md"]
        assert f"Usage: podium {name}" in page, name
        assert f"[`podium {name}`]({name}.md)" in pages["reference/cli/index.md"]
    assert set(pages) == {"reference/cli/index.md"} | {f"reference/cli/{n}.md" for n in names}


def test_subcommands_and_options_come_from_the_commands(pages: dict[str, str]) -> None:
    jobs = pages["reference/cli/jobs.md"]
    for sub in ("show", "logs", "cancel", "rerun"):
        assert f"## podium jobs {sub}\n" in jobs and f"Usage: podium jobs {sub} " in jobs
    # a typer command, a generated job command (options from its kind's model), a click one
    assert "--follow" in jobs
    assert "--preset" in pages["reference/cli/train.md"]
    assert "Usage: podium train sft" in pages["reference/cli/train.md"]
    assert "--search" in pages["reference/cli/show.md"]


def test_the_nav_entry_is_filled_with_every_page() -> None:
    nav: list[object] = [{"Home": "index.md"}, {cli_reference.NAV_TITLE: "placeholder.md"}]
    cli_reference.on_config({"nav": nav})
    entries = nav[1][cli_reference.NAV_TITLE]  # type: ignore[index]
    assert entries[0] == {"Overview": "reference/cli/index.md"}
    assert {"podium users": "reference/cli/users.md"} in entries
    with pytest.raises(ValueError, match=cli_reference.NAV_TITLE):
        cli_reference.on_config({"nav": [{"Home": "index.md"}]})


def test_the_readme_is_a_short_front_page_whose_links_resolve() -> None:
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    assert "make run    #" in readme and "make test   #" in readme
    targets = re.findall(r"\]\(((?:docs/)[^)#\s]+)", readme)
    assert len(targets) >= 15
    for target in targets:
        assert (REPO / target).is_file(), target
