"""The failpoint actions themselves: `pause` holds a thread until the test releases it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from podium import failpoints

POINT = "commit.before"


@pytest.fixture(autouse=True)
def _fresh_counts() -> None:
    failpoints.reset()


def test_pause_announces_itself_and_waits_for_the_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(failpoints.ENV, f"{POINT}=pause")
    monkeypatch.setenv(failpoints.DIR_ENV, str(tmp_path))
    passed = threading.Event()
    worker = threading.Thread(target=lambda: (failpoints.hit(POINT), passed.set()), daemon=True)
    worker.start()
    deadline = time.monotonic() + 30
    while not (tmp_path / f"{POINT}.reached").exists():
        assert time.monotonic() < deadline, "the paused point never announced itself"
        time.sleep(0.01)
    assert not passed.wait(0.5), "a paused point went on before its release"
    (tmp_path / f"{POINT}.release").touch()
    assert passed.wait(30), "the released point never went on"


def test_pause_only_on_the_nth_hit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(failpoints.ENV, f"{POINT}=pause@2")
    monkeypatch.setenv(failpoints.DIR_ENV, str(tmp_path))
    failpoints.hit(POINT)  # the first hit passes at once
    assert not (tmp_path / f"{POINT}.reached").exists()


def test_pause_without_a_folder_says_what_it_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(failpoints.ENV, f"{POINT}=pause")
    monkeypatch.delenv(failpoints.DIR_ENV, raising=False)
    with pytest.raises(ValueError, match="PODIUM_FAILPOINTS_DIR"):
        failpoints.hit(POINT)


def test_an_unknown_action_names_the_ones_there_are(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(failpoints.ENV, f"{POINT}=wobble")
    with pytest.raises(ValueError, match="raise, kill, pause or sleep"):
        failpoints.hit(POINT)


def test_enospc_raises_what_a_full_disk_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from podium.errors import disk_full

    monkeypatch.setenv(failpoints.ENV, f"{POINT}=enospc@2")
    failpoints.hit(POINT)  # the first hit passes
    with pytest.raises(OSError) as raised:
        failpoints.hit(POINT)
    assert raised.value.errno == errno.ENOSPC and disk_full(raised.value)
