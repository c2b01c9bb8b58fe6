"""docs/security.md's role table is true of every CLI command and every app control
(issue 44, done-when): the table names the actions (`podium.identity.Action`) each role
adds; the code's `REQUIRED_ROLE` must say the same, and every command of `podium`
(command_walk.py) is run as a viewer, a reviewer, an operator and an admin, stopped at
the role check that decides it: allowed exactly where the table allows it, refused
(PermissionDenied) elsewhere, and nothing in the shared home changed by any of them.

A command is stopped at its check (the check itself is the real one; what follows it is
not run) so that walking ~50 commands four times costs four interpreters, and allowed
roles start no training, server or daemon. test_viewer_walk.py runs the refused ones to
the end as a viewer.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import get_args

from command_walk import AS_ROLE, home_state, seed_runs, walk

from podium.config import reset_settings
from podium.identity import REQUIRED_ROLE, ROLES, Action, Role, User

DOC = Path(__file__).resolve().parents[2] / "docs" / "security.md"


def role_table() -> dict[str, Role]:
    """action -> the role whose row of docs/security.md's role table names it."""
    text = DOC.read_text()
    section = text[text.index("## Roles, logins and secrets") :]
    rows = re.findall(r"^\| `(\w+)` \| ([^|]*) \|", section, re.MULTILINE)
    table: dict[str, Role] = {}
    for role, actions in rows:
        assert role in ROLES, f"{role!r} in the role table is no role"
        for action in re.findall(r"`(\w+)`", actions):
            assert action not in table, f"{action} has two rows"
            table[action] = role
    return table


def allows(role: Role, action: str, table: dict[str, Role]) -> bool:
    return ROLES.index(role) >= ROLES.index(table[action])


def test_the_role_table_is_what_the_code_checks() -> None:
    table = role_table()
    assert set(table) == set(get_args(Action)), "every action has one row, and no other"
    assert table == REQUIRED_ROLE


def test_every_command_as_every_role_is_what_the_table_says(
    role_home: Path, tmp_path: Path
) -> None:
    table = role_table()
    operator = User(name=AS_ROLE["operator"], role="operator", source="config")
    runs = seed_runs(role_home, tmp_path, operator)  # the operator's own job: they may steer it
    before = home_state(role_home)
    wrong: dict[str, str] = {}
    for role in ROLES:
        for name, outcome in walk(AS_ROLE[role], runs, tmp_path, stop=True).items():
            action = runs[name][1]
            expected = (
                f"RoleChecked: {action}" if allows(role, action, table) else "PermissionDenied"
            )
            if not outcome.startswith(expected):
                wrong[f"{name} as {role} (table: {action} needs {table[action]})"] = outcome
    assert not wrong, json.dumps(wrong, indent=1)
    reset_settings()
    assert home_state(role_home) == before
