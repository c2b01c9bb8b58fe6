"""Where each page lives and the links between them, without Streamlit.

Each page has an explicit URL path, so `/browse?table=...` opens Browse itself (with
Browse as the default page its own path was empty and deep links opened behind a "page
not found" notice). A link carries its context in query parameters, so it can be
shared and the back button returns to the same view.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

VIEWS = Path(__file__).parent / "views"
# The browser tab's icon: an emoji becomes an inline SVG. A ":material/...:" page icon
# made the browser fetch an SVG from fonts.gstatic.com (offline: a failed request; online:
# a request to a third party). Page icons in the menu come from the bundled font.
PAGE_ICON = "🏟️"

# url path -> (package in views/, whose view.py is the page; title, icon)
PAGES: dict[str, tuple[str, str, str]] = {
    "home": ("home", "Home", ":material/home:"),
    "browse": ("browse", "Browse", ":material/table_view:"),
    "validate": ("validate", "Validate", ":material/rule:"),
    "sql": ("sql", "SQL", ":material/database:"),
    "map": ("map", "Map", ":material/scatter_plot:"),
    "review": ("review", "Review", ":material/fact_check:"),
    "generate": ("generate", "Generate", ":material/auto_awesome:"),
    "vibes": ("vibes", "Vibe check", ":material/sentiment_dissatisfied:"),
    "build": ("build", "Code-exec build", ":material/terminal:"),
    "train": ("train", "Train", ":material/model_training:"),
    "compare": ("compare", "Compare", ":material/compare:"),
    "logbook": ("logbook", "Logbook", ":material/history:"),
    "users": ("users", "Users", ":material/group:"),
}
# The session key of Browse's Signals filter ("SIGNAL=VALUE" facets): a page that opens
# Browse on a facet (the Map's topics) sets it before switching there.
BROWSE_SIGNALS = "browse.signals"
# The session key of rows handed to Browse by id ({"table": NAME, "ids": set}): the Map's
# selections too big for a link's `id IN (...)`.
BROWSE_IDS = "browse.ids"
SECTIONS = {
    "": ["home"],
    "Data": ["browse", "review", "validate", "sql", "map"],
    "Models": ["generate", "vibes", "build", "train", "compare"],
    "Runs": ["logbook"],
    "Admin": ["users"],  # shown to admins only
}


def page_file(name: str) -> str:
    """The path `st.page_link` / `st.switch_page` accept for page `name`."""
    return str(VIEWS / PAGES[name][0] / "view.py")


def url(name: str, **params: object) -> str:
    """A relative link to page `name` with its context, e.g. `browse?table=demo.chat`
    (blank and None values are left out)."""
    query = {k: str(v) for k, v in params.items() if v not in (None, "")}
    return name + (f"?{urlencode(query)}" if query else "")
