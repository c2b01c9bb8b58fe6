"""What the Home page shows, without Streamlit: where things stand (tables, models,
running model servers, recent jobs) and whether the demo data is still to load."""

from __future__ import annotations

from dataclasses import dataclass, field

from generators.code_exec.demo_functions import DEMO_TABLE as DEMO_FUNCTIONS
from generators.code_exec.demo_functions import load_demo_functions
from podium.app.table_choices import pick, table_choices
from podium.jobs.queue import Job, list_jobs
from podium.models import list_models
from podium.models.serving import list_servers
from podium.store.catalog.catalog import table_exists
from podium.store.catalog.kinds import ROLLOUTS
from podium.store.write.demo import DEMO_TABLES, load_demo

DEMO_NAMES = (*DEMO_TABLES, DEMO_FUNCTIONS)
# What "Load the demo data" writes, said before the click (it promised code datasets).
DEMO_WHAT = {
    "demo.chat": "general chat",
    "demo.json_sft": "JSON extraction, with a stored JSON Schema and some malformed answers",
    DEMO_FUNCTIONS: "Python functions to build a code-execution dataset from on Build",
}
RECENT_JOBS = 5


def demo_text(missing: list[str]) -> str:
    """What loading the demo writes: each missing table and what it holds."""
    return (
        "Writes "
        + "; ".join(f"{name} ({DEMO_WHAT.get(name, 'a demo table')})" for name in missing)
        + ". Made here, nothing downloaded."
    )


def load_demo_tables() -> dict[str, bool]:
    """Write the demo tables and the demo functions: {table: created (else already
    there)}. `load_demo` checks the acting user's role."""
    return {**load_demo(), DEMO_FUNCTIONS: load_demo_functions()}


def demo_missing() -> list[str]:
    """Demo tables not in the catalog yet (Home offers to load them only then)."""
    return [name for name in DEMO_NAMES if not table_exists(name)]


@dataclass(frozen=True)
class HomeState:
    tables: list[str]  # datasets, samples and functions, newest first; no run's rollouts
    models: list[str]  # names; a partial checkpoint's says so ("x (partial: cancelled ...)")
    servers: list[str]  # 'smollm2 at http://127.0.0.1:8000/v1'
    jobs: list[Job] = field(default_factory=list)
    rollouts: int = 0  # async runs' rollouts tables: counted, not listed (they crowded it)
    partial: dict[str, str] = field(default_factory=dict)  # table -> why it is part-written

    def tables_left_out(self, shown: int) -> str:
        """'and 3 more and 1 async run's rollouts table in Browse', or ''."""
        n = self.rollouts
        more = [
            f"{len(self.tables) - shown:,} more" if len(self.tables) > shown else "",
            f"{n:,} async run's rollouts table"
            if n == 1
            else f"{n:,} async runs' rollouts tables"
            if n
            else "",
        ]
        kept = [m for m in more if m]
        return f"and {' and '.join(kept)} in Browse" if kept else ""

    @property
    def summary(self) -> str:
        """'7 tables · 2 models · 1 model server running · 3 recent jobs'."""

        def count(n: int, noun: str) -> str:
            return f"{n:,} {noun}" + ("" if n == 1 else "s")

        return " · ".join(
            [
                count(len(self.tables) + self.rollouts, "table"),
                count(len(self.models), "model"),
                f"{count(len(self.servers), 'model server')} running",
                count(len(self.jobs), "recent job"),
            ]
        )


def home_state(user: str | None = None) -> HomeState:
    tables = pick(table_choices(), groups=None)
    return HomeState(
        tables=[c.name for c in tables if c.kind != ROLLOUTS],
        rollouts=sum(c.kind == ROLLOUTS for c in tables),
        models=[m.label for m in list_models()],
        servers=[f"{s.model} at {s.url}" for s in list_servers() if s.alive],
        jobs=list_jobs(limit=RECENT_JOBS, submitted_by=user),
        partial={c.name: c.partial for c in tables if c.partial and c.kind != ROLLOUTS},
    )
