"""Importing pyarrow's dataset module without pandas, for one-shot commands that never
use pandas (`podium edit`, `delete-rows`, `label`).

pyiceberg's file IO imports `pyarrow.dataset`, which builds a few scalars as it loads,
and pyarrow's first scalar asks whether pandas is installed by importing it: ~0.2 s of
CPU, the largest single import of a cold one-row edit, for a library it never touches.
Refusing that one probe makes pyarrow record "no pandas" for now; anything that later
asks pyarrow for pandas explicitly (`to_pandas()`, `pa.Table.from_pandas`) imports it
then and works as usual. Only pyarrow's implicit check (is this argument a pandas
Series?) stays off for the process, which is why only commands that build no pandas
objects call this, and only before anything else imported pandas or the module.
"""

from __future__ import annotations

import importlib
import sys
from importlib.machinery import ModuleSpec
from types import ModuleType

# Set in the click context's `obj` by `podium.cli.main`: the command owns this process,
# which ends with it, so skipping an import for good affects nothing else (a test's
# CliRunner runs commands inside a process that goes on).
ONE_SHOT = "podium.one-shot-process"


class _RefusePandas:
    """A finder that answers only pandas, with ImportError (pyarrow's probe catches it)."""

    def find_spec(
        self, name: str, path: object = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name == "pandas":
            raise ImportError(
                "pandas is not imported by this command (podium.store.catalog.lean_imports)"
            )
        return None


def import_pyarrow_dataset_without_pandas() -> None:
    """Import `pyarrow.dataset` (and so pyarrow's pandas probe) with pandas refused.
    Does nothing when either is imported already: then there is nothing to save."""
    if "pyarrow.dataset" in sys.modules or "pandas" in sys.modules:
        return
    finder = _RefusePandas()
    sys.meta_path.insert(0, finder)
    try:
        importlib.import_module("pyarrow.dataset")
    finally:
        sys.meta_path.remove(finder)
