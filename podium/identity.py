"""Who is acting, and what their role lets them do: the one check every write path calls.

Every write in Podium has an author. In local single-user mode (the default, on
127.0.0.1) the author is the operating-system user and holds every role, because the
person at the keyboard owns the machine. A shared deployment resolves the user from its
login (OpenID Connect in the app, a configured identity for CLI and worker) and looks
their role up in the state database; that resolution plugs in above this module, while
`require` stays the single place where a role is compared with an action.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from typing import Literal

from podium.errors import PermissionDenied

Role = Literal["viewer", "reviewer", "operator", "admin"]
ROLES: tuple[Role, ...] = ("viewer", "reviewer", "operator", "admin")

Action = Literal[
    "read",  # browse, search, SQL, export to the user's own exports root
    "annotate",  # labels, ratings, notes
    "edit",  # change or remove rows (a new snapshot)
    "vibe",  # submit vibe-check prompts
    "ask_model",  # ask a model one prompt (starting its server is serve_model)
    "vote",  # blind comparison votes
    "run_job",  # generation, validation, builds, training, compare
    "serve_model",  # start or stop model servers
    "manage_users",  # grant and revoke roles
    "drop_table",  # delete tables
]

# The least role allowed each action; roles are ordered, each includes the ones below.
REQUIRED_ROLE: dict[Action, Role] = {
    "read": "viewer",
    "annotate": "reviewer",
    "edit": "reviewer",
    "vibe": "reviewer",
    "ask_model": "reviewer",
    "vote": "reviewer",
    "run_job": "operator",
    "serve_model": "operator",
    "manage_users": "admin",
    "drop_table": "admin",
}

IdentitySource = Literal["os", "oidc", "config"]


@dataclass(frozen=True)
class User:
    """An authenticated person (or the OS user in local mode) and their role."""

    name: str  # stable id written as author: e-mail for OIDC, login name for the OS user
    role: Role
    source: IdentitySource
    display_name: str = ""

    @property
    def label(self) -> str:
        shown = self.display_name or self.name
        return f"{shown} (local user)" if self.source == "os" else shown

    def can(self, action: Action) -> bool:
        return ROLES.index(self.role) >= ROLES.index(REQUIRED_ROLE[action])


def local_user() -> User:
    """The OS user, who holds every role in local single-user mode."""
    return User(name=getpass.getuser(), role="admin", source="os")


def require(user: User, action: Action) -> None:
    """Refuse `action` unless `user`'s role allows it; every write path calls this."""
    if not user.can(action):
        needed = REQUIRED_ROLE[action]
        raise PermissionDenied(
            f"{user.name} has role {user.role!r}, and {action.replace('_', ' ')} needs "
            f"{needed!r} or above. Ask an admin: `podium users grant {user.name} {needed}`."
        )
