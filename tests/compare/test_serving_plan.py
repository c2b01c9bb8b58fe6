"""A comparison reuses running servers and never stops them; the servers it starts
start at once when their engines fit in memory side by side."""

from __future__ import annotations

from podium.compare.serving_plan import plan_serving
from podium.models.memory import GIB
from podium.models.registry import ModelInfo
from podium.models.serving import ServerInfo


def _model(name: str, kind: str = "trained") -> ModelInfo:
    return ModelInfo(name=name, kind=kind, path=f"/ckpt/{name}")


def _server(model: str, alive: bool = True) -> ServerInfo:
    return ServerInfo(model, "host", 1, 8000, "http://127.0.0.1:8000/v1", f"/ckpt/{model}",
                      "/log", "t", "t", alive)  # fmt: skip


def test_a_running_server_is_reused_and_the_rest_start_together_when_they_fit() -> None:
    models = [_model("base", "base"), _model("sft"), _model("grpo")]
    sizes = {"base": 3 * GIB, "sft": 3 * GIB, "grpo": 3 * GIB}
    plan = plan_serving(models, [_server("base")], sizes, usable=8 * GIB)
    assert plan.reuse == ["base"] and plan.start == ["sft", "grpo"] and plan.together


def test_one_at_a_time_when_they_do_not_fit_or_their_size_is_unknown() -> None:
    models = [_model("a"), _model("b")]
    assert not plan_serving(models, [], {"a": 3 * GIB, "b": 3 * GIB}, usable=5 * GIB).together
    assert not plan_serving(models, [], {"a": 3 * GIB, "b": None}, usable=64 * GIB).together


def test_dead_servers_are_started_again_and_endpoints_need_none() -> None:
    models = [_model("a"), _model("remote", "endpoint")]
    plan = plan_serving(models, [_server("a", alive=False)], {"a": GIB}, usable=64 * GIB)
    assert plan.reuse == [] and plan.start == ["a"] and not plan.together
