"""API keys of external endpoints: secrets Podium holds, or allowed environment variables.

A key is sent only to the URL it was given for. Two sources, checked where a client is
built (`endpoint_key`), not only when the endpoint is registered, since a registry row is
just a row in the state database:

- a key an operator stored with `podium models set-key NAME` (read from stdin or a
  hidden prompt, never echoed): one private file (0600) under `$PODIUM_HOME/secrets`,
  holding the key and the URL it was set for; a key set for another URL is never sent;
- an environment variable the deployment allows in `endpoint_key_envs`, each `NAME` or
  `NAME=URL` (then only for that URL). None is allowed by default, and a `PODIUM_*`
  variable never is: those hold Podium's own secrets (the OIDC client secret, the cookie
  secret, the database URL), which an endpoint's owner must not receive.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit, urlunsplit

from podium.config import Settings, get_settings
from podium.errors import InvalidInput, PermissionDenied
from podium.models.model_names import check_name
from podium.store.private_tmp import write_private_file


class ModelInfo(Protocol):
    """What a key needs of a registry entry (`podium.models.registry.ModelInfo`)."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def url(self) -> str | None: ...
    @property
    def api_key_env(self) -> str | None: ...


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
SECRETS_DIR = "secrets"


def allowed_key_envs(settings: Settings | None = None) -> dict[str, str | None]:
    """{variable: the one URL its key may go to, or None for any} from the settings."""
    settings = settings or get_settings()
    allowed: dict[str, str | None] = {}
    for entry in settings.endpoint_key_envs:
        name, _, url = entry.partition("=")
        allowed[name.strip()] = _normal_url(url) if url.strip() else None
    return allowed


def check_key_env(name: str, url: str | None, settings: Settings | None = None) -> str:
    """`name` if an endpoint at `url` may take its key from it; else PermissionDenied."""
    if not _ENV_NAME.match(name) or name.upper().startswith("PODIUM_"):
        raise PermissionDenied(
            f"An endpoint's key cannot come from ${name}: Podium's own settings (PODIUM_*) "
            "hold its secrets and are never sent to a model endpoint. Store the key with "
            "`podium models set-key NAME` instead."
        )
    allowed = allowed_key_envs(settings)
    if name not in allowed:
        listed = ", ".join(sorted(allowed)) or "none"
        raise PermissionDenied(
            f"${name} is not an allowed endpoint-key variable (allowed: {listed}). Store the "
            "key with `podium models set-key NAME` (read from stdin), or have the operator "
            f"add {name} to endpoint_key_envs (PODIUM_ENDPOINT_KEY_ENVS or podium.toml)."
        )
    bound = allowed[name]
    if bound is not None and _normal_url(url or "") != bound:
        raise PermissionDenied(
            f"${name} may only be sent to {shown_url(bound)} (endpoint_key_envs), not to "
            f"{shown_url(url)}."
        )
    return name


def store_key(model: ModelInfo, key: str, settings: Settings | None = None) -> Path:
    """Keep `key` for endpoint `model`, bound to its URL, in a file only this user reads."""
    if model.kind != "endpoint" or not model.url:
        raise InvalidInput(f"{model.name} is not an endpoint; only endpoints take an API key.")
    key = key.strip()
    if not key or any(ch.isspace() for ch in key):
        raise InvalidInput("The API key is empty or holds spaces; paste the key alone.")
    path = _key_path(model.name, settings)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    write_private_file(path, json.dumps({"url": model.url, "key": key}))
    return path


def forget_key(name: str, settings: Settings | None = None) -> None:
    _key_path(name, settings).unlink(missing_ok=True)


def has_stored_key(name: str, settings: Settings | None = None) -> bool:
    return _key_path(name, settings).is_file()


def endpoint_key(model: ModelInfo, settings: Settings | None = None) -> str | None:
    """The key to send to `model`'s URL, or None for no key; refuses a key whose source
    is not allowed or was given for another URL."""
    if model.kind != "endpoint":
        return None  # a server Podium starts itself takes no key
    stored = _key_path(model.name, settings)
    if stored.is_file():
        record = json.loads(stored.read_text(encoding="utf-8"))
        if _normal_url(str(record.get("url", ""))) != _normal_url(model.url or ""):
            raise PermissionDenied(
                f"The key stored for endpoint {model.name!r} was set for "
                f"{shown_url(str(record.get('url', '')))}, but the endpoint now points to "
                f"{shown_url(model.url)}; it is not sent there. Set it "
                f"again with `podium models set-key {model.name}`."
            )
        return str(record["key"])
    if not model.api_key_env:
        return None
    check_key_env(model.api_key_env, model.url, settings)
    key = os.environ.get(model.api_key_env)
    if not key:
        raise InvalidInput(
            f"Endpoint {model.name!r} needs its API key in ${model.api_key_env}, which is not set."
        )
    return key


def _key_path(name: str, settings: Settings | None) -> Path:
    settings = settings or get_settings()
    return settings.ensure_home() / SECRETS_DIR / "endpoints" / f"{check_name(name)}.json"


def _normal_url(url: str) -> str:
    """As `add_endpoint` registers URLs: no trailing slash, ending in /v1."""
    url = url.strip().rstrip("/")
    return url if not url or url.endswith("/v1") else url + "/v1"


def shown_url(url: str | None) -> str:
    """`url` as lists, messages and lineage show it: a `user:password@` in it is a
    credential (HTTP basic auth), which viewers must not read, so it becomes `***@`."""
    if not url:
        return ""
    try:
        parts = urlsplit(url)
        if parts.username is None and parts.password is None:
            return url
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit(parts._replace(netloc=f"***@{host}"))
    except ValueError:  # not a URL a client would accept either: show no part of it
        return "(an invalid URL)"
