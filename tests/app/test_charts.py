"""Chart specs (Altair, without Streamlit): a step axis counts in whole steps."""

from __future__ import annotations

import pandas as pd

from podium.app.charts import line_chart


def test_the_step_axis_and_tooltip_show_whole_steps() -> None:
    """Before: the axis ticked 0.5, 1.5, ... and the tooltip read "6.000000" for step 6
    (steps came as floats from a frame with gaps)."""
    frame = pd.DataFrame({"loss": [1.0, 0.5, None], "reward": [None, 0.2, 0.3]}, index=[1.0, 2, 6])
    spec = line_chart(frame).to_dict()
    x = spec["encoding"]["x"]
    assert x["type"] == "quantitative"
    assert x["axis"]["format"] == "d" and x["axis"]["tickMinStep"] == 1
    tooltips = {t["field"]: t for t in spec["encoding"]["tooltip"]}
    assert tooltips["step"]["format"] == "d" and tooltips["step"]["title"] == "step"
    assert tooltips["value"]["format"] == ",.4~g"  # 0.5, 1,234, 1.235e-05: no padded zeros
    (rows,) = spec["datasets"].values()
    assert [r["step"] for r in rows] == [1, 2, 2, 6]
    assert all(isinstance(r["step"], int) for r in rows)


def test_the_compare_trend_chart_counts_whole_steps_too() -> None:
    from podium.app.views.compare.model import trend_chart

    frame = pd.DataFrame({"model": ["base", "ckpt"], "step": [0, 6], "win_rate": [0.5, 0.75]})
    spec = trend_chart(frame).to_dict()
    assert spec["encoding"]["x"]["axis"]["format"] == "d"
    tooltips = {t["field"] if isinstance(t, dict) else t: t for t in spec["encoding"]["tooltip"]}
    assert tooltips["step"]["format"] == "d"
