"""Files stay where they belong: exports (from the CLI, the app and a run card through the
worker) and input files resolve under the configured roots, or are refused clearly.

Every outside target here is under tmp_path (never a system path), except
`/etc/x.jsonl`, which is only ever refused and checked to be absent.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import cli_fork
import pytest
from streamlit.testing.v1 import AppTest

from podium.config import reset_settings
from podium.errors import InvalidInput
from podium.jobs.cards import Card
from podium.jobs.queue import create_job, get_job, list_jobs
from podium.jobs.worker import Worker
from podium.paths import resolve_under_roots
from podium.store.read.export import ExportConfig
from podium.store.read.refs import TableRef
from podium.store.write.ingest import import_file

MAIN = str(Path(__file__).resolve().parents[2] / "podium" / "app" / "main.py")
OUTSIDE_ROOTS = "is outside the directories Podium may write"


@pytest.fixture
def home(podium_home: Path, chat_source: Path) -> Iterator[Path]:
    """A home with one small table, ns.chat."""
    import_file(chat_source, "ns.chat")
    (podium_home / "exports").mkdir(parents=True, exist_ok=True)
    yield podium_home


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


def podium(*args: str) -> subprocess.CompletedProcess[str]:
    return cli_fork.run(
        [sys.executable, "-m", "podium.cli", *args], capture_output=True, text=True, timeout=300
    )


def _refused(proc: subprocess.CompletedProcess[str], *phrases: str) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    message = " ".join(proc.stderr.split())
    for phrase in phrases:
        assert phrase in message, (phrase, message)


# The one function.


def test_relative_paths_mean_the_exports_root(podium_home: Path) -> None:
    assert resolve_under_roots("a/b.jsonl", "export") == (podium_home / "exports/a/b.jsonl")


@pytest.mark.parametrize("bad", ["/etc/x.jsonl", "../x.jsonl", "sub/../../x.jsonl"])
def test_outside_and_dotdot_paths_are_refused(podium_home: Path, bad: str) -> None:
    with pytest.raises(InvalidInput, match=r"outside the directories|contains '\.\.'"):
        resolve_under_roots(bad, "export")


def test_symlinks_out_of_a_root_are_refused(podium_home: Path, outside: Path) -> None:
    exports = podium_home / "exports"
    exports.mkdir(parents=True)
    (exports / "dir-link").symlink_to(outside, target_is_directory=True)
    (exports / "file-link.jsonl").symlink_to(outside / "f.jsonl")
    for given in ("dir-link/x.jsonl", "file-link.jsonl", exports / "dir-link" / "x.jsonl"):
        with pytest.raises(InvalidInput, match=f"which leads to {outside}"):
            resolve_under_roots(given, "export")


def test_extra_roots_come_from_the_setting(
    podium_home: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(InvalidInput):
        resolve_under_roots(outside / "x.jsonl", "export")
    monkeypatch.setenv("PODIUM_FILE_ROOTS", f"{outside},/nonexistent-podium-root")
    reset_settings()
    assert resolve_under_roots(outside / "x.jsonl", "export") == outside / "x.jsonl"


def test_reads_are_confined_only_in_a_shared_deployment(
    podium_home: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = outside / "data.jsonl"
    assert resolve_under_roots(source, "import") == source  # the OS user's own file
    monkeypatch.setenv("PODIUM_USER", "someone@example.org")
    reset_settings()
    with pytest.raises(InvalidInput, match="outside the directories Podium may read"):
        resolve_under_roots(source, "import")
    upload = podium_home / "uploads" / "data.jsonl"
    assert resolve_under_roots(upload, "import") == upload


# The CLI.


def test_cli_export_outside_the_roots_is_refused(home: Path) -> None:
    _refused(podium("export", "ns.chat", "/etc/x.jsonl"), OUTSIDE_ROOTS, str(home / "exports"))
    assert not Path("/etc/x.jsonl").exists()
    assert list_jobs() == []  # refused before any job existed


def test_cli_export_through_a_symlink_out_is_refused(home: Path, outside: Path) -> None:
    (home / "exports" / "out").symlink_to(outside, target_is_directory=True)
    _refused(podium("export", "ns.chat", str(home / "exports/out/x.jsonl")), OUTSIDE_ROOTS)
    (home / "exports" / "x.jsonl").symlink_to(outside / "x.jsonl")
    _refused(podium("export", "ns.chat", str(home / "exports/x.jsonl")), OUTSIDE_ROOTS)
    assert list(outside.iterdir()) == []


def test_cli_export_to_a_relative_path_lands_in_the_exports_root(home: Path) -> None:
    proc = podium("export", "ns.chat", "mine/out.jsonl")
    assert proc.returncode == 0, proc.stderr
    assert len((home / "exports/mine/out.jsonl").read_text().splitlines()) == 3


def test_a_run_card_naming_an_outside_path_is_refused(home: Path, tmp_path: Path) -> None:
    card = tmp_path / "export.md"
    card.write_text("---\nkind: export\ninput: {name: ns.chat}\npath: /etc/x.jsonl\n---\n")
    _refused(podium("run", str(card)), OUTSIDE_ROOTS)
    _refused(podium("submit", str(card)), OUTSIDE_ROOTS)
    assert not Path("/etc/x.jsonl").exists() and list_jobs() == []


# The worker: a path checked when queued, then swapped for a link out, is refused at run.


def test_the_worker_refuses_a_path_that_leads_out_when_the_job_runs(
    home: Path, outside: Path
) -> None:
    folder = home / "exports" / "team"
    folder.mkdir()
    cfg = ExportConfig(input=TableRef(name="ns.chat"), path=str(folder / "x.jsonl"))
    job_id = create_job(Card("export", cfg))  # passes the preflight: a real directory
    folder.rmdir()
    folder.symlink_to(outside, target_is_directory=True)
    Worker(poll=0.2, say=lambda _m: None).run(once=True)
    job = get_job(job_id)
    assert job["status"] == "failed"
    assert OUTSIDE_ROOTS in job["error"] and f"which leads to {outside}" in job["error"]
    assert list(outside.iterdir()) == []


# The app: the Logbook's New job form shows the same refusal and queues nothing.


def test_the_app_refuses_an_export_outside_the_roots(home: Path) -> None:
    at = AppTest.from_file(MAIN, default_timeout=60)
    at.run()
    at.switch_page("views/logbook/view.py")
    at.run()
    at.selectbox(key="logbook.new.kind").set_value("export").run()
    at.text_input(key="logbook.new.export.path").set_value("/etc/x.jsonl")
    at.button(key="FormSubmitter:logbook.new.export-Queue job").click().run()
    assert not at.exception, at.exception
    errors = " ".join(" ".join(str(e.value).split()) for e in at.error)
    assert OUTSIDE_ROOTS in errors, errors
    assert list_jobs() == [] and not Path("/etc/x.jsonl").exists()


# Reads in a shared deployment: a card cannot read the server's files into a table.


@pytest.fixture
def shared_operator(monkeypatch: pytest.MonkeyPatch) -> str:
    """A shared deployment (reads confined to the roots) acting as admin op@example.org."""
    monkeypatch.setenv("PODIUM_USER", "op@example.org")
    monkeypatch.setenv("PODIUM_ADMINS", "op@example.org")
    reset_settings()
    return "op@example.org"


def test_a_shared_deployment_imports_and_reads_rule_files_only_from_its_roots(
    home: Path, tmp_path: Path, shared_operator: str
) -> None:
    secret = tmp_path / "server-secret.jsonl"
    secret.write_text('{"messages": [{"role": "user", "content": "secret"}]}\n')
    read_refusal = "is outside the directories Podium may read"
    _refused(podium("import", str(secret), "--table", "ns.leak"), read_refusal)
    schema = tmp_path / "schema.json"
    schema.write_text("{}")
    _refused(podium("validate", "ns.chat", "--rule", f"json-schema:{schema}"), read_refusal)
    uploads = home / "uploads"
    uploads.mkdir()
    (uploads / "ok.jsonl").write_text(secret.read_text())
    proc = podium("import", str(uploads / "ok.jsonl"), "--table", "ns.uploaded")
    assert proc.returncode == 0, proc.stderr
    assert list_jobs(submitted_by="op@example.org")  # the allowed import ran, as op


# A root that holds the home (docker compose's /data around /data/podium): Podium's own
# files are never a place to write to, nor, in a shared deployment, to read from.

INSIDE_HOME = "is inside Podium's home"


@pytest.fixture
def root_around_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (home / ".streamlit").mkdir()
    (home / ".streamlit" / "cookie_secret").write_text("the-cookie-secret")
    (home / "podium.toml").write_text('default_role = "viewer"\n')
    monkeypatch.setenv("PODIUM_FILE_ROOTS", str(home.parent))
    reset_settings()
    return home.parent


def _own_files(home: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in home.rglob("*") if p.is_file() and "exports" not in p.parts}


def test_an_export_never_lands_in_the_home_a_root_holds(home: Path, root_around_home: Path) -> None:
    """Issue 44, point 11: with file_roots = /data around the home /data/podium, an export
    overwrote the cookie secret (so anyone who can export could sign an admin's login
    cookie after a restart), podium.toml and the catalog."""
    before = _own_files(home)
    for target in (".streamlit/cookie_secret", "podium.toml", "catalog.db", "servers/x.jsonl"):
        proc = podium("export", "ns.chat", str(home / target), "--format", "jsonl")
        _refused(proc, INSIDE_HOME, str(home / "exports"))
    assert _own_files(home) == before
    assert not (home / "servers").exists()
    for allowed in (root_around_home / "beside.jsonl", home / "exports" / "mine.jsonl"):
        proc = podium("export", "ns.chat", str(allowed))
        assert proc.returncode == 0, proc.stderr
        assert len(allowed.read_text().splitlines()) == 3


def test_a_shared_deployment_reads_no_home_file_a_root_holds(
    home: Path, root_around_home: Path, shared_operator: str
) -> None:
    with pytest.raises(InvalidInput, match=INSIDE_HOME):
        resolve_under_roots(home / ".streamlit" / "cookie_secret", "import")
    upload = home / "uploads" / "data.jsonl"
    assert resolve_under_roots(upload, "import") == upload  # where the app keeps uploads
    beside = root_around_home / "data.jsonl"
    assert resolve_under_roots(beside, "import") == beside
