"""How far a judge can be trusted on this comparison: agreement with people, biases.

Per judge (`podium judge agreement ID --json`, the Compare page):
- **agreement with the human majority**, over the pairs (prompt, two checkpoints) both
  people and the judge gave a verdict on: accuracy and Cohen's kappa over the three
  outcomes (first checkpoint better, second better, tie), with the number of shared
  pairs. The human majority of a pair is the outcome with most votes; a draw between
  outcomes is a tie. "Both bad" votes and unparsed verdicts are left out.
- **position consistency**: the share of parsed pairs whose two orders agreed (a flip
  counted as a tie), with the count of flips;
- **length**: mean characters of the answer it preferred and of the other one;
- **length-controlled win rate** of each checkpoint against the baseline (the first
  model of the comparison), AlpacaEval 2's idea kept small: a logistic regression of
  "checkpoint preferred" (a tie half each way) on the length difference in hundreds of
  characters; the win rate read at zero difference is sigmoid(intercept).
- **ratings** by people and by each judge: Bradley-Terry with bootstrap intervals
  (`podium.compare.ratings`);
- beside them, each rubric judge's **mean score per model** (`podium.compare.judge_scores`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from podium.compare.judge import UNPARSED
from podium.compare.ratings import bradley_terry, vote_tuples
from podium.compare.table import Comparison

LENGTH_UNIT = 100.0  # characters per unit of the length difference in the regression
Key = tuple[str, str, str]  # prompt id, first model, second model (comparison order)


def _outcome(comparison: Comparison, vote: dict[str, Any]) -> tuple[Key, str] | None:
    """(pair key, "first" | "second" | "tie") of a vote or verdict in comparison order."""
    verdict = vote["verdict"]
    if verdict not in ("A", "B", "tie"):
        return None
    a, b = vote["model_a"], vote["model_b"]
    order = comparison.models
    if a not in order or b not in order:
        return None
    first, second = (a, b) if order.index(a) < order.index(b) else (b, a)
    if verdict == "tie":
        return (vote["prompt_id"], first, second), "tie"
    winner = a if verdict == "A" else b
    return (vote["prompt_id"], first, second), ("first" if winner == first else "second")


def human_majority(comparison: Comparison, votes: Sequence[dict[str, Any]]) -> dict[Key, str]:
    """Each pair's majority outcome among people; a draw between outcomes is a tie."""
    tallies: dict[Key, Counter[str]] = {}
    for vote in votes:
        found = _outcome(comparison, vote)
        if found is not None:
            tallies.setdefault(found[0], Counter())[found[1]] += 1
    out: dict[Key, str] = {}
    for key, tally in tallies.items():
        (top, n), *rest = tally.most_common()
        out[key] = "tie" if rest and rest[0][1] == n else top
    return out


def judge_outcomes(comparison: Comparison, verdicts: Sequence[dict[str, Any]]) -> dict[Key, str]:
    """Each pair's latest parsed verdict by a judge."""
    out: dict[Key, str] = {}
    for verdict in verdicts:
        found = _outcome(comparison, verdict)
        if found is not None:
            out[found[0]] = found[1]
    return out


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's kappa of two label lists; None when it is undefined (chance agreement 1)."""
    from sklearn.metrics import cohen_kappa_score

    labels = sorted(set(a) | set(b))
    if len(labels) < 2:
        return None
    value = float(cohen_kappa_score(a, b, labels=labels))
    return None if np.isnan(value) else value


def lc_win_rate(length_diffs: Sequence[float], scores: Sequence[float]) -> float | None:
    """Win rate at zero length difference: logistic regression of the score (1 win, 0
    loss, 0.5 a tie as half of each) on the length difference; None without both a win
    and a loss."""
    from sklearn.linear_model import LogisticRegression

    if not scores or not (any(s > 0 for s in scores) and any(s < 1 for s in scores)):
        return None
    x = np.asarray(length_diffs, dtype=float) / LENGTH_UNIT
    s = np.asarray(scores, dtype=float)
    xs = np.concatenate([x, x]).reshape(-1, 1)
    ys = np.concatenate([np.ones_like(s), np.zeros_like(s)])
    weights = np.concatenate([s, 1.0 - s])
    keep = weights > 0
    model = LogisticRegression(C=1e6)  # practically unregularised: the plain MLE
    model.fit(xs[keep], ys[keep], sample_weight=weights[keep])
    return float(1.0 / (1.0 + np.exp(-model.intercept_[0])))


def _length(comparison: Comparison, prompt_id: str, model: str) -> int:
    return len(comparison.item(prompt_id).answer_of(model).text)


def win_rates(comparison: Comparison, outcomes: dict[Key, str]) -> dict[str, dict[str, Any]]:
    """Each checkpoint against the baseline (the first model): raw and length-controlled
    win rate (ties half), over how many pairs."""
    base = comparison.models[0]
    out: dict[str, dict[str, Any]] = {}
    for model in comparison.models[1:]:
        diffs, scores = [], []
        for (pid, first, second), outcome in outcomes.items():
            if (first, second) != (base, model):
                continue
            diffs.append(_length(comparison, pid, model) - _length(comparison, pid, base))
            scores.append({"second": 1.0, "first": 0.0, "tie": 0.5}[outcome])
        out[model] = {
            "baseline": base,
            "pairs": len(scores),
            "win_rate": sum(scores) / len(scores) if scores else None,
            "lc_win_rate": lc_win_rate(diffs, scores),
        }
    return out


def _ratings(comparison: Comparison, votes: Sequence[dict[str, Any]], bootstrap: int) -> Any:
    tuples = vote_tuples(comparison.models, votes)
    return [asdict(r) for r in bradley_terry(comparison.models, tuples, bootstrap)]


def judge_report(
    comparison: Comparison,
    human: dict[Key, str],
    verdicts: Sequence[dict[str, Any]],
    bootstrap: int,
) -> dict[str, Any]:
    """One judge's figures, each with the count it rests on."""
    outcomes = judge_outcomes(comparison, verdicts)
    shared = sorted(set(human) & set(outcomes))
    h, j = [human[k] for k in shared], [outcomes[k] for k in shared]
    parsed = [v for v in verdicts if v["verdict"] != UNPARSED]
    consistent = sum(bool(v["consistent"]) for v in parsed)
    preferred, other = [], []
    for key, outcome in outcomes.items():
        if outcome == "tie":
            continue
        pid, first, second = key
        win, lose = (first, second) if outcome == "first" else (second, first)
        preferred.append(_length(comparison, pid, win))
        other.append(_length(comparison, pid, lose))
    return {
        "verdicts": len(verdicts),
        "unparsed": len(verdicts) - len(parsed),
        "shared_pairs": len(shared),
        "accuracy": sum(a == b for a, b in zip(h, j, strict=True)) / len(shared)
        if shared
        else None,
        "kappa": cohen_kappa(h, j) if shared else None,
        "position_consistency": consistent / len(parsed) if parsed else None,
        "position_pairs": len(parsed),
        "flips": len(parsed) - consistent,
        "preferred_chars": float(np.mean(preferred)) if preferred else None,
        "other_chars": float(np.mean(other)) if other else None,
        "length_pairs": len(preferred),
        "win_rates": win_rates(comparison, outcomes),
        "ratings": _ratings(comparison, parsed, bootstrap),
    }


def agreement_report(
    comparison: Comparison,
    votes: Sequence[dict[str, Any]],
    verdicts: Sequence[dict[str, Any]],
    bootstrap: int = 200,
) -> dict[str, Any]:
    """Everything `podium judge agreement ID --json` prints and the Compare page shows:
    people's ratings and win rates, then per judge (and prompt version) its figures."""
    human = human_majority(comparison, votes)
    by_judge: dict[str, list[dict[str, Any]]] = {}
    for v in verdicts:
        by_judge.setdefault(f"{v['voter']}@{v['prompt_version']}", []).append(v)
    return {
        "comparison": comparison.name,
        "models": comparison.models,
        "people": {
            "votes": len(votes),
            "pairs": len(human),
            "win_rates": win_rates(comparison, human),
            "ratings": _ratings(comparison, votes, bootstrap),
        },
        "judges": {
            name: judge_report(comparison, human, rows, bootstrap)
            for name, rows in sorted(by_judge.items())
        },
    }


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def judge_line(name: str, r: dict[str, Any]) -> str:
    """One judge's figures in a line, each with the count it rests on."""
    return (
        f"{name}: accuracy {_fmt(r['accuracy'])}, kappa {_fmt(r['kappa'])} "
        f"({r['shared_pairs']} shared pairs) · position consistency "
        f"{_fmt(r['position_consistency'])} ({r['position_pairs']} pairs, {r['flips']} flips) "
        f"· unparsed {r['unparsed']} of {r['verdicts']} · preferred answers "
        f"{_fmt(r['preferred_chars'])} vs other {_fmt(r['other_chars'])} characters "
        f"({r['length_pairs']} pairs)"
    )


def win_rate_lines(report: dict[str, Any]) -> list[str]:
    """Raw and length-controlled win rates against the baseline, by people and judges."""
    who = {"people": report["people"], **report["judges"]}
    return [
        f"{name}: {model} vs {w['baseline']}: win rate {_fmt(w['win_rate'])}, "
        f"length-controlled {_fmt(w['lc_win_rate'])} ({w['pairs']} pairs)"
        for name, r in who.items()
        for model, w in r["win_rates"].items()
    ]


def comparison_agreement(comparison: Comparison, bootstrap: int = 200) -> dict[str, Any]:
    """`agreement_report` from the stored votes and verdicts; a clear error when there
    are neither."""
    from podium.compare.judge import list_verdicts
    from podium.compare.judge_scores import list_scores, mean_scores
    from podium.compare.votes import list_votes
    from podium.errors import InvalidInput

    votes, verdicts = list_votes(comparison.name), list_verdicts(comparison.name)
    scores = list_scores(comparison.name)
    if not votes and not verdicts and not scores:
        raise InvalidInput(
            f"Comparison {comparison.name} has no votes and no judge verdicts yet; vote on "
            f"the Compare page or run `podium judge run --comparison {comparison.name} "
            "--judge MODEL`."
        )
    report = agreement_report(comparison, votes, verdicts, bootstrap)
    report["rubric"] = mean_scores(comparison, scores)  # mean score per model, per judge
    return report
