"""Every command of the CLI, walked as a viewer (issue 38: role checks before any effect).

The command tree is read from `podium` itself, so a new command fails this test until it
is listed in `command_walk.py`: either as reading only, or with arguments that would
change something, which a viewer must be refused (exit code 3, PermissionDenied) with
nothing changed: no table, snapshot, job, model, user or file appears or moves in the
shared home. test_role_table.py walks the same commands as every role.

The refused commands run in one driver process (`command_walk.walk`), so walking ~50
commands costs one interpreter start, not fifty.
"""

from __future__ import annotations

import json
from pathlib import Path

from command_walk import (
    ADMIN,
    AS_ROLE,
    READ_ONLY,
    WRITES,
    home_state,
    product_commands,
    seed_runs,
    walk,
)

from podium.config import reset_settings

VIEWER = AS_ROLE["viewer"]


def test_every_command_is_classified() -> None:
    commands = product_commands()
    unlisted = commands - READ_ONLY - set(WRITES)
    assert not unlisted, f"say whether these read or write (and test them): {sorted(unlisted)}"
    assert not (READ_ONLY | set(WRITES)) - commands, "listed commands that no longer exist"


def test_a_viewer_is_refused_by_every_command_that_writes(role_home: Path, tmp_path: Path) -> None:
    runs = seed_runs(role_home, tmp_path, ADMIN)
    before = home_state(role_home)
    results = walk(VIEWER, runs, tmp_path, stop=False)  # each runs to its end
    not_refused = {n: r for n, r in results.items() if not r.startswith("PermissionDenied")}
    assert not not_refused, json.dumps(not_refused, indent=1)
    reset_settings()
    assert home_state(role_home) == before
