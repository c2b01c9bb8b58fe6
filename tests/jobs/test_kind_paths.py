"""A job kind's import strings: a path that names no pydantic model says so by name."""

from __future__ import annotations

import pytest

from podium.errors import InvalidInput
from podium.jobs.kinds import JobKind, get_kind
from podium.store.read.export import ExportConfig


def test_config_model_loads_the_named_model() -> None:
    assert get_kind("export").config_model() is ExportConfig


def test_config_path_to_a_function_is_refused_by_name() -> None:
    kind = JobKind(
        "typo", "podium.store.read.export:run_export", "podium.store.read.export:run_export", ""
    )
    with pytest.raises(InvalidInput, match="'typo'.*run_export is not a pydantic model"):
        kind.config_model()
