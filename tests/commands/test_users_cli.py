"""`podium users` as an admin runs it, and as a non-admin is refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cli_fork
import pytest

PODIUM = [sys.executable, "-m", "podium.cli", "users"]


def users(*args: str) -> subprocess.CompletedProcess[str]:
    return cli_fork.run([*PODIUM, *args], capture_output=True, text=True, timeout=120)


def test_grant_list_revoke_as_bootstrap_admin(
    podium_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PODIUM_USER", "boss@example.org")
    monkeypatch.setenv("PODIUM_ADMINS", "boss@example.org")
    granted = users("grant", "Ann@example.org", "reviewer", "--name", "Ann", "--json")
    assert granted.returncode == 0, granted.stderr
    assert json.loads(granted.stdout)["role"] == "reviewer"
    listed = json.loads(users("list", "--json").stdout)
    assert [(u["name"], u["role"], u["added_by"]) for u in listed] == [
        ("ann@example.org", "reviewer", "boss@example.org")
    ]
    assert users("revoke", "ann@example.org").returncode == 0
    assert json.loads(users("list", "--json").stdout) == []


def test_a_reviewer_cannot_manage_users(podium_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PODIUM_ADMINS", "boss@example.org")
    monkeypatch.setenv("PODIUM_USER", "boss@example.org")
    assert users("grant", "ann@example.org", "reviewer").returncode == 0
    monkeypatch.setenv("PODIUM_USER", "ann@example.org")
    refused = users("grant", "ann@example.org", "admin")
    assert refused.returncode == 3
    assert "ann@example.org has role 'reviewer'" in refused.stderr
    assert "Traceback" not in refused.stderr
    whoami = json.loads(users("whoami", "--json").stdout)
    assert whoami == {"name": "ann@example.org", "role": "reviewer", "source": "config"}


def test_bad_role_is_a_clear_error(podium_home: Path) -> None:
    bad = users("grant", "ann@example.org", "superuser")
    assert bad.returncode == 2 and "Unknown role 'superuser'" in bad.stderr
