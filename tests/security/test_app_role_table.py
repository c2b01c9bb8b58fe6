"""docs/security.md's role table is true of every control of the app (issue 44,
done-when): every button and form the pages draw (found in podium/app's source, so a
new one fails `test_every_control_is_classified` until it has a row here) is either no
write (navigation, a filter, the login) or names the call it makes; each such call is
made as a viewer, a reviewer, an operator and an admin, as a forged request would make
it, and stopped at its role check: allowed exactly where the table allows it, refused
(PermissionDenied) elsewhere, and nothing in the home changed.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from command_walk import AS_ROLE, home_state
from recording_server import Recorder
from test_role_table import role_table

import podium.app
import podium.identity as identity
from generators.vibes import answer_stream, build_eval_set, submit_vibe
from podium.app.base_model_setup import queue_bootstrap
from podium.app.rows import saves
from podium.app.views.home.model import load_demo_tables
from podium.app.views.logbook import model as logbook
from podium.app.views.review import queue as review_queue
from podium.app.views.review import snapshots as review_snapshots
from podium.app.views.train.model import cancel_run
from podium.compare.votes import cast_vote, send_to_vibes
from podium.errors import PermissionDenied
from podium.identity import ROLES, Action, User
from podium.jobs.cards import Card
from podium.jobs.launch import run_in_process
from podium.jobs.logbook import submit_config
from podium.models import add_endpoint
from podium.signals.actions import label_by_signal, remove_by_signal
from podium.store.state.users import grant, revoke, use_session_user
from podium.store.write.ingest import ImportConfig

APP = Path(podium.app.__file__).resolve().parent
ROW = {"id": "r0", "messages": [{"role": "user", "content": "q0"}]}


@dataclass
class Seed:
    job: str
    calls: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Item:  # the one prompt of a comparison, as send_to_vibes reads it
    prompt_text: str = "a prompt"
    answers: tuple[()] = ()


class _Comparison:
    def item(self, prompt_id: str) -> _Item:
        return _Item()


Call = Callable[[User, Seed], object]
# What each write control calls, and the action whose row decides who may.
CALLS: dict[str, tuple[Action, Call]] = {
    "label": ("annotate", lambda u, s: saves.label_rows("ns.chat", ["r0"], u, "bad")),
    "rate": ("annotate", lambda u, s: saves.rate_row("ns.chat", "r0", u, 1)),  # and note_row
    "start queue": (
        "annotate",
        lambda u, s: review_queue.start_queue("ns.chat", 2, u, sampled=False),
    ),
    "edit turn": (
        "edit",
        lambda u, s: saves.edit_message(
            "ns.chat", ROW, 0, u, content="x", role=None, why="w", base=None
        ),
    ),
    "add turn": (
        "edit",
        lambda u, s: saves.insert_turn(
            "ns.chat", ROW, u, role="assistant", content="a", at=None, why="w", base=None
        ),
    ),
    "remove turn": ("edit", lambda u, s: saves.drop_turn("ns.chat", ROW, 0, u, why="w", base=None)),
    "delete rows": (
        "edit",
        lambda u, s: saves.delete_rows("ns.chat", ["r1"], u, why="w", base=None),
    ),
    "remove by signal": ("edit", lambda u, s: remove_by_signal("ns.chat", "near-dup")),
    "label by signal": ("annotate", lambda u, s: label_by_signal("ns.chat", "near-dup")),
    "tag": ("edit", lambda u, s: review_snapshots.tag("ns.chat", "v1", u)),
    "branch": ("edit", lambda u, s: review_snapshots.branch("ns.chat", "fix", u)),
    "merge": ("edit", lambda u, s: review_snapshots.merge("ns.chat", "fix", u)),
    "vote": ("vote", lambda u, s: cast_vote(None, None, "A", u)),  # type: ignore[arg-type]
    "send to vibes": ("vibe", lambda u, s: send_to_vibes(_Comparison(), "p0", u)),  # type: ignore[arg-type]
    "submit vibe": ("vibe", lambda u, s: submit_vibe("a prompt", tags=["x"], submitter=u)),
    "build eval set": ("vibe", lambda u, s: build_eval_set("ns.evals", tags=["x"])),
    "ask": ("ask_model", lambda u, s: list(answer_stream("ep", "hi"))),
    "queue job": (
        "run_job",
        lambda u, s: submit_config("export", {"input": {"name": "ns.chat"}, "path": "x.jsonl"}),
    ),
    "bootstrap": ("run_job", lambda u, s: queue_bootstrap()),
    "demo": ("run_job", lambda u, s: load_demo_tables()),
    "cancel job": ("run_job", lambda u, s: logbook.request_cancel(s.job)),
    "cancel run": ("run_job", lambda u, s: cancel_run(s.job)),
    "rerun": ("run_job", lambda u, s: logbook.rerun(s.job)),
    "grant": ("manage_users", lambda u, s: grant(u, "new@example.org", "viewer")),
    "revoke": ("manage_users", lambda u, s: revoke(u, AS_ROLE["viewer"])),
}

# Every control in podium/app ("file:label as written"): the call it makes, or None with
# why it writes nothing.
CONTROLS: dict[str, str | None] = {
    "base_model_panel.py:LABEL": "bootstrap",
    "forms.py:QUEUE_VERB": "queue job",
    "login.py:'Log in'": None,  # the session
    "login.py:'Log out'": None,
    "login.py:'Log in again'": None,
    "rows/panels.py:shown": "label",
    "rows/panels.py:'Save rating and note'": "rate",
    "rows/panels.py:'Save edit'": "edit turn",
    "rows/panels.py:'Add turn at the end'": "add turn",
    "rows/panels.py:'Remove turn'": "remove turn",
    "rows/panels.py:'Delete row'": "delete rows",
    "rows/panels.py:'Reload the newest snapshot'": None,  # reads
    "views/browse/sidebar.py:'SQL condition'": None,  # filters
    "views/browse/sidebar.py:f'Malformed only ({len(bad):,} rows)'": None,
    "views/browse/sidebar.py:'Review filter'": None,
    "views/browse/sidebar.py:'Show every row again'": None,  # drops the Map's selection
    "views/browse/sidebar.py:f'Train on this ({escape_markdown(ref)})'": None,  # to Train's form
    "views/browse/sidebar.py:tables": None,
    "views/browse/sidebar.py:snapshots": None,
    "views/browse/sidebar.py:column.capitalize()": None,
    "views/browse/sidebar.py:f'Train on rows labelled {label}'": None,
    "views/browse/sidebar.py:'Rows with'": None,
    "views/browse/sidebar.py:'Sort by'": None,
    "views/browse/signal_panel.py:'Preview'": None,  # reads the rows an action would touch
    "views/browse/signal_panel.py:f\"Label {result['rows']:,} rows\"": "label by signal",
    "views/browse/signal_panel.py:f\"{act.title}: {result['rows']:,} rows\"": "remove by signal",
    "views/browse/view.py:'Search messages'": None,
    "views/browse/view.py:'Rows per page'": None,
    "views/browse/view.py:f'Label {count:,} rows {label}'": "label",
    "views/browse/view.py:f'Remove {count:,} rows'": "delete rows",
    "views/browse/view.py:escape_markdown(chip.text)": None,  # clears a filter
    "views/compare/view.py:'Previous'": None,
    "views/compare/view.py:'Next'": None,
    "views/compare/view.py:label": "vote",
    "views/compare/view.py:'Send to vibe checks'": "send to vibes",
    "views/compare/view.py:f'Open {escape_markdown(name)}'": None,
    "views/generate/view.py:'Ask'": "ask",
    "views/home/view.py:'Load the demo data'": "demo",
    "views/logbook/view.py:'Re-run with changes'": None,  # opens the form (Queue job)
    "views/logbook/view.py:'Cancel'": "cancel job",
    "views/logbook/view.py:'Re-run'": "rerun",
    "views/map/view.py:'Find similar rows'": None,  # reads (search by meaning)
    "views/map/view.py:'Open in Browse'": None,  # navigates (Browse filtered to a topic)
    "views/map/view.py:label": None,  # navigates (Browse filtered to the selected rows)
    "views/review/view.py:'Queue'": None,
    "views/review/view.py:'Previous'": None,
    "views/review/view.py:'Next'": None,
    "views/review/view.py:'Edit'": None,  # opens the edit panel (Save edit)
    "views/review/view.py:'Start queue'": "start queue",
    "views/review/view.py:f'{k} {escape_markdown(label)}'": "label",
    "views/review/view.py:'Create tag'": "tag",
    "views/review/view.py:'Create branch'": "branch",
    "views/review/view.py:'Fast-forward main'": "merge",
    "views/review/view.py:f'Train on {escape_markdown(b)}'": None,
    "views/sql/view.py:'Run'": None,  # reads (a viewer's SQL)
    "views/train/view.py:'Cancel run'": "cancel run",
    "views/train/view.py:f'Chat with {escape_markdown(view.checkpoint)}'": None,
    "views/train/view.py:f'Compare with {escape_markdown(view.base)}'": None,
    "views/users/view.py:'Grant'": "grant",
    "views/users/view.py:'Revoke'": "revoke",
    "views/vibes/view.py:'Build eval set'": "build eval set",
    "views/vibes/view.py:'Submit'": "submit vibe",
    "widgets.py:label": None,  # pickers
    "widgets.py:escape_markdown(yes)": None,  # confirms the control that asked
    "widgets.py:'Keep it'": None,
}

_CONTROL_CALLS = ("button", "form_submit_button", "download_button")


def app_controls() -> set[str]:
    """Every button, form button and widget with a callback in podium/app's source."""
    found = set()
    for path in APP.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            callbacks = {k.arg for k in node.keywords} & {"on_click", "on_change"}
            if name in _CONTROL_CALLS or callbacks:
                label = ast.unparse(node.args[0]) if node.args else "(no label)"
                found.add(f"{path.relative_to(APP).as_posix()}:{label}")
    return found


def test_every_control_is_classified() -> None:
    controls = app_controls()
    unlisted = sorted(controls - set(CONTROLS))
    assert not unlisted, (
        f"say what these controls call (a role-table action) or why none: {unlisted}"
    )
    assert not set(CONTROLS) - controls, "listed controls that no longer exist"
    assert {c for c in CONTROLS.values() if c} == set(CALLS), "every call is some control's"


class RoleChecked(Exception):
    """The deciding check passed: the call is stopped before its effect."""


@pytest.fixture
def stop_at_role_check(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str | None]]:
    """`require` everywhere it is bound: the real check, then RoleChecked once the
    deciding action passes (what follows it is not run)."""
    real = identity.require
    deciding: dict[str, str | None] = {"action": None}

    def require(user: User, action: Action) -> None:
        real(user, action)
        if action == deciding["action"]:
            raise RoleChecked(action)

    # Only Podium's own modules, read through their __dict__: a library's lazy module
    # (transformers) imports on getattr, and what it imports depends on the tests before.
    for name, module in list(sys.modules.items()):
        own = name.split(".")[0] in ("podium", "generators", "trainers")
        if own and vars(module).get("require") is real:
            monkeypatch.setattr(module, "require", require)
    yield deciding


@pytest.fixture
def seeded(role_home: Path, recorder: Recorder) -> Iterator[Seed]:
    """The shared home, an endpoint at the recorder and a job of the operator's own."""
    add_endpoint(recorder.url, "ep", remote_model="m")
    operator = User(name=AS_ROLE["operator"], role="operator", source="config")
    use_session_user(lambda: operator)  # the operator's own job: they may steer it
    source = str(role_home / "uploads" / "chat.jsonl")
    job = run_in_process(Card("import", ImportConfig(path=source, out="ns.imported")))["id"]
    use_session_user(None)
    yield Seed(job)
    use_session_user(None)


def test_every_control_as_every_role_is_what_the_table_says(
    seeded: Seed, podium_home: Path, recorder: Recorder, stop_at_role_check: dict[str, Any]
) -> None:
    table = role_table()
    before = home_state(podium_home)
    wrong: dict[str, str] = {}
    for role in ROLES:
        user = User(name=AS_ROLE[role], role=role, source="oidc")
        use_session_user(functools.partial(lambda u: u, user))  # as the app's login does
        for name, (action, call) in CALLS.items():
            stop_at_role_check["action"] = action
            allowed = ROLES.index(role) >= ROLES.index(table[action])
            try:
                call(user, seeded)
                outcome = "ran"
            except RoleChecked:
                outcome = "allowed"
            except PermissionDenied as exc:
                outcome = f"refused: {exc}"
            except Exception as exc:  # noqa: BLE001 - any other end is a wrong answer
                outcome = f"{type(exc).__name__}: {exc}"
            if not outcome.startswith("allowed" if allowed else "refused"):
                wrong[f"{name} as {role} ({action} needs {table[action]})"] = outcome
    use_session_user(None)
    assert not wrong, wrong
    assert recorder.seen == []  # no model was asked
    assert home_state(podium_home) == before
