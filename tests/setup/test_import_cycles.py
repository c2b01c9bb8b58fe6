"""The import-circle check of `make check` finds circles, lazy and type-only imports
included, and passes on Podium's own packages."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import grimp
import pytest

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location(
    "check_import_cycles", REPO / "scripts" / "check_import_cycles.py"
)
assert spec is not None and spec.loader is not None
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)


def test_finds_a_circle_made_by_a_lazy_and_a_type_only_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = tmp_path / "circly"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from circly import b\n")
    (pkg / "b.py").write_text("def f():\n    from circly import c\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from circly import a\n"
    )
    (pkg / "leaf.py").write_text("from circly import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert check.circles(grimp.build_graph("circly")) == [["circly.a", "circly.b", "circly.c"]]


def test_podium_has_no_import_circles() -> None:
    assert check.circles(grimp.build_graph(*check.PACKAGES)) == []
    assert "circly" not in sys.modules
