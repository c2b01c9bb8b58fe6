"""Charts the pages draw, as Altair specs built without Streamlit.

None binds the mouse wheel: `st.line_chart` and `st.bar_chart` make their charts
`.interactive()`, so a wheel over a chart zoomed it instead of scrolling the page.
Metrics of different sizes get their own panels: num_tokens (~1,200) on the axis of
loss and learning rate flattened both to zero.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

# A step is a whole number: an axis of them never ticks 0.5, a tooltip never reads
# "6.000000" (a frame with gaps holds its steps as floats).
STEP_AXIS = alt.Axis(format="d", tickMinStep=1)
STEP_TOOLTIP = alt.Tooltip("step:Q", title="step", format="d")
VALUE_TOOLTIP = alt.Tooltip("value:Q", title="value", format=",.4~g")

# Chart groups: a title and the metric names (a prefix ending in "/" takes a family).
CHART_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Loss", ("loss", "eval_loss")),
    ("Reward", ("reward", "reward_std", "rewards/")),
    ("Learning rate", ("learning_rate",)),
    ("Grad norm", ("grad_norm",)),
    ("Tokens/s", ("tokens_per_s",)),
    ("Token accuracy", ("mean_token_accuracy",)),
    ("Completion length", ("completions/mean_length",)),
    ("Lag (async)", ("lag", "lag_max")),
)


def chart_groups(frame: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """Split a wide metrics frame (index step) into the page's charts; empty ones dropped."""
    out = []
    for title, names in CHART_GROUPS:
        cols = [
            c
            for c in frame.columns
            if c in names or any(n.endswith("/") and c.startswith(n) for n in names)
        ]
        if title == "Reward":
            cols = [c for c in cols if not c.endswith("/std")]
        data = frame[cols].dropna(how="all") if cols else pd.DataFrame()
        if not data.empty:
            out.append((title, data))
    return out


def line_chart(frame: pd.DataFrame) -> alt.Chart:
    """One line per column of `frame` (index: step), with a tooltip and no zoom."""
    long = frame.rename_axis("step").reset_index().melt("step", var_name="metric")
    long = long.dropna(subset=["value"])
    long["step"] = long["step"].round().astype(int)
    # Annotated: altair's mark_* methods come back untyped (Any) through its mixins.
    chart: alt.Chart = (
        alt.Chart(long)
        .mark_line(point=len(long) < 40)
        .encode(
            x=alt.X("step:Q", title="step", axis=STEP_AXIS),
            y=alt.Y("value:Q", title=None, scale=alt.Scale(zero=False)),
            color=alt.Color("metric:N", title=None, legend=alt.Legend(orient="bottom")),
            tooltip=[STEP_TOOLTIP, "metric:N", VALUE_TOOLTIP],
        )
    )
    return chart


def bar_chart(frame: pd.DataFrame, x: str, y: str, *, horizontal: bool = False) -> alt.Chart:
    """Bars of `y` per `x` (categories down the side when `horizontal`), no zoom."""
    chart: alt.Chart
    if horizontal:
        category = alt.Y(f"{x}:N", title=x, sort="-x", axis=alt.Axis(labelLimit=0))
        chart = alt.Chart(frame).mark_bar().encode(y=category, x=f"{y}:Q", tooltip=[x, y])
    else:
        column = alt.X(f"{x}:N", title=x, sort=None)
        chart = alt.Chart(frame).mark_bar().encode(x=column, y=f"{y}:Q", tooltip=[x, y])
    return chart


def metric_panels(frame: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The Train page's groups (loss, reward, learning rate, ...), then every other
    metric in a panel of its own: no two scales share an axis."""
    panels = chart_groups(frame)
    shown = {c for _, data in panels for c in data.columns}
    for column in frame.columns:
        if column not in shown:
            data = frame[[column]].dropna()
            if not data.empty:
                panels.append((str(column), data))
    return panels
