"""One settings object for the whole application.

Values come, highest priority first, from keyword arguments, `PODIUM_*` environment
variables, a `podium.toml` (path in `PODIUM_CONFIG`, else `$PODIUM_HOME/podium.toml`),
and the defaults below. A `podium.toml` in the working directory is never read: settings
choose the Python that starts model servers and the folders files are written to, and
whoever can put a file where a command happens to run must not choose them. The defaults
give the embedded deployment: a SQLite catalog and a local warehouse under `~/.podium`. A
shared deployment changes only URLs: `catalog_uri = "postgresql+psycopg2://..."`,
`warehouse = "s3://bucket/path"`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import unquote, urlparse

from pydantic import BeforeValidator, Field, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)


def _split_commas(value: object) -> object:
    return (
        [part.strip() for part in value.split(",") if part.strip()]
        if isinstance(value, str)
        else value
    )


# Lists given in the environment as "a@x.org,b@y.org" rather than JSON.
CommaList = Annotated[list[str], NoDecode, BeforeValidator(_split_commas)]


def file_location(path: Path) -> str:
    """The `file://` location of a local directory, its path as it is: pyiceberg (and so
    every table's metadata) and DuckDB take the text after `file://` as the path, never
    decoding %XX, so `Path.as_uri()`'s `with%20space` became a directory of that name."""
    return f"file://{path.as_posix()}"


_SQLITE_PREFIXES = ("sqlite:///", "sqlite+pysqlite:///")


def sqlite_file(uri: str) -> Path | None:
    """The file of an SQLite URI (`sqlite:///PATH`), or None (another database, memory)."""
    for prefix in _SQLITE_PREFIXES:
        if uri.startswith(prefix):
            database = unquote(uri.removeprefix(prefix).split("?", 1)[0])
            return Path(database) if database and database != ":memory:" else None
    return None


def _default_home() -> Path:
    return Path(os.environ.get("PODIUM_HOME", "~/.podium")).expanduser()


def settings_file() -> Path | None:
    """The `podium.toml` settings are read from: `PODIUM_CONFIG`, else the home's."""
    for candidate in (os.environ.get("PODIUM_CONFIG"), str(_default_home() / "podium.toml")):
        if candidate and Path(candidate).is_file():
            return Path(candidate).absolute()
    return None


# A local location is written `file://PATH` with the path as it is (see file_location):
# a reader parsing that URL ends the path at `#` or `?`, so a home or warehouse holding
# either had its files written beside it (`/x/h` for a home `/x/h#1`).
URL_ENDS_PATH = ("#", "?")
# Set by `podium app`/`podium up` for the app processes: the address the app is served
# on, whose Host/Origin rules apply when the processes listen behind a proxy.
SERVED_ADDRESS_ENV = "PODIUM_SERVED_ADDRESS"


def _no_url_end(path: str) -> None:
    for mark in URL_ENDS_PATH:
        if mark in path:
            raise ValueError(
                f"the path holds {mark!r}, which ends a path in the file:// locations tables "
                "are written to, so files would land outside it; choose one without '#' or '?'"
            )


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PODIUM_", extra="ignore")

    home: Path = Field(default_factory=_default_home, description="Podium's data directory.")
    catalog_name: str = Field("podium", description="Name of the Iceberg catalog.")
    catalog_uri: str = Field(
        "",
        description="SQLAlchemy URL of the catalog and app-state database "
        "(default: SQLite file in home).",
    )
    warehouse: str = Field(
        "", description="Where table data lives: a path or file://, s3:// URL (default: home)."
    )
    catalog_properties: dict[str, str] = Field(
        default_factory=dict,
        description="Extra pyiceberg catalog properties, e.g. s3.endpoint, s3.access-key-id "
        "(env: JSON object).",
    )
    default_namespace: str = Field("default", description="Namespace for unqualified names.")
    file_roots: CommaList = Field(
        default_factory=list,
        description="Directories besides $PODIUM_HOME/exports and the warehouse where exports, "
        "reports and uploads may be written and read (podium.paths).",
    )
    guarded_queries: int = Field(
        4,
        ge=1,
        description="How many guarded queries (`podium sql`, --where filters, the SQL page) "
        "may run at once on this home, each under its own memory cap; more wait, then are "
        "told the host is busy.",
    )
    launcher: Literal["local", "ray"] = Field("local", description="Where jobs run.")
    ray_address: str = Field("", description="Ray cluster address for launcher=ray.")
    ray_auth_token_path: str = Field(
        "",
        description="File holding the Ray cluster's authentication token, for a cluster with "
        "token authentication (RAY_AUTH_MODE=token): read here only, never sent to jobs.",
    )
    sandbox_backend: Literal["local", "docker"] = Field(
        "local", description="Sandbox for untrusted code."
    )
    sandbox_image: str = Field(
        "podium-sandbox:bookworm",
        description="Docker image the docker sandbox runs (scripts/setup_sandbox.sh builds it).",
    )
    sandbox_rootfs: str = Field(
        "",
        description="Root filesystem tar the docker sandbox image is built from "
        "(default: .cache/sandbox/rootfs.tar in the source checkout).",
    )
    model_cache: str = Field(
        "",
        description="Where converted checkpoints are kept (default: .cache/models in the "
        "source checkout, else $PODIUM_HOME/cache/models).",
    )
    vllm_python: str = Field(
        "", description="Python of the environment that has vLLM (default: .venv-vllm or PATH)."
    )
    vllm_cpu_threads: int = Field(
        0,
        ge=0,
        description="Threads a vLLM server on CPU computes with (0 = one fewer than the "
        "cores this process may use, at least 1: vLLM's own default, which leaves a core "
        "to its HTTP server; more threads than free cores make every step wait on the "
        "slowest one).",
    )
    vllm_cache_dir: str = Field(
        "",
        description="vLLM's cache (VLLM_CACHE_ROOT): what it learned of model classes and "
        "compiled kernels, keyed by vLLM's own sources (default: cache/vllm under the home). "
        "Homes that share one skip a ~10 s model inspection on each server's first start.",
    )
    job_plugins: str = Field(
        "", description="Comma-separated modules imported to register extra job kinds."
    )
    server_idle_seconds: float = Field(
        900.0, description="A vLLM server Podium started stops after this long unused (0 = never)."
    )
    target_file_bytes: int = Field(
        256 * 2**20,
        gt=0,
        description="Size on disk at which a write starts its next Parquet data file.",
    )
    import_max_line_bytes: int = Field(
        8 * 2**20,
        gt=0,
        description="Longest JSONL line (one record) an import accepts; longer ones are refused.",
    )
    heartbeat_seconds: float = Field(2.0, description="How often a running job reports life.")
    stale_after_seconds: float = Field(
        30.0, description="A running job silent this long is taken as dead."
    )
    # Identity (podium.store.state.users). Without OIDC and PODIUM_USER, Podium is in local
    # single-user mode: the OS user acts, with every role.
    user: str = Field(
        "",
        description="Shared deployment: who CLI commands and the worker act as (PODIUM_USER), "
        "looked up in the users table.",
    )
    admins: CommaList = Field(
        default_factory=list, description="E-mails or names that are always admin (bootstrap)."
    )
    default_role: Literal["none", "viewer", "reviewer", "operator", "admin"] = Field(
        "viewer", description="Role of an allowed user not in the users table ('none' refuses)."
    )
    allowed_domains: CommaList = Field(
        default_factory=list,
        description="E-mail domains that may log in (empty: any the provider vouches for).",
    )
    allowed_emails: CommaList = Field(
        default_factory=list, description="E-mails that may log in besides allowed domains."
    )
    oidc_issuer: str = Field(
        "", description="OpenID Connect issuer URL; setting it turns on login."
    )
    oidc_client_id: str = Field("", description="OIDC client id registered for Podium.")
    oidc_client_secret: str = Field("", description="OIDC client secret.")
    cookie_secret: str = Field(
        "", description="Secret that signs login cookies (default: generated once into home)."
    )
    public_url: str = Field(
        "", description="The app's URL as browsers reach it (default: http://HOST:PORT)."
    )
    allowed_hosts: CommaList = Field(
        default_factory=list,
        description="Host names the app answers to besides the bind address, localhost and "
        "127.0.0.1 (e.g. a name in /etc/hosts); other Host or Origin headers get 403.",
    )
    insecure_no_auth: bool = Field(
        False, description="Serve beyond loopback without login (every page says so)."
    )
    app_processes: int = Field(
        1,
        ge=1,
        le=64,
        description="Streamlit processes `podium app`/`podium up` serve the one URL with, "
        "each browser kept on one; one process runs one session's script at a time, so a "
        "team gets about one per core.",
    )
    oidc_require_verified_email: bool = Field(
        True,
        description="Refuse a login whose provider does not say `email_verified: true` (turn "
        "off only for a provider that vouches for every address it issues).",
    )
    endpoint_key_envs: CommaList = Field(
        default_factory=list,
        description="Environment variables a model endpoint may take its API key from "
        "(`podium models add-endpoint --api-key-env`), each NAME or NAME=URL (the key then "
        "goes only to that URL); none by default, never a PODIUM_* variable. Prefer "
        "`podium models set-key`, which keeps the key in the home.",
    )

    @property
    def login_configured(self) -> bool:
        return bool(self.oidc_issuer and self.oidc_client_id)

    @property
    def shared(self) -> bool:
        """True when people are identified (login or PODIUM_USER), not the OS user."""
        return self.login_configured or bool(self.user)

    @field_validator("home", mode="after")
    @classmethod
    def _home_path(cls, home: Path) -> Path:
        _no_url_end(str(home))
        return home

    @field_validator("warehouse", mode="after")
    @classmethod
    def _warehouse_path(cls, warehouse: str) -> str:
        if "://" not in warehouse:
            _no_url_end(warehouse)
        elif warehouse.startswith("file:"):
            _no_url_end(unquote(urlparse(warehouse).path))
        return warehouse

    @model_validator(mode="after")
    def _no_podium_key_envs(self) -> Settings:
        for entry in self.endpoint_key_envs:
            if entry.partition("=")[0].strip().upper().startswith("PODIUM_"):
                raise ValueError(
                    f"endpoint_key_envs may not name {entry.partition('=')[0]!r}: Podium's own "
                    "settings hold its secrets and never go to a model endpoint"
                )
        return self

    @model_validator(mode="after")
    def _derive_locations(self) -> Settings:
        self.home = Path(self.home).expanduser().absolute()  # children may run elsewhere
        if not self.catalog_uri:  # SQLAlchemy decodes %XX in the file name: keep a '%'
            self.catalog_uri = f"sqlite:///{str(self.home / 'catalog.db').replace('%', '%25')}"
        if not self.warehouse:
            self.warehouse = file_location(self.home / "warehouse")
        elif "://" not in self.warehouse:
            self.warehouse = file_location(Path(self.warehouse).expanduser().resolve())
        elif self.warehouse.startswith("file:"):
            self.warehouse = file_location(Path(unquote(urlparse(self.warehouse).path)))
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        toml = settings_file()
        if toml is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml))
        return tuple(sources)

    def ensure_home(self) -> Path:
        """The home, created private to this user (0700, whatever the umask): it holds the
        catalog, secrets, logs and data. An existing home keeps the mode it has."""
        if not self.home.is_dir():
            self.home.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chmod(self.home, 0o700)
        default_db = self.home / "catalog.db"
        if self.catalog_uri == f"sqlite:///{default_db}" and not default_db.exists():
            # SQLite creates its file (and journals) with the umask's mode, 0644 by default;
            # an empty file is an empty database, made 0600 first.
            os.close(os.open(default_db, os.O_WRONLY | os.O_CREAT, 0o600))
        if self.warehouse.startswith("file://"):
            Path(self.warehouse.removeprefix("file://")).mkdir(parents=True, exist_ok=True)
        return self.home


class SettingsError(ValueError):
    """A setting (environment or podium.toml) that does not validate. Not a PodiumError:
    this bottom layer imports nothing of Podium's; `podium.cli` reports it the same way."""


@functools.cache
def get_settings() -> Settings:
    """The process-wide settings; tests call `reset_settings()` after changing env."""
    try:
        return Settings()
    except ValidationError as exc:
        raise SettingsError(_settings_problem(exc)) from None


def _settings_problem(exc: ValidationError) -> str:
    """Each bad setting by the names a person sets it by, with what was wrong."""
    problems = []
    for error in exc.errors():
        field = str(error["loc"][0]) if error["loc"] else ""
        where = f"{field} (PODIUM_{field.upper()} or podium.toml)" if field else "settings"
        got = error.get("input")
        shown = f" (got {got!r})" if isinstance(got, str | int | float) else ""
        problems.append(f"{where}: {error['msg']}{shown}")
    return "Bad setting: " + "; ".join(problems) + ". Fix or unset it and run again."


# What each cache built from the settings does when they are reset: an engine's pooled
# connections to the old home's database are closed (three descriptors a home on SQLite
# in WAL mode, never given back: a process that saw a thousand homes ran out of them).
_on_reset: list[Callable[[], None]] = []


def on_settings_reset(forget: Callable[[], None]) -> None:
    """Call `forget` at every `reset_settings()` (registered by the store's caches: this
    bottom layer imports nothing of Podium's)."""
    _on_reset.append(forget)


def reset_settings() -> None:
    get_settings.cache_clear()
    for forget in _on_reset:
        forget()
