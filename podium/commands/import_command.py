"""`podium import`, built when it runs (`LazyCommand` in `podium.commands.store`).

A cold import spends its first seconds importing libraries before its first row is
parsed: ~0.4 s of it was pandas, which pyarrow's dataset module probes for as it loads
(pyiceberg imports that module) and which an import never uses, and ~0.15 s pyiceberg's
SQL catalog with SQLAlchemy's ORM, which an import into an existing table (`--mode
append` or `overwrite`) does not need on an SQLite catalog file. So when the command
owns its process (`podium import ...` from a shell, not a test's CliRunner), the kind's
options are built with pyarrow's dataset module imported without that probe
(`store.catalog.lean_imports`) and the catalog is opened as the lean SQLite one
(`store.catalog.sqlite_catalog`: the same load and compare-and-swap commit statements;
creating a table, which a new import does, is still `SqlCatalog`'s, opened then). And as
soon as its options are known, such an import begins parsing a JSONL input in a thread
(`store.write.parse_ahead`), while the job machinery, pyiceberg and the catalog are still
loading on the main thread: ~0.5 s of a cold command that the parse no longer waits for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from podium.store.catalog.lean_imports import ONE_SHOT


def _absolute_path(values: dict[str, Any], extra: dict[str, Any]) -> None:
    """The file to import, absolute so the run card works from any directory; in a
    process the command owns, its parsing begins here (module docstring)."""
    if values.get("path"):
        values["path"] = str(Path(values["path"]).expanduser().resolve())
    ctx = click.get_current_context()
    if _one_shot() and ctx.params.get("_card") is None:  # a card to write runs nothing
        from pydantic import ValidationError

        from podium.store.write.ingest import ImportConfig
        from podium.store.write.parse_ahead import parse_ahead, stop_parse_ahead

        try:
            parse_ahead(ImportConfig.model_validate(values))
        except ValidationError:
            return  # the job's own validation says what is wrong
        ctx.call_on_close(stop_parse_ahead)


def _one_shot() -> bool:
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root() if ctx is not None else None
    return root is not None and isinstance(root.obj, dict) and bool(root.obj.get(ONE_SHOT))


def _lean_when_one_shot() -> None:
    """Skip what an import does not use (module docstring), only in a process the
    command owns: the pandas probe stays off for the rest of the process."""
    if not _one_shot():
        return
    from podium.store.catalog.catalog import prefer_lean_catalog
    from podium.store.catalog.lean_imports import import_pyarrow_dataset_without_pandas

    import_pyarrow_dataset_without_pandas()
    prefer_lean_catalog()


def import_command() -> click.Command:
    """`podium import`: every field of the import kind's model is an option
    (`podium.commands.options.job_command`), `--set` and `--card` included."""
    _lean_when_one_shot()  # before the options: building them imports pyiceberg
    from podium.commands.options import job_command

    return job_command(
        "import",
        arguments=("path",),
        aliases={"out": ["--table", "-t"]},  # --table: its name before
        hook=_absolute_path,
        queue=False,
        help="Import chat data into an SFT table (one atomic commit; a bad line changes "
        "nothing). PATH: JSONL, Parquet, or a save_to_disk dataset dir.",
    )
