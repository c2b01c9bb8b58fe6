"""`podium generate --schema FILE`: the file must hold a JSON Schema object."""

from __future__ import annotations

from pathlib import Path

import pytest

from podium.commands.generate import load_schema
from podium.errors import InvalidInput


def test_an_object_schema_is_loaded(tmp_path: Path) -> None:
    path = tmp_path / "schema.json"
    path.write_text('{"type": "object", "required": ["answer"]}')
    assert load_schema(path) == {"type": "object", "required": ["answer"]}


def test_a_boolean_schema_is_refused_with_what_to_give(tmp_path: Path) -> None:
    # `true` is a valid JSON Schema but names no structure to generate: it used to pass
    # through as the bool True where the generation config needs an object.
    path = tmp_path / "schema.json"
    path.write_text("true")
    with pytest.raises(InvalidInput, match=r"must hold a JSON Schema object"):
        load_schema(path)
