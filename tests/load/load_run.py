"""Load on one `podium up`: concurrent sessions, and a deep job queue.

    python tests/load/load_run.py --rows 200000 --sessions 10 --seconds 180 --jobs 200

(that is `make load`; CI runs tests/load/test_load.py, the same code at a small size).

Sessions, in two modes against the same `podium up` (`--mode`, both by default), each a
seeded loop of page changes, searches, sample openings and labels on one table built from
benchmarks/real_size.py's rows (~7 KiB each):
- protocol: each session one WebSocket speaking Streamlit's own protocol
  (tests/load/protocol_sessions.py): the server's cost of N reviewers, whose browsers run
  on their own machines. A page change is timed from sending the page box's value until
  that run finished with the new "Rows a–b of n" caption and its rows.
- browser: N real Chromium tabs (Playwright, Debian's chromium) on this machine, beside
  the server. A page change is timed from the Enter in the page box to the new caption.
  Every step waits until the run that answers it has drawn (the URL Browse writes as a
  run's last step).
Each step then checks that no error or exception is shown. In each mode the lone session
runs first, alone, for the baseline; RSS is the sum over the `podium up` process group
(app and its worker), sampled.

Queue: `jobs` small export jobs submitted at once to two `podium worker` processes;
each must succeed exactly once (one claim, attempt 1, its file written once).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pyarrow as pa

from podium.app.rows.view_state import DEFAULT_PAGE_SIZE

# `python -P tests/load/load_run.py` (make load) puts no script folder on the path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import protocol_sessions  # noqa: E402
from session_mix import MIX, TABLE, WORDS, SessionResult  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _real_size() -> Any:
    spec = importlib.util.spec_from_file_location("real_size", REPO / "benchmarks/real_size.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["real_size"] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def podium(env: dict[str, str], *args: str, timeout: float = 3600) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "podium.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"podium {' '.join(args)}: {proc.stderr[-2000:]}")
    return proc.stdout


def build_table(env: dict[str, str], rows: int) -> None:
    """Import `rows` rows of benchmarks/real_size.py's generator (cached JSONL)."""
    real_size = _real_size()
    path = real_size.make_jsonl(rows, 0, real_size.CACHE)
    uploads = Path(env["PODIUM_HOME"]) / "uploads"
    uploads.mkdir(parents=True, exist_ok=True)
    podium(env, "import", str(path), "--table", TABLE)


# --- the server and its memory ----------------------------------------------------------
@dataclass
class RssSampler:
    """Peak summed RSS of a process group, sampled every `every` seconds in a thread."""

    pgid: int
    every: float = 0.5
    peak: int = 0
    samples: list[int] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def __enter__(self) -> RssSampler:
        threading.Thread(target=self._run, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            total = 0
            for proc in psutil.process_iter(["pid"]):
                try:
                    if os.getpgid(proc.pid) == self.pgid:
                        total += proc.memory_info().rss
                except (psutil.Error, ProcessLookupError):
                    continue
            self.samples.append(total)
            self.peak = max(self.peak, total)


def cpu_seconds_by_process(pgid: int) -> dict[int, tuple[float, list[str]]]:
    """User + system CPU seconds and the command line of each live process in a process
    group, by pid (the app and its worker live as long as the run, so a difference is
    the run's)."""
    found = {}
    for proc in psutil.process_iter(["pid", "cmdline"]):
        try:
            if os.getpgid(proc.pid) == pgid:
                times = proc.cpu_times()
                found[proc.pid] = (times.user + times.system, proc.info["cmdline"] or [])
        except (psutil.Error, ProcessLookupError):
            continue
    return found


def app_cpu_seconds(pgid: int) -> dict[int, float]:
    """CPU seconds of each Streamlit process in the group, by pid: with more than one
    app process, a difference shows how the proxy spread the sessions."""
    return {
        pid: cpu
        for pid, (cpu, cmdline) in cpu_seconds_by_process(pgid).items()
        if "streamlit" in cmdline
    }


def group_cpu_seconds(pgid: int) -> float:
    """User + system CPU seconds of the live processes in a process group."""
    return sum(cpu for cpu, _ in cpu_seconds_by_process(pgid).values())


# --- one browser session -----------------------------------------------------------------
ANY = "*"  # a URL parameter that must be there, whatever its value

# True once no run is going and the URL holds `want` ({param: value, ANY, or None for
# absent}). Browse rewrites its URL as the last step of every run, so the URL a run
# wrote is the sign that the run answering an action has drawn.
_DRAWN = """(want) => {
  const app = document.querySelector('[data-testid="stApp"]');
  const query = new URLSearchParams(location.search);
  return app !== null && app.getAttribute("data-test-script-state") === "notRunning"
    && Object.entries(want).every(([k, v]) => v === "*" ? query.has(k) : query.get(k) === v);
}"""


async def _drawn(tab: Any, **want: str | None) -> None:
    """Wait until the run that answers the last action has drawn: Browse's URL holds
    `want` and no run is going. Not Streamlit's status widget: the app's minimal toolbar
    never shows it, so waiting for it was a one-second sleep, and the next action could
    act on the page the run before drew (a search of no rows not yet applied left its
    stale caption and page count, and the page typed there never showed: seed 7)."""
    await tab.wait_for_function(_DRAWN, arg=want, polling=100, timeout=120_000)


async def _shown_errors(page: Any) -> list[str]:
    """The page's error boxes, those inside a closed expander too: their text is read
    from the DOM (`text_content`), since a hidden box has no rendered text (CI's report
    once listed two errors and nothing of what they said)."""
    found = []
    for test_id in ("stException", "stAlertContentError"):
        loc = page.get_by_test_id(test_id)
        if await loc.count():
            shown = "" if await loc.first.is_visible() else " (hidden)"
            text = " ".join((await loc.first.text_content() or "").split())
            found.append(f"{test_id}{shown}: {text[:300]}")
    return found


async def session(
    browser: Any, url: str, seed: int, seconds: float, base_seed: int = 0
) -> SessionResult:
    """One person's seeded loop over the table until `seconds` have passed (session
    `seed` of a run seeded `base_seed`)."""
    rng = random.Random(base_seed * 1000 + seed)
    result = SessionResult()
    context = await browser.new_context(viewport={"width": 1440, "height": 1000})
    context.set_default_timeout(120_000)
    page = await context.new_page()
    deadline = time.monotonic() + seconds
    action = "open"
    turn = seed  # each session starts at its own point of the mix
    # At least the mix's first three steps (a label and two page changes), however slow
    # the machine, so every session measures something.
    while time.monotonic() < deadline or turn - seed < 3:
        try:
            if action == "open":
                await _open(page, url, rng, result)
            # A fixed mix (mostly page changes), each session starting at a seeded point.
            action, turn = MIX[turn % len(MIX)], turn + 1
            await ACTIONS[action](page, url, rng, result)
            result.errors += await _shown_errors(page)
        except Exception as exc:  # noqa: BLE001 - a timeout or a missing widget is a failure
            result.errors.append(f"{action}: {type(exc).__name__}: {str(exc)[:300]}")
            result.actions[action] = result.actions.get(action, 0) + 1
            action = "open"  # start over from the table's first page
            continue
        result.actions[action] = result.actions.get(action, 0) + 1
    await context.close()
    return result


async def _page_count(box: Any) -> int:
    label = await box.get_attribute("aria-label") or ""
    return int(re.sub(r"\D", "", label.split("of", 1)[1]) or "1")


async def _type_page(page: Any, box: Any, target: int) -> Any:
    """Type page `target` into the box; the caption that shows it arrived."""
    first = (target - 1) * DEFAULT_PAGE_SIZE + 1
    shown = page.get_by_text(re.compile(f"^Rows {first:,}–")).first
    await box.fill(str(target))
    await box.press("Enter")
    return shown


async def _page(page: Any, url: str, rng: random.Random, result: SessionResult) -> None:
    """Go to a random page; timed until the caption shows that page's first row."""
    if not await page.get_by_text(re.compile(r"^Rows [\d,]+–")).count():
        await _open(page, url, rng, result)  # a search matched nothing: no pages to change
    box = page.get_by_label(re.compile(r"^Page \(of "))
    target = rng.randint(1, max(1, await _page_count(box)))
    started = time.perf_counter()
    shown = await _type_page(page, box, target)
    try:
        await shown.wait_for(timeout=60_000)
    except Exception:  # noqa: BLE001 - the typed page did not take: counted, typed again
        result.lost_inputs += 1
        await _drawn(page)
        shown = await _type_page(page, box, target)
        await shown.wait_for(timeout=120_000)
    await _drawn(page, page=str(target) if target > 1 else None)
    result.page_changes.append(time.perf_counter() - started)


async def _open(page: Any, url: str, rng: random.Random, result: SessionResult) -> None:
    await page.goto(f"{url}/browse?table={TABLE}")
    await _drawn(page, snapshot=ANY, sample=None)  # the run's end names the snapshot


async def _search(page: Any, url: str, rng: random.Random, result: SessionResult) -> None:
    box = page.get_by_label("Search messages")
    text = rng.choice(WORDS) if rng.random() < 0.7 else ""
    await box.fill(text)
    await box.press("Enter")
    await _drawn(page, search=text or None)


async def _sample(page: Any, url: str, rng: random.Random, result: SessionResult) -> None:
    row = f"row-{rng.randrange(0, 1000):08d}"
    await page.goto(f"{url}/browse?table={TABLE}&sample={row}")
    await _drawn(page, snapshot=ANY, sample=row)


async def _label(page: Any, url: str, rng: random.Random, result: SessionResult) -> None:
    await _sample(page, url, rng, result)
    buttons = page.get_by_role("button", name=re.compile(r"^\d (good|bad)$"))
    await buttons.first.wait_for()
    await buttons.nth(rng.randrange(await buttons.count())).click()
    await page.get_by_text(re.compile(r"^Labelled 1 row")).first.wait_for()
    await _drawn(page)
    await _open(page, url, rng, result)


ACTIONS = {"page": _page, "search": _search, "sample": _sample, "label": _label}


async def sessions(url: str, count: int, seconds: float, seed: int) -> list[SessionResult]:
    from playwright.async_api import async_playwright

    executable = shutil.which("chromium")
    if executable is None:
        raise RuntimeError("Debian's chromium is not installed: apt-get install -y chromium")
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        try:
            return list(
                await asyncio.gather(
                    *(session(browser, url, i, seconds, seed) for i in range(count))
                )
            )
        finally:
            await browser.close()


def p95(values: list[float]) -> float:
    if not values:
        return float("nan")
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=20, method="inclusive")[18]


MODES = ("protocol", "browser")  # the order a run measures them in


def run_sessions(
    url: str,
    server_pgid: int,
    count: int,
    seconds: float,
    seed: int,
    mode: str = "browser",
    think: float = 0.0,
) -> dict[str, Any]:
    """`count` sessions for `seconds` in `mode`: Chromium tabs ("browser") or Streamlit's
    protocol spoken directly ("protocol", tests/load/protocol_sessions.py)."""
    load_before = os.getloadavg()[0]
    cpu_before, started = group_cpu_seconds(server_pgid), time.monotonic()
    apps_before = app_cpu_seconds(server_pgid)
    with RssSampler(server_pgid) as rss:
        if mode == "protocol":
            results = asyncio.run(
                protocol_sessions.sessions(url, TABLE, count, seconds, seed, think)
            )
        else:
            results = asyncio.run(sessions(url, count, seconds, seed))
    server_cpu = group_cpu_seconds(server_pgid) - cpu_before
    apps_after = app_cpu_seconds(server_pgid)
    app_cpu = [round(apps_after[pid] - apps_before.get(pid, 0.0), 2) for pid in sorted(apps_after)]
    wall = time.monotonic() - started
    changes = [t for r in results for t in r.page_changes]
    actions: dict[str, int] = {}
    for r in results:
        for k, v in r.actions.items():
            actions[k] = actions.get(k, 0) + v
    return {
        "sessions": count,
        "seconds": seconds,
        "page_changes": len(changes),
        "p50_s": round(statistics.median(changes), 3) if changes else None,
        "p95_s": round(p95(changes), 3),
        "peak_rss_mb": round(rss.peak / 2**20),
        # Cores the server used: near 2 on this machine's 2 cores, it is what limits.
        "server_cores": round(server_cpu / wall, 2),
        "app_process_cpu_s": app_cpu,
        # The machine's 1-minute load average before and after: figures from a busy
        # machine are only comparable within one run.
        "load_average": [round(load_before, 1), round(os.getloadavg()[0], 1)],
        "actions": actions,
        "lost_inputs": sum(r.lost_inputs for r in results),
        "errors": [e for r in results for e in r.errors],
    }


# --- the queue ---------------------------------------------------------------------------
def run_queue(env: dict[str, str], jobs: int, workers: int = 2) -> dict[str, Any]:
    """Submit `jobs` small exports at once, drain them with `workers` workers."""
    from podium.jobs.cards import parse_card
    from podium.jobs.launch import submit
    from podium.jobs.queue import get_job
    from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
    from podium.store.write.write import write_table

    rows = [
        {"id": f"s{i}", "messages": [{"role": "user", "content": f"question {i}"}], "tags": []}
        for i in range(20)
    ]
    small = pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA)
    write_table("load.small", small, schema=SFT_SCHEMA)
    ids = [
        submit(
            parse_card(f"---\nkind: export\ninput: {{name: load.small}}\npath: q/{i}.jsonl\n---\n")
        )
        for i in range(jobs)
    ]
    started = time.monotonic()
    procs = []
    home = Path(env["PODIUM_HOME"])
    for w in range(workers):
        log = (home / f"load-worker-{w}.log").open("wb")
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "podium.cli", "worker", "--once", "--poll", "0.2"],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
            )
        )
    for proc in procs:
        proc.wait(timeout=3600)
    seconds = time.monotonic() - started
    records = [get_job(i) for i in ids]
    problems = []
    for job in records:
        claims = _claims(job["id"])
        if job["status"] != "succeeded" or job["attempt"] != 1 or claims != 1:
            problems.append(f"{job['id']}: {job['status']}, attempt {job['attempt']}, {claims}")
    files = list((home / "exports" / "q").glob("*.jsonl"))
    if len(files) != jobs:
        problems.append(f"{len(files)} export files for {jobs} jobs")
    by_worker: dict[int, int] = {}
    for job in records:
        by_worker[job["worker_pid"] or 0] = by_worker.get(job["worker_pid"] or 0, 0) + 1
    return {
        "jobs": jobs,
        "workers": workers,
        "seconds": round(seconds, 1),
        "jobs_per_worker": sorted(by_worker.values()),
        "problems": problems,
    }


def _claims(job_id: str) -> int:
    from sqlalchemy import func, select

    from podium.jobs.tables import db, job_events

    with db().connect() as conn:
        query = select(func.count()).where(
            job_events.c.job_id == job_id, job_events.c.status == "running"
        )
        return int(conn.execute(query).scalar() or 0)


# --- the whole run -----------------------------------------------------------------------
def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_healthy(url: str, proc: subprocess.Popen[bytes], timeout: float = 180) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"podium up exited with {proc.returncode}")
        try:
            if httpx.get(f"{url}/_stcore/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{url} not healthy after {timeout:.0f} s")


def stop_server(up: subprocess.Popen[bytes]) -> None:
    """SIGTERM `podium up`'s process group (app and worker); SIGKILL after a minute."""
    os.killpg(up.pid, 15)
    try:
        up.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(up.pid, 9)
        up.wait()


def profiled(pid: int, out: Path | None) -> subprocess.Popen[bytes] | None:
    """py-spy sampling `podium up` (`pid`) and its children into `out` (speedscope JSON),
    or None without `out`; stopped with SIGINT, on which py-spy writes the file."""
    if out is None:
        return None
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    out.parent.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [spy, "record", "--pid", str(pid), "--subprocesses", "--rate", "20", "--nonblocking"]
        + ["--format", "speedscope", "--output", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def stop_profile(spy: subprocess.Popen[bytes] | None) -> None:
    if spy is not None:
        spy.send_signal(2)
        try:
            spy.wait(timeout=120)
        except subprocess.TimeoutExpired:
            spy.kill()
            spy.wait()


def run(
    home: Path,
    rows: int,
    count: int,
    seconds: float,
    lone_seconds: float,
    jobs: int,
    seed: int,
    profile: Path | None = None,
    modes: tuple[str, ...] = MODES,
    think: float = 0.0,
    app_processes: int = 1,
) -> dict[str, Any]:
    """The whole load run in `home`, which must already be this process's PODIUM_HOME:
    one session alone, then `count` at once, in each of `modes` against the same server;
    `profile`: where py-spy writes a profile of `podium up` during each concurrent run
    (NAME-protocol.json, NAME-browser.json); `think`: the protocol sessions' mean pause
    after each action (none by default: every session asks as fast as it is answered);
    `app_processes`: `podium up --app-processes`, the Streamlit processes behind its URL."""
    assert os.environ.get("PODIUM_HOME") == str(home), "point PODIUM_HOME at the home first"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    t0 = time.monotonic()
    if not (home / "catalog.db").exists():  # `--reuse-home` keeps a table built before
        build_table(env, rows)
    report: dict[str, Any] = {
        "rows": rows,
        "build_s": round(time.monotonic() - t0),
        "app_processes": app_processes,
    }
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = (home / "podium-up.log").open("wb")
    up = subprocess.Popen(
        [sys.executable, "-m", "podium.cli", "up", "--host", "127.0.0.1", "--port", str(port)]
        + ["--app-processes", str(app_processes)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    try:
        wait_healthy(url, up)
        for mode in (m for m in MODES if m in modes):
            lone = run_sessions(url, up.pid, 1, lone_seconds, seed, mode, think)
            out = profile.with_name(f"{profile.stem}-{mode}{profile.suffix}") if profile else None
            spy = profiled(up.pid, out)
            try:
                many = run_sessions(url, up.pid, count, seconds, seed + 100, mode, think)
            finally:
                stop_profile(spy)
            ratio = round(many["p95_s"] / lone["p95_s"], 2) if lone["p95_s"] else None
            report[mode] = {"lone": lone, "concurrent": many, "p95_ratio": ratio}
            if mode == "protocol":
                report[mode]["think_s"] = think
    finally:
        stop_server(up)
    report["queue"] = run_queue(env, jobs) if jobs else {"jobs": 0, "problems": []}
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=180)
    parser.add_argument("--lone-seconds", type=float, default=60)
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--profile", type=Path, help="py-spy profile of `podium up` in the concurrent run here."
    )
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="Protocol sessions: mean seconds a reviewer reads before the next action.",
    )
    parser.add_argument(
        "--app-processes",
        type=int,
        default=1,
        help="`podium up --app-processes`: Streamlit processes behind the one URL.",
    )
    parser.add_argument(
        "--mode",
        choices=(*MODES, "both"),
        default="both",
        help="Sessions as Chromium tabs, as Streamlit's protocol spoken directly, or both.",
    )
    parser.add_argument("--home", type=Path, default=REPO / ".cache" / "load-home")
    parser.add_argument("--out", type=Path, default=REPO / "test-artifacts" / "load.json")
    parser.add_argument(
        "--reuse-home", action="store_true", help="Keep --home's table (skip the import)."
    )
    args = parser.parse_args()
    if args.home.exists() and not args.reuse_home:
        shutil.rmtree(args.home)
    args.home.mkdir(parents=True, exist_ok=True)
    os.environ["PODIUM_HOME"] = str(args.home)
    report = run(
        args.home,
        args.rows,
        args.sessions,
        args.seconds,
        args.lone_seconds,
        args.jobs,
        args.seed,
        args.profile,
        MODES if args.mode == "both" else (args.mode,),
        args.think,
        args.app_processes,
    )
    args.out.parent.mkdir(exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))
    sessions_run = [
        report[m][k]["errors"] for m in MODES if m in report for k in ("lone", "concurrent")
    ]
    failed = any(sessions_run) or bool(report["queue"]["problems"])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
