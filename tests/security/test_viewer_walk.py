"""Every command of the CLI, walked as a viewer (issue 38: role checks before any effect).

The command tree is read from `podium` itself, so a new command fails this test until it
is listed here: either as reading only, or with arguments that would change something,
which a viewer must be refused (exit code 3, PermissionDenied) with nothing changed: no
table, snapshot, job, model, user or file appears or moves in the shared home.

The refused commands run in one driver process (`podium.cli.app.main` per command), so
walking ~40 commands costs one interpreter start, not forty.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer

from podium.cli import TyperCommand, app
from podium.commands.lazy_command import LazyCommand
from podium.config import reset_settings
from podium.identity import User
from podium.jobs.cards import Card
from podium.jobs.launch import run_in_process
from podium.jobs.queue import list_jobs
from podium.models.registry import add_endpoint
from podium.store.catalog.catalog import list_tables, load_table
from podium.store.state.users import grant, use_session_user
from podium.store.write.ingest import ImportConfig, import_file

ADMIN = User(name="boss@example.org", role="admin", source="config")
VIEWER = "viewer@example.org"

# Commands that only read (a viewer may run them) or start a process on the caller's own
# machine whose every action is checked where it acts (app, up, worker).
READ_ONLY = {
    "tables", "show", "snapshots", "sql", "stats", "app", "up", "worker",
    "jobs watch", "jobs show", "jobs metrics", "jobs logs", "jobs template", "jobs kinds",
    "models list", "models servers", "vibes list", "sandbox info", "train presets",
    "compare list", "compare ratings", "compare trend", "refs", "diff",
    "review status", "review history", "review next", "users list", "users whoami",
}  # fmt: skip

CARD = "export-card.md"
JOB = "<job>"  # replaced by a job the admin queued

# Commands that change something, with arguments that would (as an admin).
WRITES: dict[str, list[str]] = {
    "import": ["import", "podium-home/uploads/chat.jsonl", "--out", "ns.more"],
    "export": ["export", "ns.chat", "out.jsonl"],
    "demo": ["demo"],
    "map": ["map", "ns.chat", "--messages", "messages"],
    "run": ["run", CARD],
    "submit": ["submit", CARD],
    "jobs cancel": ["jobs", "cancel", JOB],
    "jobs rerun": ["jobs", "rerun", JOB],
    "jobs scale": ["jobs", "scale", JOB, "--replicas", "2"],
    "start bootstrap": ["start", "bootstrap"],
    "start code-exec-build": [
        *("start", "code-exec-build", "--table", "ns.chat", "--model", "m1", "--out", "ns.ce")
    ],
    "start compare": [
        *("start", "compare", "--models", "m1", "--models", "other", "--table", "ns.chat"),
        *("--out", "c"),
    ],
    "start export": ["start", "export", "--table", "ns.chat", "--path", "o2.jsonl"],
    "start generate": ["start", "generate", "--model", "m1", "--table", "ns.chat", "--out", "g"],
    "start grpo": ["start", "grpo", "--model", "m1", "--table", "ns.chat", "--out", "gr"],
    "start import": [
        "start",
        "import",
        "--path",
        "podium-home/uploads/chat.jsonl",
        "--out",
        "ns.i",
    ],
    "start maintain": ["start", "maintain", "--table", "ns.chat"],
    "start sft": ["start", "sft", "--model", "m1", "--table", "ns.chat", "--out", "s"],
    "start validate": ["start", "validate", "--table", "ns.chat", "--rule", "json"],
    "validate": ["validate", "ns.chat", "--rule", "json"],
    "models add": ["models", "add", "podium-home", "--name", "m2"],
    "models add-endpoint": ["models", "add-endpoint", "http://127.0.0.1:9/v1", "--name", "ep"],
    "models set-key": ["models", "set-key", "ep"],
    "models remove": ["models", "remove", "m1"],
    "models bootstrap": ["models", "bootstrap"],
    "models stop": ["models", "stop", "m1"],
    "serve": ["serve", "m1"],
    "generate": ["generate", "--model", "m1", "--table", "ns.chat", "--out", "g2"],
    "vibes submit": ["vibes", "submit", "hi", "--model", "m1"],
    "vibes evalset": ["vibes", "evalset", "--out", "ns.evals"],
    "sandbox run": ["sandbox", "run", "script.py"],
    "sandbox dockerd": ["sandbox", "dockerd"],
    "build code-exec": [
        "build",
        "code-exec",
        "--table",
        "ns.chat",
        "--model",
        "m1",
        "--out",
        "x",
    ],
    "train grpo": ["train", "grpo", "--model", "m1", "--table", "ns.chat", "--out", "t1"],
    "train sft": ["train", "sft", "--model", "m1", "--table", "ns.chat", "--out", "t2"],
    "vote": ["vote", "cmp.none"],
    "label": ["label", "ns.chat", "r0", "--label", "bad"],
    "edit": ["edit", "ns.chat", "r0", "--turn", "0", "--content", "x", "--why", "w"],
    "delete-rows": ["delete-rows", "ns.chat", "r1", "--why", "w"],
    "tag": ["tag", "ns.chat", "v1"],
    "branch": ["branch", "ns.chat", "fix"],
    "maintain": ["maintain", "ns.chat"],
    "review start": ["review", "start", "ns.chat", "--size", "2"],
    "users grant": ["users", "grant", "someone@example.org", "admin"],
    "users revoke": ["users", "revoke", "boss@example.org"],
}


def command_tree() -> Iterator[str]:
    """Every leaf command of `podium`, as the words that name it."""

    def walk(command: object, words: tuple[str, ...]) -> Iterator[str]:
        if isinstance(command, LazyCommand):
            command = command.real()
        if isinstance(command, TyperCommand):  # typer bundles its own click: duck-typed
            group = typer.main.get_command(command.holder)
            if hasattr(group, "list_commands"):
                command = group.get_command(group.context_class(group), command.typer_name)
            else:
                command = group
        if hasattr(command, "list_commands"):
            ctx = command.context_class(command)  # type: ignore[attr-defined]
            for name in command.list_commands(ctx):
                yield from walk(command.get_command(ctx, name), (*words, name))  # type: ignore[attr-defined]
        else:
            yield " ".join(words)

    yield from walk(app, ())


def test_every_command_is_classified() -> None:
    # Job kinds other tests register in this process (`test-*`) get `start` commands too.
    commands = {c for c in command_tree() if not c.startswith("start test-")}
    unlisted = commands - READ_ONLY - set(WRITES)
    assert not unlisted, f"say whether these read or write (and test them): {sorted(unlisted)}"
    assert not (READ_ONLY | set(WRITES)) - commands, "listed commands that no longer exist"


DRIVER = """
import json, sys
from podium import cli
out = {}
for name, args in json.loads(sys.argv[1]).items():
    try:
        cli.app.main(args=args, prog_name="podium", standalone_mode=False)
        out[name] = "ran"
    except BaseException as exc:  # noqa: BLE001 - what each command ended with is the result
        out[name] = type(exc).__name__ + ": " + " ".join(str(exc).split())[:300]
print("RESULT " + json.dumps(out))
"""


def _state(home: Path) -> dict[str, object]:
    tables = list_tables()
    return {
        "tables": tables,
        "heads": {t: load_table(t).metadata.current_snapshot_id for t in tables},
        "jobs": sorted(j["id"] for j in list_jobs()),
        "files": sorted(
            str(p.relative_to(home))
            for p in home.rglob("*")
            if p.is_file() and "logs" not in p.parts and not p.name.startswith("catalog.db")
        ),
    }


@pytest.fixture
def shared(podium_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("PODIUM_ADMINS", ADMIN.name)
    monkeypatch.setenv("PODIUM_USER", ADMIN.name)
    monkeypatch.setenv("PODIUM_DEFAULT_ROLE", "none")
    reset_settings()
    src = podium_home / "uploads" / "chat.jsonl"
    src.parent.mkdir(parents=True)
    src.write_text(
        "".join(
            json.dumps({"id": f"r{i}", "messages": [{"role": "user", "content": f"q{i}"}]}) + "\n"
            for i in range(3)
        )
    )
    import_file(src, "ns.chat")
    grant(ADMIN, VIEWER, "viewer")
    yield podium_home
    use_session_user(None)


def test_a_viewer_is_refused_by_every_command_that_writes(shared: Path, tmp_path: Path) -> None:
    use_session_user(lambda: ADMIN)
    source = str(shared / "uploads" / "chat.jsonl")
    job = run_in_process(Card("import", ImportConfig(path=source, out="ns.imported")))["id"]
    use_session_user(None)
    for name in ("m1", "other"):
        add_endpoint("http://127.0.0.1:9/v1", name, remote_model=name)
    (tmp_path / CARD).write_text("---\nkind: export\ntable: {name: ns.chat}\npath: c.jsonl\n---\n")
    (tmp_path / "script.py").write_text("print(1)\n")
    runs = {name: [job if a == JOB else a for a in args] for name, args in WRITES.items()}
    before = _state(shared)
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, json.dumps(runs)],
        env={**os.environ, "PODIUM_USER": VIEWER},
        cwd=tmp_path,
        input="a-key\n",
        capture_output=True,
        text=True,
        timeout=600,
    )
    line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line is not None, proc.stdout[-2000:] + proc.stderr[-2000:]
    results = json.loads(line.removeprefix("RESULT "))
    not_refused = {n: r for n, r in results.items() if not r.startswith("PermissionDenied")}
    assert not not_refused, json.dumps(not_refused, indent=1)
    reset_settings()
    assert _state(shared) == before
