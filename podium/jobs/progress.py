"""How a job's progress reads, in one place for `podium jobs`, the tray and every page.

A job reports counts (`14` of `30` steps) and phases (`starting vLLM for smollm2`,
`evaluating`) through its Reporter; the row keeps the last count beside the current
message. These functions turn that row into text a person can read: done/total with a
percentage, the phase, and an estimate of the time left once a count has moved.

    progress_text(job)   # "14/30 (47%) · step 14 · about 3m20s left"
    progress_short(job)  # "14/30 47%"   (one column of `podium jobs`)
"""

from __future__ import annotations

from datetime import datetime

from podium.jobs.queue import Job, now


def progress_fraction(job: Job) -> float | None:
    """Done over total in [0, 1]; 1.0 once succeeded; None when there is no total."""
    if job["status"] == "succeeded":
        return 1.0
    done, total = job["progress_done"], job["progress_total"]
    if done is None or not total:
        return None
    fraction: float = done / total
    return min(1.0, max(0.0, fraction))


def count_text(job: Job, *, short: bool = False) -> str:
    """ "14/30 (47%)", "310" (a count without a total) or "" (no count yet); `short`:
    "14/30 47%", "310" or "-", for one column at 80 characters."""
    done, total = job["progress_done"], job["progress_total"]
    if done is None:
        return "-" if short else ""
    if not total:
        return f"{done:,}"
    percent = f"{min(done, total) / total:.0%}"
    return f"{done:,}/{total:,} " + (percent if short else f"({percent})")


def progress_short(job: Job) -> str:
    """ "14/30 47%", "310" or "-": short enough for one column at 80 characters."""
    return count_text(job, short=True)


def seconds_left(job: Job, at: datetime | None = None) -> float | None:
    """Time left for a running job whose count has moved: the rate when the count last
    moved (`progress_at`), counted down since. It never grows while a step runs; once
    the countdown is spent with no new count it is unknown (None), not a growing guess."""
    done, total, started = job["progress_done"], job["progress_total"], job["started_at"]
    if job["status"] != "running" or not done or not total or started is None or done >= total:
        return None
    at = at or now()
    moved = job.get("progress_at") or at  # rows written before the stamp existed
    per_unit = (moved - started).total_seconds() / done
    if per_unit <= 0:
        return None
    left = per_unit * (total - done) - max(0.0, (at - moved).total_seconds())
    return float(left) if left > 0 else None


def span_text(seconds: float) -> str:
    """ "45s", "3m20s", "1h05m"."""
    whole = int(round(seconds))
    if whole < 60:
        return f"{whole}s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def progress_text(job: Job, at: datetime | None = None) -> str:
    """The whole line: count, phase or message, time left; "-" when nothing is known."""
    parts = [count_text(job), (job["progress_message"] or "").strip()]
    left = seconds_left(job, at)
    if left is not None:
        parts.append(f"about {span_text(left)} left")
    return " · ".join(p for p in parts if p) or "-"
