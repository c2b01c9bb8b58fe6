"""Functions below a command or a page take the loaded table, not its name: one action
loads each table it touches once (DESIGN.md, Data model). Counted at the catalog: every
`load_table` (pyiceberg's `table_exists` is one too) per table, through the real CLI and
the real Browse page. The load a catalog's own `commit_table` makes (its compare-and-swap)
is not the action's and is not counted."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pyiceberg.catalog import Catalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import NoSuchTableError
from review_data import make_table, row_id
from streamlit.testing.v1 import AppTest

from podium.cli import app
from podium.store.catalog import catalog, kept_load
from podium.store.catalog.sqlite_catalog import LeanSqliteCatalog
from podium.store.read.refs import TableRef
from podium.validate.job import ValidateConfig, validate_table

MAIN = Path(__file__).resolve().parents[2] / "podium" / "app" / "main.py"
CATALOGS = (SqlCatalog, LeanSqliteCatalog)


class Loads:
    """Catalog loads per table name, outside any catalog's `commit_table`."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self._committing = 0

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        for cls in CATALOGS:
            monkeypatch.setattr(cls, "load_table", self._counted(cls.load_table))
            monkeypatch.setattr(cls, "commit_table", self._committed(cls.commit_table))
        monkeypatch.setattr(catalog, "load_kept", self._counted_kept(kept_load.load_kept))

    def _counted_kept(self, load: Callable[..., Any]) -> Callable[..., Any]:
        """A load of an SQLite catalog's table around its kept metadata (`kept_load`)
        is a load too: the catalog's row read, though not pyiceberg's `load_table`."""

        def load_kept(cat: Catalog, ident: tuple[str, str]) -> Any:
            counted = not self._committing
            try:
                table = load(cat, ident)
            except NoSuchTableError:  # the row read, and not there: a load too
                self.counts[".".join(ident)] += counted
                raise
            self.counts[".".join(ident)] += counted and table is not None
            return table

        return load_kept

    def _counted(self, load: Callable[..., Any]) -> Callable[..., Any]:
        def load_table(cat: Catalog, identifier: Any) -> Any:
            if not self._committing:
                self.counts[".".join(Catalog.identifier_to_tuple(identifier))] += 1
            return load(cat, identifier)

        return load_table

    def _committed(self, commit: Callable[..., Any]) -> Callable[..., Any]:
        def commit_table(cat: Catalog, *args: Any, **kwargs: Any) -> Any:
            self._committing += 1
            try:
                return commit(cat, *args, **kwargs)
            finally:
                self._committing -= 1

        return commit_table

    def during(self, action: Callable[[], object]) -> dict[str, int]:
        self.counts.clear()
        action()
        return dict(self.counts)


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> Loads:
    counter = Loads()
    counter.install(monkeypatch)
    return counter


def podium(*args: str) -> Callable[[], None]:
    def run() -> None:
        result = CliRunner().invoke(app, list(args), catch_exceptions=False)
        assert result.exit_code == 0, result.output

    return run


@pytest.fixture(params=["sql", "lean"])
def cli_home(
    request: pytest.FixtureRequest, podium_home: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A home holding t.x, its catalog opened as the app opens it (`SqlCatalog`) or as a
    one-shot command from a shell does (`LeanSqliteCatalog`)."""
    make_table("t.x", 300)
    if request.param == "lean":
        monkeypatch.setattr(catalog, "_lean", True)
    return podium_home


def test_label_loads_the_table_and_its_annotations_once_each(cli_home: Path, loads: Loads) -> None:
    first = loads.during(podium("label", "t.x", row_id(3), "--label", "bad"))  # creates them
    assert first == {"t.x": 1, "t.x__annotations": 1}
    second = loads.during(podium("label", "t.x", row_id(4), "--label", "good", "--note", "ok"))
    assert second == {"t.x": 1, "t.x__annotations": 1}


def test_edit_loads_the_table_once(cli_home: Path, loads: Loads) -> None:
    edit = podium("edit", "t.x", row_id(5), "--turn", "1", "--content", "fixed", "-m", "typo")
    assert loads.during(edit) == {"t.x": 1}
    again = podium("edit", "t.x", row_id(5), "--turn", "0", "--role", "system", "-m", "role")
    assert loads.during(again) == {"t.x": 1}  # the row now lives in the edit's own file


def test_delete_rows_loads_the_table_once(cli_home: Path, loads: Loads) -> None:
    assert loads.during(podium("delete-rows", "t.x", row_id(6), row_id(7), "-m", "junk")) == {
        "t.x": 1
    }


def test_a_browse_page_loads_each_table_at_most_once(podium_home: Path, loads: Loads) -> None:
    """The rows, an open sample (its annotations, history and validation failures), the
    sidebar, the bulk actions and the review filters: the table, its annotations and its
    report, once each."""
    make_table("t.x", 120)
    podium("label", "t.x", row_id(1), "--label", "bad")()  # an annotations table to read
    validate_table(ValidateConfig(table=TableRef(name="t.x"), rules=["json"]))  # a report
    at = AppTest.from_file(str(MAIN), default_timeout=90)
    at.run()
    at.switch_page("views/browse/view.py")
    at.query_params.update({"table": "t.x", "sample": row_id(1)})
    for _ in range(2):  # the first draw of the page, then a rerun of it
        drawn = loads.during(at.run)
        assert not at.exception, at.exception
        assert max(drawn.values(), default=0) <= 1, drawn  # none: read from the plan cache
    assert any("Annotations: bad" in c.value for c in at.caption)  # the sample is open
    for which in ("bad", "unlabelled"):  # review filters read the annotations table too
        at.selectbox(key="browse.review").set_value(which)
        drawn = loads.during(at.run)
        assert not at.exception, at.exception
        assert max(drawn.values(), default=0) <= 1, (which, drawn)
