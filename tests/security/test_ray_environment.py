"""A Ray job's runtime environment (shown in Ray's dashboard and `ray job list`) carries
the settings a job needs and none of Podium's secrets; the job's node reads those itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from podium.config import get_settings, reset_settings
from podium.jobs.launchers.ray import job_environment

SECRETS = {
    "PODIUM_OIDC_CLIENT_SECRET": "oidc-client-secret-value",
    "PODIUM_COOKIE_SECRET": "cookie-secret-value",
    "PODIUM_CATALOG_URI": "postgresql+psycopg2://podium:db-password-value@db:5432/podium",
    "PODIUM_CATALOG_PROPERTIES": json.dumps(
        {"s3.endpoint": "http://s3:9000", "s3.secret-access-key": "s3-secret-value"}
    ),
    "PODIUM_S3_SECRET_OF_MY_OWN": "operator-secret-value",  # no setting of Podium's
}


def test_the_job_environment_holds_no_secret(
    podium_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in SECRETS.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("PODIUM_LAUNCHER", "ray")
    monkeypatch.setenv("PODIUM_WAREHOUSE", "s3://bucket/warehouse")
    reset_settings()
    env = job_environment(get_settings())
    shown = json.dumps(env)
    for secret in ("oidc-client-secret", "cookie-secret", "db-password", "s3-secret", "operator"):
        assert secret not in shown, (secret, env)
    # What the job needs and is not secret still travels.
    assert env["PODIUM_HOME"] == str(podium_home)
    assert env["PODIUM_WAREHOUSE"] == "s3://bucket/warehouse"
    assert env["PODIUM_LAUNCHER"] == "ray"


def test_a_catalog_without_credentials_still_travels(podium_home: Path) -> None:
    env = job_environment(get_settings())
    assert env["PODIUM_CATALOG_URI"] == f"sqlite:///{podium_home / 'catalog.db'}"
    assert json.loads(env["PODIUM_CATALOG_PROPERTIES"]) == {}


@pytest.mark.parametrize(
    ("uri", "properties"),
    [
        (  # libpq takes the password as a query parameter too
            "postgresql+psycopg2://podium@db:5432/podium?password=db-password-value",
            {},
        ),
        (
            "postgresql+psycopg2://podium@db:5432/podium",
            {"adls.account-name": "acct", "adls.account-key": "adls-key-value"},
        ),
        (
            "postgresql+psycopg2://podium@db:5432/podium",
            {"adls.connection-string": "AccountName=acct;AccountKey=adls-key-value"},
        ),
        (
            "postgresql+psycopg2://podium@db:5432/podium",
            {"adls.sas-token.acct": "sv=2024&sig=adls-key-value"},
        ),
    ],
)
def test_no_catalog_password_or_adls_key_goes_to_a_job(
    podium_home: Path, monkeypatch: pytest.MonkeyPatch, uri: str, properties: dict[str, str]
) -> None:
    """Issue 44, point 22: a catalog URL's `?password=` and ADLS keys (account-key,
    connection-string) went into a Ray job's runtime environment."""
    monkeypatch.setenv("PODIUM_CATALOG_URI", uri)
    monkeypatch.setenv("PODIUM_CATALOG_PROPERTIES", json.dumps(properties))
    reset_settings()
    shown = json.dumps(job_environment(get_settings()))
    assert "db-password-value" not in shown and "adls-key-value" not in shown
