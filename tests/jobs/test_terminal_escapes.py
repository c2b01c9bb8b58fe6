"""Escape sequences and bidi controls from data never reach the terminal (issue 38,
finding 10): a job's error and log, a JSON key or a file name in import progress printed
`\\x1b[2J` raw (the reader's screen cleared) and U+202E raw (`rtl-\\u202eexe.txt` read as
`rtl-txt.exe`). They are shown escaped, by one function every console writes through."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from jobs_helpers import podium

from podium.jobs.cards import parse_card
from podium.jobs.queue import create_job, get_job, transition
from podium.terminal_text import neutralise

EVIL = "boom \x1b[2J\x1b]8;;http://evil.example\x07link\x1b]8;;\x07 rtl-\u202eexe.txt \x9b31m"
RAW = ("\x1b[2J", "\x1b]", "\x07", "\u202e", "\x9b")
SHOWN = ("\\x1b[2J", "\\u202e", "\\u009b")


def _inert(text: str) -> None:
    for raw in RAW:
        assert raw not in text, (raw, text)


def test_neutralise_escapes_controls_and_bidi_but_keeps_text() -> None:
    assert neutralise("a\tb\nc") == "a\tb\nc"
    assert neutralise("\x1b[2J") == "\\x1b[2J"
    assert neutralise("x\u202ey\u2066z\u200f\x7f\x85") == "x\\u202ey\\u2066z\\u200f\\u007f\\u0085"
    assert neutralise("naïve 日本 عربى") == "naïve 日本 عربى"


def test_job_error_and_log_are_shown_escaped(jobs_home: Path) -> None:
    job_id = create_job(parse_card("---\nkind: test-steps\nsteps: 1\n---\n"))
    assert transition(job_id, "failed", when=("queued",), error=EVIL)
    Path(get_job(job_id)["log_path"]).write_text(f"step 1\n{EVIL}\n")
    for args in (("jobs", "show", job_id), ("jobs", "logs", job_id), ("jobs", "watch", job_id)):
        proc = podium(*args, check=False)
        assert "Traceback" not in proc.stderr, proc.stderr
        _inert(proc.stdout + proc.stderr)
        assert all(s in proc.stdout + proc.stderr for s in SHOWN), proc.stdout + proc.stderr
    shown = podium("jobs", "show", job_id, "--json").stdout
    assert json.loads(shown)["error"] == EVIL  # JSON stays exact: the escapes are JSON's
    _inert(shown)


def _on_a_terminal(args: list[str], env: dict[str, str]) -> str:
    """Run the CLI with a pseudo-terminal as stdout and stderr (rich draws its live
    progress bar only on a terminal); everything it wrote."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(args, stdout=follower, stderr=follower, env=env, close_fds=True)
    os.close(follower)
    out = b""
    deadline = time.monotonic() + 120
    # poll, not select: select() refuses a descriptor past 1024, which a long-lived test
    # worker's can be
    watch = select.poll()
    watch.register(leader, select.POLLIN)
    while time.monotonic() < deadline:
        if watch.poll(500):
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the process is done
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    proc.wait(timeout=60)
    os.close(leader)
    return out.decode(errors="replace")


def test_import_progress_shows_file_names_and_keys_escaped(
    podium_home: Path, tmp_path: Path
) -> None:
    evil_name = tmp_path / "rtl-\u202elnosj.\x1b[2Jx.jsonl"
    row = {"messages": [{"role": "user", "content": "hi"}], "\x1b[2Jkey\u202e": 1}
    evil_name.write_text(json.dumps(row) + "\n")
    bad = tmp_path / "bad.jsonl"  # its error names the keys it found
    bad.write_text(json.dumps({"conversations\x1b[2J\u202e": [{"from": "human"}]}) + "\n")
    # A pause at the commit: the bar is drawn while it still names the file.
    env = dict(os.environ, PODIUM_FAILPOINTS="commit.before=sleep(1.5)", COLUMNS="200")
    cli = [sys.executable, "-m", "podium.cli", "import"]
    out = _on_a_terminal([*cli, str(evil_name), "--table", "ns.evil"], env)
    assert "importing rtl-\\u202elnosj.\\x1b[2Jx.jsonl" in out, out
    failed = _on_a_terminal([*cli, str(bad), "--table", "ns.bad"], env)
    assert "conversations\\x1b[2J\\u202e" in failed, failed
    for text in (out, failed):
        assert "\x1b[2J" not in text and "\u202e" not in text and "\x1b]" not in text


def test_every_console_is_a_neutralising_one() -> None:
    """One function for every terminal print path: no module builds its own rich Console."""
    root = Path(__file__).resolve().parents[2] / "podium"
    builders = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if "app" not in path.relative_to(root).parts[:1]
        and path.name != "terminal_text.py"
        and ("Console(" in path.read_text().replace("safe_console(", ""))
    ]
    assert builders == [], "use podium.terminal_text.safe_console in: " + ", ".join(builders)
