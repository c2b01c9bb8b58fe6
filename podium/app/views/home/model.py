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
from podium.store.write.demo import DEMO_TABLES, load_demo

DEMO_NAMES = (*DEMO_TABLES, DEMO_FUNCTIONS)
RECENT_JOBS = 5


def load_demo_tables() -> dict[str, bool]:
    """Write the demo tables and the demo functions: {table: created (else already
    there)}. `load_demo` checks the acting user's role."""
    return {**load_demo(), DEMO_FUNCTIONS: load_demo_functions()}


def demo_missing() -> list[str]:
    """Demo tables not in the catalog yet (Home offers to load them only then)."""
    return [name for name in DEMO_NAMES if not table_exists(name)]


@dataclass(frozen=True)
class HomeState:
    tables: list[str]  # datasets, samples and functions, newest first
    models: list[str]  # names; a partial checkpoint's says so ("x (partial: cancelled ...)")
    servers: list[str]  # 'smollm2 at http://127.0.0.1:8000/v1'
    jobs: list[Job] = field(default_factory=list)

    @property
    def summary(self) -> str:
        """'7 tables · 2 models · 1 model server running · 3 recent jobs'."""

        def count(n: int, noun: str) -> str:
            return f"{n:,} {noun}" + ("" if n == 1 else "s")

        return " · ".join(
            [
                count(len(self.tables), "table"),
                count(len(self.models), "model"),
                f"{count(len(self.servers), 'model server')} running",
                count(len(self.jobs), "recent job"),
            ]
        )


def home_state(user: str | None = None) -> HomeState:
    return HomeState(
        tables=[c.name for c in pick(table_choices(), groups=None)],
        models=[m.label for m in list_models()],
        servers=[f"{s.model} at {s.url}" for s in list_servers() if s.alive],
        jobs=list_jobs(limit=RECENT_JOBS, submitted_by=user),
    )
