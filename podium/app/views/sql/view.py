"""SQL page: one read-only SELECT over the catalog's tables, with `podium sql`'s
guards (a single SELECT, time and memory limits, a row limit), the result as a grid
and a refusal or error as a message.

Logic: `podium.app.views.sql.model` (over `podium.store.read.sql_console`).
"""

from __future__ import annotations

import streamlit as st

from podium.app.feedback import PodiumError, show_error
from podium.app.safe_markdown import escape_markdown
from podium.app.views.sql import model as sql_model

QUERY, ROWS, RESULT = "sql.query", "sql.rows", "sql.result"

st.title("SQL")
tables = sql_model.list_tables()
st.caption(
    "Tables: "
    + (", ".join(f"`{t}`" for t in tables) if tables else "none yet (load the demo data on Home)")
)
if QUERY not in st.session_state:
    st.session_state[QUERY] = st.query_params.get("q") or sql_model.EXAMPLE
with st.form("sql.form", border=False):
    sql = st.text_area("Query", key=QUERY, height=140, help="Ctrl+Enter runs it.")
    max_rows = st.number_input(
        "Rows to show", 1, sql_model.MOST_ROWS, sql_model.DEFAULT_ROWS, step=100, key=ROWS
    )
    st.caption(sql_model.limits_text(int(max_rows)))
    if st.form_submit_button("Run", type="primary", icon=":material/play_arrow:"):
        try:
            with st.spinner("Running the query"):
                st.session_state[RESULT] = sql_model.run_query(sql, int(max_rows))
        except PodiumError as exc:
            st.session_state[RESULT] = exc
result = st.session_state.get(RESULT)
if isinstance(result, PodiumError):
    show_error(result)
elif isinstance(result, sql_model.SqlResult):
    if result.value is not None:
        st.metric(escape_markdown(result.value[0]), str(result.value[1]))
    st.caption(result.caption)
    st.dataframe(result.frame, hide_index=True)
