"""One verb for submitting a job on every page that starts one (before: "Run here",
"Start comparison", "Launch", "Queue for the worker" for the same act)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from generators.code_exec.demo_functions import load_demo_functions
from podium.app.forms import QUEUE_VERB
from podium.models import register_model
from podium.store.write.demo import DEMO_TABLES

MAIN = str(Path(__file__).resolve().parents[2] / "podium" / "app" / "main.py")
JOB_PAGES = ("validate", "generate", "build", "train")
OTHER_VERBS = ("run here", "launch", "start", "queue for", "generate", "run validation")


def test_every_job_page_submits_with_queue_job(podium_home: Path, tmp_path: Path) -> None:
    DEMO_TABLES["demo.json_sft"]()
    load_demo_functions()
    (tmp_path / "m").mkdir()
    register_model("m", kind="base", path=str(tmp_path / "m"), is_default=True)
    at = AppTest.from_file(MAIN, default_timeout=60)
    at.run()
    for page in JOB_PAGES:
        at.switch_page(f"views/{page}/view.py").run()
        assert not at.exception, (page, at.exception)
        labels = [b.proto.label for b in at.button]
        assert QUEUE_VERB in labels, (page, labels)
        assert not [x for x in labels if x.lower().startswith(OTHER_VERBS)], (page, labels)
    at.switch_page("views/compare/view.py").run()
    at.radio(key="compare.mode").set_value("New comparison").run()
    assert QUEUE_VERB in [b.proto.label for b in at.button]


def test_an_error_shows_its_whole_first_paragraph_and_folds_the_rest() -> None:
    from podium.app.feedback import error_parts

    settings = "Invalid 'generate' settings:\n  n (--n): must be >= 1 (got 0)"
    assert error_parts(settings) == (settings, "")
    head, details = error_parts(f"{settings}\n\nTraceback (most recent call last):\n  ...")
    assert head == settings and details.startswith("Traceback")
