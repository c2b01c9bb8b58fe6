"""A finished generation records its speed on this machine, and Generate's estimate
uses it; without one the estimate assumes a small CPU's speed, not a GPU's."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from test_retry import ScriptedServer, _completion

from generators.generate import GenerateConfig, run_generate
from podium.app.views.generate import model as gm
from podium.models.registry import add_endpoint
from podium.models.speeds import last_speed, record_speed
from podium.reporting import Reporter
from podium.store.read.refs import TableRef
from podium.store.schema import SFT_ARROW_SCHEMA
from podium.store.write.write import write_table


def test_a_generation_records_its_speed_and_the_estimate_uses_it(podium_home: Any) -> None:
    status, body, headers = _completion("a long enough answer")
    body["usage"] = {"prompt_tokens": 5, "completion_tokens": 20, "total_tokens": 25}
    server = ScriptedServer([(status, body, headers)])
    try:
        add_endpoint(server.url, "scripted", remote_model="m")
        rows = [{"id": f"p{i}", "messages": [{"role": "user", "content": "q"}]} for i in range(3)]
        write_table("t.prompts", pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA))
        assert gm.measured_rate("scripted", []) is None
        assert gm.estimate(3, None, 64, 1, None).tokens_per_s == gm.ASSUMED_TOKENS_PER_S == 20.0
        result = run_generate(
            GenerateConfig(input=TableRef(name="t.prompts"), out="t.samples", model="scripted"),
            Reporter(),
        )
    finally:
        server.close()
    speed = last_speed("scripted")
    assert speed is not None and speed == result.summary["tokens_per_s"] > 0
    assert gm.measured_rate("scripted", []) == speed  # no job list needed
    assert "this model's last run" in gm.estimate(3, None, 64, 1, speed).text


def test_a_run_too_short_to_measure_is_not_recorded(podium_home: Any) -> None:
    assert record_speed("m", 500.0, tokens=3) is False and last_speed("m") is None
    assert record_speed("m", 18.5, tokens=640) and last_speed("m") == 18.5
    assert record_speed("m", 21.0, tokens=640) and last_speed("m") == 21.0  # the last one
