"""Where Podium may write and read files named by a user: the configured roots.

Exports, validation reports, run-card outputs and uploads are files a person names in a
command, a form or a card, and the app and worker write or read them with the server's
permissions. Every such path goes through `resolve_under_roots`, which returns the real
path (symlinks followed) when it lies under a root, and otherwise refuses it:

- writes (exports, reports) always stay under the roots: the warehouse (when it is a
  local directory), `$PODIUM_HOME/exports` and any directory in `settings.file_roots`
  (`PODIUM_FILE_ROOTS=/data/out,/mnt/share`). A relative path means one under
  `$PODIUM_HOME/exports`;
- reads (an import's source file, a rule's schema file, an upload) also may come from
  `$PODIUM_HOME/uploads` and `$PODIUM_HOME/schemas` (where the app stores uploads).
  In local single-user mode the OS user reads their own files anywhere, as they could
  without Podium; a shared deployment confines reads to the roots too, so a card cannot
  read the server's files into a table.

A `..` component is refused outright rather than resolved, so the error names the
problem instead of a surprising place.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from podium.config import Settings, get_settings
from podium.errors import InvalidInput

Purpose = Literal["export", "report", "card output", "import", "upload", "rule file"]
WRITES: frozenset[Purpose] = frozenset({"export", "report", "card output"})


def exports_root(settings: Settings | None = None) -> Path:
    return (settings or get_settings()).home / "exports"


def file_roots(purpose: Purpose, settings: Settings | None = None) -> list[Path]:
    """The directories a path for `purpose` may lie under, real paths, first the default."""
    settings = settings or get_settings()
    roots = [exports_root(settings)]
    if settings.warehouse.startswith("file://"):
        roots.append(Path(settings.warehouse.removeprefix("file://")))
    if purpose not in WRITES:
        roots += [settings.home / "uploads", settings.home / "schemas"]
    roots += [Path(root).expanduser() for root in settings.file_roots]
    return [Path(os.path.realpath(root)) for root in roots]


def resolve_under_roots(
    path: str | os.PathLike[str], purpose: Purpose, settings: Settings | None = None
) -> Path:
    """The real path of `path` if it lies under a root for `purpose`; else InvalidInput.

    The check follows every symlink that exists (the file itself and each parent), so a
    link inside a root that points out is refused like the outside path itself.
    """
    settings = settings or get_settings()
    given = Path(path).expanduser()
    if ".." in given.parts:
        raise InvalidInput(
            f"{purpose.capitalize()} path {str(path)!r} contains '..'; name the file "
            f"directly, e.g. a path under {exports_root(settings)}."
        )
    writing = purpose in WRITES
    if not given.is_absolute():
        given = (exports_root(settings) if writing else Path.cwd()) / given
    real = Path(os.path.realpath(given))
    if not writing and not settings.shared:
        return real
    roots = file_roots(purpose, settings)
    if any(real == root or real.is_relative_to(root) for root in roots):
        return real
    shown = str(given) if real == given else f"{given} (which leads to {real})"
    raise InvalidInput(
        f"{purpose.capitalize()} path {shown} is outside the directories Podium may "
        f"{'write' if writing else 'read'}: {', '.join(str(root) for root in roots)}. Give a "
        f"path under one of them (a relative path means one under {roots[0]}), or add a "
        f"directory to the file_roots setting (PODIUM_FILE_ROOTS)."
    )
