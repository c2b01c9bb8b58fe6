"""The app's one process switches its threads (a session's script each) every 0.5 ms,
not Python's 5 ms: each message a script hands to the event loop drops the
interpreter's lock, and taking it back waited for the holder's switch. Measured with ten
protocol sessions in docs/faults.md; this checks the server module `streamlit run` loads
sets it."""

from __future__ import annotations

import subprocess
import sys

PROBE = "import sys, podium.app.server; print(sys.getswitchinterval())"


def test_the_app_server_switches_threads_every_half_millisecond() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert float(proc.stdout.split()[-1]) == 0.0005  # Python's default is 0.005
