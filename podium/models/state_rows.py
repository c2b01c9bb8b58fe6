"""A state-database row as one of the registry's dataclasses (a model, a server)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, TypeVar

T = TypeVar("T")


def from_row(cls: type[T], row: Any, **stored_otherwise: Any) -> T:
    """`cls` filled from `row`: each field from the column of its name, except those
    given here (columns stored in another form: JSON text, a datetime, a live check)."""
    names = [f.name for f in fields(cls) if f.name not in stored_otherwise]  # type: ignore[arg-type]
    return cls(**{name: getattr(row, name) for name in names}, **stored_otherwise)
