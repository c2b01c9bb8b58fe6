"""A replica samples from the distribution the learner models: the plain softmax at the
request's temperature. vLLM would otherwise apply a checkpoint's generation_config.json
(top_k, top_p, repetition_penalty) to requests that leave those out, and its processed
log-probs would follow them, biasing every importance weight."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from podium.config import reset_settings
from podium.errors import PodiumError
from trainers.async_rl.replica import PolicyReplica, completion_body


def test_a_rollout_request_pins_every_sampling_parameter() -> None:
    body = completion_body("m", [[1, 2, 3]], n=4, max_tokens=8, temperature=0.7, seed=3)
    assert body["temperature"] == 0.7 and body["n"] == 4 and body["seed"] == 3
    pinned = {k: body[k] for k in ("top_k", "top_p", "min_p", "repetition_penalty")}
    assert pinned == {"top_k": 0, "top_p": 1.0, "min_p": 0.0, "repetition_penalty": 1.0}
    assert body["presence_penalty"] == body["frequency_penalty"] == 0.0
    assert "seed" not in completion_body("m", ["hi"], n=1, max_tokens=8, temperature=1.0, seed=None)


def test_the_replica_server_ignores_the_checkpoint_generation_config(
    tiny_base: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A stand-in for vLLM's interpreter: it says it can import vllm, then records the
    # server's command line and exits, so nothing heavy starts.
    argv_file = tmp_path / "argv"
    fake = tmp_path / "fake-python"
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "-c" ]; then exit 0; fi\n'
        f'printf "%s\\n" "$@" > {argv_file}\n'
        "exit 3\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PODIUM_VLLM_PYTHON", str(fake))
    reset_settings()
    with pytest.raises(PodiumError):
        PolicyReplica(tiny_base).start()
    argv = argv_file.read_text().splitlines()
    assert argv[argv.index("--generation-config") + 1] == "vllm"
    assert argv[argv.index("--logprobs-mode") + 1] == "processed_logprobs"
