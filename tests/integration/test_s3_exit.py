"""A command on an S3 warehouse lets go of every pyarrow S3 filesystem before pyarrow
shuts the AWS SDK down at exit (apache/arrow#41087: one still alive then aborts the
process, exit status -6, as CI saw twice on S3 reads). pyiceberg's FileIOs cache the
filesystems and sit in reference cycles with the tables and commits that used them, so
after an `import` 3-4 of them, holding 2-3 filesystems, were still alive when the
finalizer ran. The abort itself is rare (0 in 66 imports here), so the test counts what
is alive at that moment instead of waiting for one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from s3_store import s3_server  # type: ignore[import-not-found]

pytestmark = pytest.mark.integration

# Runs `podium ARGS` with pyarrow's S3 finalizer wrapped: when it runs, the FileIOs
# still alive and the filesystems they cache are printed, then it finalizes as before.
AT_FINALIZER = """
import atexit, gc, runpy, sys
import pyarrow.fs as pafs
atexit.unregister(pafs.ensure_s3_finalized)

def finalizer() -> None:
    from pyiceberg.io.pyarrow import PyArrowFileIO
    alive = [o for o in gc.get_objects() if isinstance(o, PyArrowFileIO)]
    cached = sum(io.fs_by_scheme.cache_info().currsize for io in alive)
    print(f"AT_FINALIZER fileios={len(alive)} filesystems={cached}", file=sys.stderr)
    pafs.ensure_s3_finalized()

atexit.register(finalizer)
sys.argv = ["podium", *sys.argv[1:]]
runpy.run_module("podium.cli", run_name="__main__")
"""


def test_an_import_on_s3_holds_no_s3_filesystem_when_pyarrow_finalizes(tmp_path: Path) -> None:
    source = tmp_path / "rows.jsonl"
    source.write_text(
        "".join(
            json.dumps({"id": f"r{i:03d}", "messages": [{"role": "user", "content": f"q {i}"}]})
            + "\n"
            for i in range(20)
        ),
        encoding="utf-8",
    )
    probe = tmp_path / "at_finalizer.py"
    probe.write_text(AT_FINALIZER, encoding="utf-8")
    with s3_server() as s3:
        env = {
            **os.environ,
            "PODIUM_HOME": str(tmp_path / "home"),
            "PODIUM_WAREHOUSE": f"s3://{s3.bucket}/warehouse",
            "PODIUM_CATALOG_PROPERTIES": json.dumps(s3.catalog_properties),
        }
        for table in ("exit.first", "exit.second"):  # a new table, then one more
            done = subprocess.run(
                [sys.executable, "-P", str(probe), "import", str(source), "--out", table],
                capture_output=True,
                text=True,
                env=env,
                timeout=300,
            )
            assert done.returncode == 0, done.stdout + done.stderr
            seen = [line for line in done.stderr.splitlines() if "AT_FINALIZER" in line]
            assert seen, done.stderr  # the finalizer ran, so the count below was taken
            assert seen[-1].endswith("filesystems=0"), seen
