"""Map page: a table's rows as points (its projection signal) colored by topic or
category, hover for the topic, a click for the row, points selected on the map (lasso,
box or click) opened in Browse. A big map is drawn as one image with a sample of
markers on it; a lasso or box on it selects every point inside.

Logic: `podium.app.views.map.model`, `.figure` (the chart), `.canvas` (an image map's
chart, without plotly.js), `.selection`.
"""

from __future__ import annotations

import streamlit as st

from podium.app.feedback import PodiumError, show_error
from podium.app.forms import queue_form
from podium.app.job_panel import page_link
from podium.app.model_choices import model_choices
from podium.app.pages import BROWSE_IDS, BROWSE_SIGNALS, page_file
from podium.app.views.map import canvas as map_canvas
from podium.app.views.map import figure as map_figure
from podium.app.views.map import model as map_model
from podium.app.views.map import selection as map_selection

st.title("Map")
tables = map_model.mapped_tables()
if not tables:
    st.info(
        "No table has a map yet: run `podium signals run NS.TABLE --signal "
        "embedding,topics,projection` (or a signals job from the Logbook)."
    )
    st.stop()
wanted = st.query_params.get("table")
left, middle, right = st.columns([3, 1, 1])
table = left.selectbox(
    "Table", tables, index=tables.index(wanted) if wanted in tables else 0, key="map.table"
)
color_by = middle.radio("Color by", map_figure.COLOR_BY, horizontal=True, key="map.color")
asked_draw = st.query_params.get("draw")
draw = right.radio(
    "Draw",
    map_figure.DRAW,
    index=map_figure.DRAW.index(asked_draw) if asked_draw in map_figure.DRAW else 0,
    horizontal=True,
    key="map.draw",
    help=f"auto: every point a marker up to {map_figure.RASTER_ABOVE:,} points; above, every "
    "point drawn into one image with a sample of markers on it for hover and click (a lasso "
    "or box still selects every point inside it).",
)
others = st.multiselect(
    "With other tables on the same map (colored by table)",
    [t for t in map_model.embedded_tables() if t != table],
    key="map.with",
    help="Generated samples or a vibe eval set beside the training table: one projection "
    "of all their embeddings.",
)
caption, chart = st.empty(), st.empty()
# The session's first map, not built yet: plotly.js loads in the browser while it is
# built (a rerun keeps its drawn map; a built one comes at once, and a placeholder first
# slowed new tabs). A map drawn as an image needs no plotly.js (`canvas`).
if (
    "map.chart" not in st.session_state
    and not map_figure.is_drawn(table, color_by, others, draw)
    and not map_figure.expects_image(table, others, draw)
):
    chart.plotly_chart(map_figure.placeholder(), theme=None)
try:
    drawn = map_figure.drawn_map(table, color_by, others, draw)
except PodiumError as exc:
    chart.empty()
    show_error(exc)
    st.stop()
data = drawn.data
shown = len(data.points)
markers = sum(len(t.ids) for t in drawn.traces)
caption.caption(
    f"{data.total:,} rows with a point"
    + (f", an even sample of {shown:,} drawn" if shown < data.total else "")
    + (
        f", drawn as one image with {markers:,} of them as markers"
        if drawn.raster is not None
        else ""
    )
    + ". Hover a point for its topic, click it for its row; draw a lasso (or a box) to "
    "select rows."
)
if drawn.raster is not None:
    with chart.container():
        event = map_canvas.show(drawn, key="map.canvas")
    # every point sorted for a shape's test once the chart is sent (not before it, which
    # delayed the first draw, nor on the first lasso's rerun)
    _ = drawn.all_points
else:
    event = chart.plotly_chart(
        drawn.figure,
        on_select="rerun",
        selection_mode=("lasso", "box", "points"),
        key="map.chart",
        theme=None,
    )
try:
    clicked = map_selection.selected_rows(event, drawn)
except PodiumError as exc:
    show_error(exc)
    clicked = []
if clicked:
    st.dataframe(clicked, hide_index=True)
for chosen_table, ids in map_selection.selected_by_table(event, drawn).items():
    label = f"Open the {len(ids):,} selected rows in Browse" + (
        f" ({chosen_table})" if data.tables else ""
    )
    if len(ids) > map_selection.MAX_LINKED:  # too many for a link: handed over in the session
        if st.button(label, icon=":material/table_view:", key=f"map.open_ids.{chosen_table}"):
            st.session_state[BROWSE_IDS] = {"table": chosen_table, "ids": set(ids)}
            st.switch_page(page_file("browse"), query_params={"table": chosen_table})
        continue
    try:
        query = map_selection.browse_query(chosen_table, ids)
        page_link("browse", label, ":material/table_view:", **query)
    except PodiumError as exc:
        show_error(exc)
st.subheader("Search by meaning")
with st.form("map.search", border=False):
    first, second, third = st.columns([3, 1, 1])
    like_text = first.text_input("Rows like this text", key="map.like_text")
    like_row = second.text_input("or like this row (id)", key="map.like_row")
    k = third.number_input("How many", 1, 100, 10, key="map.k")
    asked = st.form_submit_button("Find similar rows", icon=":material/search:")
if asked:
    try:
        found = map_model.similar_rows(table, text=like_text, row=like_row, k=int(k))
        st.dataframe(found, hide_index=True)
        if found:
            query = map_selection.browse_query(table, [str(f["id"]) for f in found])
            page_link(
                "browse",
                f"Open these {len(found)} rows in Browse",
                ":material/table_view:",
                **query,
            )
    except PodiumError as exc:
        show_error(exc)
if data.titles:
    st.subheader("Topics")
    rows = data.points["cluster"].value_counts()
    st.dataframe(
        [
            {"topic": c, "title": t, "rows": int(rows.get(c, 0))}
            for c, t in sorted(data.titles.items())
        ],
        hide_index=True,
    )
    models, preselected = model_choices()
    with st.expander("Titles by a model", icon=":material/title:"):
        st.caption(
            "A registered model reads a sample of each topic's rows and writes its title and "
            "a one-sentence description (the topic-titles job); the map's legend and hover "
            "show them once the job has finished."
        )
        if not models:
            st.info("Register a model first (Home sets up the base model).")
        else:
            titler = st.selectbox("Model", models, index=preselected, key="map.titles.model")
            queue_form(
                "topic-titles",
                "map.titles",
                advanced=map_model.TITLES_ADVANCED,
                fixed={"table": data.table, "model": titler},
            )
    topics = map_model.topic_choices(table)
    if topics:
        pick, go = st.columns([3, 1], vertical_alignment="bottom")
        chosen = pick.selectbox(
            "A topic or category",
            list(topics),
            format_func=lambda key: topics[key],
            key="map.topic",
        )
        if go.button("Open in Browse", icon=":material/table_view:", key="map.open_topic"):
            st.session_state[BROWSE_SIGNALS] = [chosen]  # Browse's Signals filter
            st.switch_page(page_file("browse"), query_params={"table": data.table})

st.subheader("Coverage")
st.caption(
    "The prompts of an eval set with no training row near them (cosine distance of their "
    "embeddings); queue a generation job for exactly those prompts."
)
embedded = map_model.embedded_tables()
if len(embedded) < 1:
    st.info("Embed an eval set and a training table first (the embedding signal).")
    st.stop()
first, second, third = st.columns([2, 2, 1])
eval_table = first.selectbox("Eval set", embedded, key="map.eval")
train_table = second.selectbox("Training table", embedded, key="map.train")
distance = third.number_input(
    "Distance", min_value=0.05, max_value=1.95, value=0.5, step=0.05, key="map.distance"
)
try:
    far = map_model.coverage_rows(eval_table, train_table, float(distance))
except PodiumError as exc:
    show_error(exc)
    st.stop()
if not far:
    st.success(f"Every prompt has a training row within {distance:g}.")
    st.stop()
st.caption(f"{len(far)} prompts with no training row within {distance:g}")
st.dataframe(far, hide_index=True)
out = map_model.prompts_name(eval_table)
st.caption(f"Queuing writes these prompts to a new table, {out}, and generates for it.")
queue_form(
    "generate",
    "map.generate",
    values={"out": f"{out}_answers"},
    advanced=map_model.generate_advanced(),
    fixed={"table": lambda: map_model.prompt_table(eval_table, train_table, float(distance), out)},
)
