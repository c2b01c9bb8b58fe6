"""The Compare page with AppTest: side by side with filters, blind votes, ratings."""

from __future__ import annotations

import getpass
from html import unescape
from pathlib import Path

import compare_data
from streamlit.testing.v1 import AppTest

from podium.compare.votes import list_votes
from podium.identity import User

compare_config = compare_data.compare_config  # fixtures
comparison = compare_data.comparison
ME = getpass.getuser()  # local mode: the OS user votes, not a typed name
MAIN = str(Path(__file__).resolve().parents[2] / "podium" / "app" / "main.py")


def reviewer(name: str) -> User:
    return User(name=name, role="reviewer", source="oidc")


def _open(mode: str | None = None, **params: str) -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=60)
    at.run()
    at.switch_page("views/compare/view.py")
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    if mode:
        at.radio(key="compare.mode").set_value(mode).run()
    assert not at.exception, at.exception
    return at


def _texts(at: AppTest) -> str:
    """Everything the page shows as text: markdown, captions, alerts, HTML blocks."""
    parts = [e.value for e in [*at.markdown, *at.caption, *at.success, *at.info, *at.title]]
    parts += [e.proto.body for e in at.get("html")]
    parts += [b.label for b in at.button]
    return "\n".join(str(p) for p in parts)


def test_side_by_side_highlights_differences_and_filters(comparison):
    at = _open(name="cmp.colours")
    assert at.selectbox(key="compare.name").value == "cmp.colours"
    page = _texts(at)
    assert "#### alpha" in page and "#### omega" in page
    assert "prompt 1 of 4" in page
    assert 'class="podium-diff"' in page  # p0's answers differ by a comma
    assert ":red[✗] json" in page and ":green[✓] json" in page
    at.checkbox(key="compare.differ").check().run()
    assert "prompt 1 of 3" in _texts(at)  # p1's answers are identical
    at.checkbox(key="compare.differ").uncheck().run()
    at.selectbox(key="compare.fails").set_value("alpha").run()
    assert "prompt 1 of 1" in _texts(at)  # alpha fails only the code prompt (not JSON)
    assert "p2" in _texts(at)
    at.selectbox(key="compare.fails").set_value("omega").run()
    assert "prompt 1 of 3" in _texts(at)
    at.button(key="compare.pos.next").click().run()
    assert "prompt 2 of 3" in _texts(at)


def test_blind_vote_hides_names_until_the_vote_then_reveals(comparison):
    at = _open("Blind vote", name="cmp.colours")
    before = _texts(at)
    assert "A is better" in before and "#### A" in before and "#### B" in before
    for name in ("alpha", "omega"):  # no checkpoint name anywhere before the vote
        assert name not in before, name
    at.text_input(key=f"compare.note.{comparison.items[0].prompt_id}").set_value("terse").run()
    at.button(key="compare.vote.B").click().run()
    assert not at.exception, at.exception
    (vote,) = list_votes("cmp.colours")
    assert vote["voter"] == ME and vote["verdict"] == "B" and vote["note"] == "terse"
    after = _texts(at)
    assert f"A was **{vote['model_a']}**, B was **{vote['model_b']}**" in after
    assert f"#### B · {vote['model_b']}" in after
    at.checkbox(key="compare.todo").check().run()
    assert f"1 of 4 prompts voted by {ME}" in _texts(at)
    assert not any(name in _texts(at) for name in ("alpha", "omega"))


def test_both_bad_goes_to_vibes_in_one_click(comparison):
    from generators.vibes import list_vibes

    at = _open("Blind vote", name="cmp.colours")
    at.button(key="compare.vote.both_bad").click().run()
    at.button(key="compare.vibes").click().run()
    (vibe,) = list_vibes(tags=["both-bad"])
    assert vibe["prompt"] == comparison.items[0].prompt_text and vibe["submitter"] == ME


def test_ratings_change_with_votes(comparison):
    at = _open("Ratings", name="cmp.colours")
    before = _texts(at)
    assert "**0 votes**" in before
    # Before: "1000 (95% 1000 to 1000)" and "None" cells with zero votes.
    assert "1000 to 1000" not in before and "**alpha**: no votes yet" in before
    cells = [str(v) for frame in at.dataframe for v in frame.value.to_numpy().ravel()]
    assert cells and "None" not in cells and "nan" not in cells, cells
    from podium.compare.votes import blind_pair, cast_vote

    for item in comparison.items:
        pair = blind_pair(comparison, item, "bob")
        cast_vote(comparison, pair, "A" if pair.model_a == "alpha" else "B", reviewer("bob"))
    at.run()
    page = unescape(_texts(at))  # model names are data, escaped on the page
    # The counts name the models: A and B are shuffled per prompt, so "A is better"
    # says nothing.
    assert "**4 votes** · alpha better: 4 · omega better: 0 · tie: 0 · both bad: 0" in page
    assert not any("A is better" in m.value for m in at.markdown)
    assert "sampling {" not in page and "'" not in next(
        c.value for c in at.caption if "sampling" in c.value
    )
    first = next(m for m in at.markdown if m.value.startswith("**alpha**"))
    assert "4 votes" in first.value and "checks passed 75%" in first.value
    assert page.index("**alpha**:") < page.index("**omega**:")  # best first


def test_new_comparison_from_train_page_link_queues_a_job(compare_config):
    from podium.jobs.queue import list_jobs

    at = _open(models="alpha,omega")
    assert at.radio(key="compare.mode").value == "New comparison"
    assert at.multiselect(key="compare.new.models").value == ["alpha", "omega"]
    at.selectbox(key="compare.new.table").set_value("evals.colours").run()
    assert at.text_input(key="compare.new.job.out").value == "cmp.colours__alpha_vs_omega"
    at.text_input(key="compare.new.job.out").set_value("cmp.from_page")
    at.button(key="FormSubmitter:compare.new.job-Queue job").click().run()
    assert not at.error, [e.value for e in at.error]
    (job,) = [j for j in list_jobs() if j["kind"] == "compare"]
    assert job["status"] == "queued" and '"cmp.from_page"' in job["config"]


def test_sampling_reads_as_words_and_the_chart_keeps_whole_names() -> None:
    from podium.app.views.compare import model as cm

    text = cm.sampling_text({"temperature": 0.7, "max_tokens": 256, "stop": ["\n"], "seed": None})
    assert text == "temperature 0.7 · max tokens 256 · stop \n"
    report = {
        "ratings": [
            {"model": m, "rating": 1000.0, "low": 990.0, "high": 1010.0, "votes": 2, "wins": 1}
            for m in ("smollm2-135m-instruct", "smollm2-135m-instruct-sft")
        ],
        "pass_rates": {
            m: {"all": None} for m in ("smollm2-135m-instruct", "smollm2-135m-instruct-sft")
        },
    }
    spec = cm.ratings_chart(report).to_dict()
    assert spec["layer"][0]["encoding"]["y"]["axis"]["labelLimit"] == 0
