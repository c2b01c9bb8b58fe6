"""Named judges: a name bound to a registered model or endpoint, a prompt, and settings.

    podium judge add strict --model base --mode pairwise --prompt-file strict.txt
    podium judge run --comparison cmp.x --judge strict

A judge is pairwise (A, B or tie, for comparisons) or rubric (a 1-10 score, for the
`rubric` signal and the `judge:NAME` GRPO reward). Its prompt is checked for the
placeholders its mode needs when it is added, so a judge that is registered can run.
Rows live in the state database beside the model registry; each names who added it.
Wherever a judge is named, a registered model's name also works: that model with the
built-in prompt of the mode asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Column, DateTime, Integer, String, Table, Text, delete, insert, select

from podium.compare.judge_prompts import DEFAULT_MAX_TOKENS, Mode, check_max_tokens, judge_prompt
from podium.errors import InvalidInput, NotFound
from podium.identity import require
from podium.models import get_model
from podium.models.model_names import check_name
from podium.models.registry import get_model_or_none
from podium.models.state_rows import from_row
from podium.store.state.state import METADATA, engine
from podium.store.state.users import acting_user

MODES: tuple[Mode, ...] = ("pairwise", "rubric")

judges_table = Table(
    "podium_judges",
    METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(128), unique=True, nullable=False),
    Column("model", String(128), nullable=False),
    Column("mode", String(16), nullable=False),
    Column("prompt", Text),  # None: the mode's built-in prompt
    Column("max_tokens", Integer, nullable=False),
    Column("created_by", String(255), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)


@dataclass(frozen=True)
class Judge:
    name: str
    model: str
    mode: Mode
    prompt: str | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS
    created_by: str = ""
    created_at: str = ""

    @property
    def prompt_version(self) -> str:
        return judge_prompt(self.mode, self.prompt).version

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "model": self.model,
            "mode": self.mode,
            "prompt_version": self.prompt_version,
            "prompt": self.prompt,
            "max_tokens": self.max_tokens,
            "created_by": self.created_by,
            "created_at": self.created_at,
        }


def _row_to_judge(row: Any) -> Judge:
    created = row.created_at.isoformat() if row.created_at else ""
    return from_row(Judge, row, created_at=created)


def add_judge(
    name: str,
    model: str,
    mode: str,
    prompt: str | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> Judge:
    """Register judge `name` (refused: a taken name, an unknown model or mode, a prompt
    without its mode's placeholders, a max_tokens that could cut a verdict)."""
    require(acting_user(), "serve_model")
    check_name(name)
    if mode not in MODES:
        raise InvalidInput(f"Judge mode {mode!r} is unknown; use pairwise or rubric.")
    if get_model_or_none(name) is not None:
        raise InvalidInput(
            f"{name!r} is a registered model's name; give the judge a name of its own "
            f"(say {name}-judge), so `--judge {name}` means one thing."
        )
    check_max_tokens(max_tokens)
    prompt = prompt if prompt and prompt.strip() else None
    judge_prompt(mode, prompt)  # a prompt without its placeholders is refused
    model_name = get_model(model).name  # 'base' is stored as the model it names now
    with engine().begin() as conn:
        taken = conn.execute(select(judges_table.c.id).where(judges_table.c.name == name))
        if taken.first():
            raise InvalidInput(
                f"A judge named {name!r} exists; remove it first (`podium judge remove {name}`)."
            )
        conn.execute(
            insert(judges_table).values(
                name=name,
                model=model_name,
                mode=mode,
                prompt=prompt,
                max_tokens=max_tokens,
                created_by=acting_user().name,
                created_at=datetime.now(UTC),
            )
        )
    return get_judge(name)


def get_judge_or_none(name: str) -> Judge | None:
    with engine().connect() as conn:
        row = conn.execute(select(judges_table).where(judges_table.c.name == name)).first()
    return _row_to_judge(row) if row else None


def get_judge(name: str) -> Judge:
    judge = get_judge_or_none(name)
    if judge is None:
        known = ", ".join(j.name for j in list_judges()) or "none yet"
        raise NotFound(
            f"No judge named {name!r}. Known judges: {known}. Add one with `podium judge add`."
        )
    return judge


def list_judges() -> list[Judge]:
    with engine().connect() as conn:
        rows = conn.execute(select(judges_table).order_by(judges_table.c.name)).all()
    return [_row_to_judge(r) for r in rows]


def remove_judge(name: str) -> None:
    """Forget judge `name`; the verdicts it wrote stay (they name it)."""
    require(acting_user(), "serve_model")
    get_judge(name)
    with engine().begin() as conn:
        conn.execute(delete(judges_table).where(judges_table.c.name == name))


def resolve_judge(name: str, mode: Mode, prompt: str | None = None) -> Judge:
    """The judge `name` for a `mode` task: a registered judge of that mode, or a
    registered model with `prompt` (or the mode's built-in prompt). A judge of the
    other mode, or a prompt given beside a registered judge's own, is refused."""
    judge = get_judge_or_none(name)
    if judge is None:
        model = get_model(name)  # NotFound names the known models
        judge_prompt(mode, prompt)
        return Judge(name=model.name, model=model.name, mode=mode, prompt=prompt or None)
    if judge.mode != mode:
        raise InvalidInput(
            f"Judge {name!r} is a {judge.mode} judge; this needs a {mode} judge "
            f"(`podium judge list` shows each judge's mode)."
        )
    if prompt and prompt.strip():
        raise InvalidInput(
            f"Judge {name!r} has its own prompt; leave the prompt out, or add another "
            "judge with this one."
        )
    return judge
