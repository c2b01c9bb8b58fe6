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

Podium's own files are never a user's file, whatever root holds them (docker compose's
`/data` holds the home `/data/podium`): inside the home only its exports folder is written
(and its uploads and schemas folders read; the warehouse is left to the export's own
check, which names it), and the settings file, an SQLite catalog, the model and vLLM
caches and the Ray token file are refused wherever they are. An export there overwrote
the cookie secret that signs logins, `podium.toml` or the catalog.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from podium.config import Settings, get_settings, settings_file, sqlite_file
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
    if any(_under(real, [root]) for root in roots):
        _refuse_own_files(real, purpose, settings)
        return real
    shown = str(given) if real == given else f"{given} (which leads to {real})"
    raise InvalidInput(
        f"{purpose.capitalize()} path {shown} is outside the directories Podium may "
        f"{'write' if writing else 'read'}: {', '.join(str(root) for root in roots)}. Give a "
        f"path under one of them (a relative path means one under {roots[0]}), or add a "
        f"directory to the file_roots setting (PODIUM_FILE_ROOTS)."
    )


def _under(path: Path, places: list[Path]) -> bool:
    return any(path == place or path.is_relative_to(place) for place in places)


def _people_folders(purpose: Purpose, settings: Settings) -> list[Path]:
    """The folders of the home that hold people's files for `purpose`, real paths."""
    folders = [exports_root(settings)]
    if purpose not in WRITES:
        folders += [settings.home / "uploads", settings.home / "schemas"]
    return [Path(os.path.realpath(folder)) for folder in folders]


def _own_files(settings: Settings) -> list[tuple[Path, str]]:
    """Podium's own files and folders that may lie outside its home, with what each is."""
    own: list[tuple[str | Path | None, str]] = [
        (settings_file(), "settings file"),
        (settings.model_cache, "model cache"),
        (settings.vllm_cache_dir, "vLLM cache"),
        (settings.ray_auth_token_path, "Ray token file"),
    ]
    catalog = sqlite_file(settings.catalog_uri)
    if catalog is not None:  # and its journals (catalog.db-wal, -shm, -journal)
        own += [(f"{catalog}{end}", "catalog") for end in ("", "-wal", "-shm", "-journal")]
    return [(Path(os.path.realpath(Path(p).expanduser())), what) for p, what in own if p]


def _refuse_own_files(real: Path, purpose: Purpose, settings: Settings) -> None:
    """InvalidInput when `real` is one of Podium's own files, though a root holds it."""
    writing = purpose in WRITES
    verb = "writes" if writing else "reads"
    home = Path(os.path.realpath(settings.home))
    people = _people_folders(purpose, settings)
    exempt = list(people)
    if settings.warehouse.startswith("file://"):  # tables' files: the export's own check
        exempt.append(Path(os.path.realpath(settings.warehouse.removeprefix("file://"))))
    if _under(real, [home]) and not _under(real, exempt):
        raise InvalidInput(
            f"{purpose.capitalize()} path {real} is inside Podium's home ({home}), which holds "
            f"its catalog, secrets and settings; Podium {verb} people's files there only "
            f"under {', '.join(map(str, people))}. Give a path there or outside the home."
        )
    for own, what in _own_files(settings):
        if _under(real, [own]):
            raise InvalidInput(
                f"{purpose.capitalize()} path {real} is Podium's own {what} ({own}), never a "
                "file it writes or reads for you; give another path."
            )
