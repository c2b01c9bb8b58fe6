"""What sandboxed code prints is what host Python prints for the same script."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from generators.sandbox import Job, Sandbox

TRICKY = textwrap.dedent(
    """
    import math, fractions, decimal, collections
    values = [
        0.1 + 0.2, 1e300 * 10, -0.0, float("nan"), 1 / 3, 2.5e-310, 123456789.123456789,
        {3, 1, 2}, frozenset({10, -1}), set(), {"b": 1, "a": [1, (2,)], 3: None},
        "héllo ☃ 𝄞 \\u200b\\t'\\"", b"\\x00\\xff'", 2 ** 200, -(3 ** 99), complex(1, -2),
        ValueError("bad", 1), KeyError("k"), ZeroDivisionError("division by zero"),
        fractions.Fraction(7, 21), decimal.Decimal("1.10"), collections.Counter("abca"),
        collections.OrderedDict(x=1), range(0, 10, 3), [[], {}, ()], True, None, ...,
        math.pi, math.inf,
    ]
    for value in values:
        print(repr(value))
    print(str(1 / 7), f"{2 ** 0.5:.10f}", sorted({5, 3, 4}))
    try:
        1 / 0
    except Exception as exc:
        print(type(exc).__name__, exc)
    """
)


def host_output(code: str, tmp_path: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    script = tmp_path / "main.py"
    script.write_text(code)
    return subprocess.run(
        [sys.executable, "-I", str(script)],
        input=stdin,
        capture_output=True,
        text=True,
        env={"LANG": "C.UTF-8"},
        cwd=tmp_path,
        timeout=60,
    )


def test_tricky_reprs_match_host_python(box: Sandbox, tmp_path: Path) -> None:
    expected = host_output(TRICKY, tmp_path)
    assert expected.returncode == 0, expected.stderr
    result = box.run(TRICKY)
    assert result.status == "ok", result
    assert result.stdout == expected.stdout


def test_exceptions_exit_codes_and_stdin_match_host_python(box: Sandbox, tmp_path: Path) -> None:
    cases = [
        ("import sys\nprint(sys.stdin.read().upper(), end='')\n", "ünïcode in\nline 2\n"),
        ("def f(x):\n    return {}[x]\nf('missing')\n", ""),
        ("import sys\nprint('partial')\nsys.exit(3)\n", ""),
        ("import sys\nsys.exit('fatal message')\n", ""),
        ("raise SystemExit\n", ""),
        ("import sys\nprint(sys.argv[1:], __name__, input())\n", "typed\n"),
    ]
    for code, stdin in cases:
        expected = host_output(code, tmp_path, stdin)
        result = box.run(code, stdin=stdin, args=() if "argv" not in code else ())
        assert result.stdout == expected.stdout, code
        assert result.exit_code == expected.returncode, code
        assert result.status == ("ok" if expected.returncode == 0 else "error"), code
        # Tracebacks name the same frames and end with the same exception line.
        assert result.stderr.splitlines()[-1:] == expected.stderr.splitlines()[-1:], code
        assert result.stderr.count("File ") == expected.stderr.count("File "), code


def test_arguments_reach_sys_argv(box: Sandbox) -> None:
    result = box.run("import sys\nprint(sys.argv[1:])\n", args=("a b", "--flag"))
    assert result.stdout == "['a b', '--flag']\n"


def test_run_many_keeps_order_and_uses_every_worker(box: Sandbox) -> None:
    # Each worker runs jobs as its own uid; a short sleep keeps both workers busy.
    jobs = [
        Job(f"import os, time\ntime.sleep(0.05)\nprint({i} * {i}, os.getuid())") for i in range(20)
    ]
    results = box.run_many(jobs)
    assert [r.stdout.split()[0] for r in results] == [str(i * i) for i in range(20)]
    assert all(r.status == "ok" for r in results)
    assert len({r.stdout.split()[1] for r in results}) == box.size


def test_string_set_reprs_are_reproducible_across_workers(box: Sandbox, tmp_path: Path) -> None:
    """The hash seed is fixed, so code-exec outputs of str sets/dicts never flip order."""
    code = "print({'apple', 'banana', 'cherry', 'date', 'elderberry'})\n"
    outputs = {r.stdout for r in box.run_many([Job(code) for _ in range(8)])}
    assert len(outputs) == 1
    script = tmp_path / "main.py"
    script.write_text(code)
    host = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        env={"PYTHONHASHSEED": "0"},
        timeout=60,
    )
    assert outputs == {host.stdout}
