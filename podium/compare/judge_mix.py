"""A judge's verdicts as votes, for ratings that mix them into people's when asked.

    podium compare ratings cmp.x --with-judge strict      # people + judge:strict

Ratings are people's alone by default; asked for, one judge's parsed verdicts on the
comparison join the human votes in the same Bradley-Terry fit, and the report keeps
the two counts apart. Unparsed verdicts are left out. A judge that judged the
comparison with several prompts must be named with its version (NAME@VERSION).
"""

from __future__ import annotations

from typing import Any

from podium.compare.judge import UNPARSED, list_verdicts, voter_of
from podium.compare.table import Comparison
from podium.errors import InvalidInput


def judges_of(comparison: Comparison) -> list[str]:
    """'NAME@VERSION' of every judge with verdicts on `comparison`, in first-run order."""
    seen = dict.fromkeys(
        f"{r['judge']}@{r['prompt_version']}" for r in list_verdicts(comparison.name)
    )
    return list(seen)


def judge_votes(comparison: Comparison, judge: str) -> tuple[str, list[dict[str, Any]]]:
    """('judge:NAME@VERSION', its parsed verdicts on `comparison` in the votes' shape)."""
    name, _, version = judge.partition("@")
    rows = [r for r in list_verdicts(comparison.name, name) if r["verdict"] != UNPARSED]
    versions = sorted({r["prompt_version"] for r in rows})
    if version:
        rows = [r for r in rows if r["prompt_version"] == version]
    elif len(versions) > 1:
        named = ", ".join(f"{name}@{v}" for v in versions)
        raise InvalidInput(
            f"Judge {name!r} judged {comparison.name} with several prompts: name one of {named}."
        )
    if not rows:
        known = ", ".join(judges_of(comparison)) or "none"
        raise InvalidInput(
            f"Judge {judge!r} has no parsed verdicts on {comparison.name} (judges with "
            f"verdicts: {known}); run `podium judge run --comparison {comparison.name} "
            f"--judge {name}` first."
        )
    label = f"{voter_of(name)}@{rows[0]['prompt_version']}"
    return label, [{**r, "voter": label} for r in rows]
