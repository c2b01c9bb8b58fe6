"""Every command of `podium`, what each one does in the role table's words, and a
shared home to walk them in (tests/security/test_viewer_walk.py walks them as a viewer,
for real; test_role_table.py as every role, stopped at the role check).

The command tree is read from `podium` itself, so a new command fails
`test_every_command_is_classified` until it is listed here: as reading only, or with
arguments that would change something and the action (`podium.identity.Action`) whose
row of docs/security.md's role table decides who may run it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import typer

from podium.cli import TyperCommand, app
from podium.commands.lazy_command import LazyCommand
from podium.identity import Action, Role, User
from podium.jobs.cards import Card
from podium.jobs.launch import run_in_process
from podium.jobs.queue import list_jobs
from podium.models.registry import add_endpoint
from podium.store.catalog.catalog import list_tables, load_table
from podium.store.state.users import use_session_user
from podium.store.write.ingest import ImportConfig

ADMIN = User(name="boss@example.org", role="admin", source="config")
AS_ROLE: dict[Role, str] = {
    "viewer": "viewer@example.org",
    "reviewer": "reviewer@example.org",
    "operator": "op@example.org",
    "admin": ADMIN.name,
}

# Commands that only read (a viewer may run them) or start a process on the caller's own
# machine whose every action is checked where it acts (app, up, worker).
READ_ONLY = {
    "tables", "show", "snapshots", "sql", "stats", "app", "up", "worker",
    "jobs watch", "jobs show", "jobs metrics", "jobs logs", "jobs template", "jobs kinds",
    "models list", "models servers", "vibes list", "sandbox info", "train presets",
    "compare list", "compare ratings", "compare trend", "refs", "diff",
    "review status", "review history", "review next", "users list", "users whoami",
    "signals list", "judge agreement", "signals similar", "signals topics", "judge list",
}  # fmt: skip

CARD = "export-card.md"
JOB = "<job>"  # replaced by a job an operator ran

_RUN: Action = "run_job"
# Commands that change something: arguments that would (as an admin), and the action
# whose role-table row says who may.
WRITES: dict[str, tuple[list[str], Action]] = {
    "import": (["import", "podium-home/uploads/chat.jsonl", "--out", "ns.more"], _RUN),
    "export": (["export", "ns.chat", "out.jsonl"], _RUN),
    "demo": (["demo"], _RUN),
    "map": (["map", "ns.chat", "--messages", "messages"], "edit"),
    "run": (["run", CARD], _RUN),
    "submit": (["submit", CARD], _RUN),
    "jobs cancel": (["jobs", "cancel", JOB], _RUN),
    "jobs rerun": (["jobs", "rerun", JOB], _RUN),
    "jobs scale": (["jobs", "scale", JOB, "--replicas", "2"], _RUN),
    "start bootstrap": (["start", "bootstrap"], _RUN),
    "start code-exec-build": (
        ["start", "code-exec-build", "--table", "ns.chat", "--model", "m1", "--out", "ns.ce"],
        _RUN,
    ),
    "start compare": (
        [
            *("start", "compare", "--models", "m1", "--models", "other", "--table", "ns.chat"),
            *("--out", "c"),
        ],
        _RUN,
    ),
    "start export": (["start", "export", "--table", "ns.chat", "--path", "o2.jsonl"], _RUN),
    "start generate": (
        ["start", "generate", "--model", "m1", "--table", "ns.chat", "--out", "g"],
        _RUN,
    ),
    "start grpo": (["start", "grpo", "--model", "m1", "--table", "ns.chat", "--out", "gr"], _RUN),
    "start import": (
        ["start", "import", "--path", "podium-home/uploads/chat.jsonl", "--out", "ns.i"],
        _RUN,
    ),
    "start maintain": (["start", "maintain", "--table", "ns.chat"], _RUN),
    "start sft": (["start", "sft", "--model", "m1", "--table", "ns.chat", "--out", "s"], _RUN),
    "start signals": (["start", "signals", "--table", "ns.chat", "--signal", "length"], _RUN),
    "start topic-titles": (["start", "topic-titles", "--table", "ns.chat", "--model", "m1"], _RUN),
    "start validate": (["start", "validate", "--table", "ns.chat", "--rule", "json"], _RUN),
    "signals run": (["signals", "run", "ns.chat", "--signal", "length"], _RUN),
    "signals remove": (["signals", "remove", "ns.chat", "--signal", "exact-dup"], "edit"),
    "signals redact": (["signals", "redact", "ns.chat"], "edit"),
    "signals coverage": (
        ["signals", "coverage", "ns.chat", "--train", "ns.chat", "--write", "ns.uncovered"],
        _RUN,
    ),
    "signals label": (
        ["signals", "label", "ns.chat", "--signal", "exact-dup", "--label", "bad"],
        "annotate",
    ),
    "validate": (["validate", "ns.chat", "--rule", "json"], _RUN),
    "models add": (["models", "add", "podium-home", "--name", "m2"], "serve_model"),
    "models add-endpoint": (
        ["models", "add-endpoint", "http://127.0.0.1:9/v1", "--name", "ep"],
        "serve_model",
    ),
    "models set-key": (["models", "set-key", "ep"], "serve_model"),
    "models remove": (["models", "remove", "m1"], "serve_model"),
    "models bootstrap": (["models", "bootstrap"], "serve_model"),
    "models stop": (["models", "stop", "m1"], "serve_model"),
    "serve": (["serve", "m1"], "serve_model"),
    "generate": (["generate", "--model", "m1", "--table", "ns.chat", "--out", "g2"], _RUN),
    "vibes submit": (["vibes", "submit", "hi", "--model", "m1"], "vibe"),
    "vibes evalset": (["vibes", "evalset", "--out", "ns.evals"], "vibe"),
    "sandbox run": (["sandbox", "run", "script.py"], _RUN),
    "sandbox dockerd": (["sandbox", "dockerd"], _RUN),
    "build code-exec": (
        ["build", "code-exec", "--table", "ns.chat", "--model", "m1", "--out", "x"],
        _RUN,
    ),
    "train grpo": (["train", "grpo", "--model", "m1", "--table", "ns.chat", "--out", "t1"], _RUN),
    "train sft": (["train", "sft", "--model", "m1", "--table", "ns.chat", "--out", "t2"], _RUN),
    "vote": (["vote", "cmp.none"], "vote"),
    "judge run": (["judge", "run", "--comparison", "cmp.none", "--judge", "m1"], _RUN),
    "start judge": (["start", "judge", "--comparison", "cmp.none", "--judge", "m1"], _RUN),
    "judge add": (["judge", "add", "strict", "--model", "m1"], "serve_model"),
    "judge remove": (["judge", "remove", "strict"], "serve_model"),
    "label": (["label", "ns.chat", "r0", "--label", "bad"], "annotate"),
    "edit": (["edit", "ns.chat", "r0", "--turn", "0", "--content", "x", "--why", "w"], "edit"),
    "delete-rows": (["delete-rows", "ns.chat", "r1", "--why", "w"], "edit"),
    "tag": (["tag", "ns.chat", "v1"], "edit"),
    "branch": (["branch", "ns.chat", "fix"], "edit"),
    "maintain": (["maintain", "ns.chat"], _RUN),
    "review start": (["review", "start", "ns.chat", "--size", "2"], "annotate"),
    "users grant": (["users", "grant", "someone@example.org", "admin"], "manage_users"),
    "users revoke": (["users", "revoke", "boss@example.org"], "manage_users"),
}


def command_tree() -> Iterator[str]:
    """Every leaf command of `podium`, as the words that name it."""

    def walk(command: object, words: tuple[str, ...]) -> Iterator[str]:
        if isinstance(command, LazyCommand):
            command = command.real()
        if isinstance(command, TyperCommand):  # typer bundles its own click: duck-typed
            group = typer.main.get_command(command.holder)
            if hasattr(group, "list_commands"):
                ctx = group.context_class(group)
                command = group.get_command(ctx, command.typer_name)  # type: ignore[attr-defined]
            else:
                command = group
        if hasattr(command, "list_commands"):
            ctx = command.context_class(command)  # type: ignore[attr-defined]
            for name in command.list_commands(ctx):
                yield from walk(command.get_command(ctx, name), (*words, name))  # type: ignore[attr-defined]
        else:
            yield " ".join(words)

    yield from walk(app, ())


def product_commands() -> set[str]:
    # Job kinds other tests register in this process (`test-*`) get `start` commands too.
    return {c for c in command_tree() if not c.startswith("start test-")}


def home_state(home: Path) -> dict[str, object]:
    """What a command that changed something would have changed in a home."""
    tables = list_tables()
    return {
        "tables": tables,
        "heads": {t: load_table(t).metadata.current_snapshot_id for t in tables},
        "jobs": sorted(j["id"] for j in list_jobs()),
        "files": sorted(
            str(p.relative_to(home))
            for p in home.rglob("*")
            if p.is_file()
            and "logs" not in p.parts
            and "guarded-slots" not in p.parts
            and not p.name.startswith("catalog.db")
        ),
    }


def write_chat_source(home: Path) -> Path:
    src = home / "uploads" / "chat.jsonl"
    src.parent.mkdir(parents=True)
    src.write_text(
        "".join(
            json.dumps({"id": f"r{i}", "messages": [{"role": "user", "content": f"q{i}"}]}) + "\n"
            for i in range(3)
        )
    )
    return src


def seed_runs(home: Path, cwd: Path, submitter: User) -> dict[str, tuple[list[str], Action]]:
    """What the write commands need in a home holding ns.chat (a job of `submitter`'s,
    two endpoints, a card and a script in `cwd`); WRITES with the job's id filled in."""
    use_session_user(lambda: submitter)
    source = str(home / "uploads" / "chat.jsonl")
    job = run_in_process(Card("import", ImportConfig(path=source, out="ns.imported")))["id"]
    use_session_user(None)
    for name in ("m1", "other"):
        add_endpoint("http://127.0.0.1:9/v1", name, remote_model=name)
    (cwd / CARD).write_text("---\nkind: export\ntable: {name: ns.chat}\npath: c.jsonl\n---\n")
    (cwd / "script.py").write_text("print(1)\n")
    return {
        name: ([job if a == JOB else a for a in args], action)
        for name, (args, action) in WRITES.items()
    }


# Runs commands in one process (`podium.cli.app.main` each), so ~50 commands cost one
# interpreter start. With `stop` the deciding check of each (the action given with it)
# is the real one, and once it passes the command is stopped before its effect.
DRIVER = """
import json, sys
import podium.identity as identity  # before anything binds `require`

real, deciding = identity.require, {"action": None}


class RoleChecked(Exception):
    pass


def require(user, action):
    real(user, action)  # PermissionDenied when the role does not allow it
    if action == deciding["action"]:
        raise RoleChecked(action)  # allowed: stop before the effect


identity.require = require
from podium import cli

runs, stop = json.loads(sys.argv[1]), sys.argv[2] == "stop"
out = {}
for name, (args, action) in runs.items():
    deciding["action"] = action if stop else None
    try:
        cli.app.main(args=args, prog_name="podium", standalone_mode=False)
        out[name] = "ran"
    except BaseException as exc:  # noqa: BLE001 - what each command ended with is the result
        out[name] = type(exc).__name__ + ": " + " ".join(str(exc).split())[:300]
print("RESULT " + json.dumps(out))
"""


def walk(
    user: str, runs: Mapping[str, tuple[list[str], str]], cwd: Path, *, stop: bool
) -> dict[str, str]:
    """How each command ended, run as `user` (PODIUM_USER): "ran", "RoleChecked: ACTION"
    (stopped at its deciding check, with `stop`) or "ERRORTYPE: message"."""
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, json.dumps(runs), "stop" if stop else "run"],
        env={**os.environ, "PODIUM_USER": user},
        cwd=cwd,
        input="a-key\n",
        capture_output=True,
        text=True,
        timeout=600,
    )
    line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line is not None, proc.stdout[-2000:] + proc.stderr[-2000:]
    results: dict[str, str] = json.loads(line.removeprefix("RESULT "))
    return results
