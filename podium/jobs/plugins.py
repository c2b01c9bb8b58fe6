"""Extra job kinds from outside Podium's own packages.

`job_plugins` (env `PODIUM_JOB_PLUGINS`, comma-separated module names) lists modules
that call `podium.jobs.kinds.register(...)` on import. The worker, the executing
process and the CLI all import them, so a kind defined in a plugin runs anywhere a
built-in kind does.
"""

from __future__ import annotations

import importlib
from typing import Any

from podium.config import get_settings
from podium.errors import InvalidInput

_loaded: set[str] = set()


def load_plugins() -> None:
    for module in filter(None, (m.strip() for m in get_settings().job_plugins.split(","))):
        if module in _loaded:
            continue
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            raise InvalidInput(
                f"Job plugin module {module!r} (from PODIUM_JOB_PLUGINS) cannot be imported; "
                "check the name and that it is on PYTHONPATH."
            ) from None
        _loaded.add(module)


def load_attr(path: str) -> Any:
    """The object a "module:attr" path names, importing its module on first use (so that
    a kind's runner or a launcher costs nothing until it is asked for)."""
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)
