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

# url path -> (file in views/, title, icon)
PAGES: dict[str, tuple[str, str, str]] = {
    "home": ("home.py", "Home", ":material/home:"),
    "browse": ("browse.py", "Browse", ":material/table_view:"),
    "validate": ("validate.py", "Validate", ":material/rule:"),
    "sql": ("sql.py", "SQL", ":material/database:"),
    "review": ("review.py", "Review", ":material/fact_check:"),
    "generate": ("generate.py", "Generate", ":material/auto_awesome:"),
    "vibes": ("vibes.py", "Vibe check", ":material/sentiment_dissatisfied:"),
    "build": ("build.py", "Code-exec build", ":material/terminal:"),
    "train": ("train.py", "Train", ":material/model_training:"),
    "compare": ("compare.py", "Compare", ":material/compare:"),
    "logbook": ("logbook.py", "Logbook", ":material/history:"),
    "users": ("users.py", "Users", ":material/group:"),
}
SECTIONS = {
    "": ["home"],
    "Data": ["browse", "review", "validate", "sql"],
    "Models": ["generate", "vibes", "build", "train", "compare"],
    "Runs": ["logbook"],
    "Admin": ["users"],  # shown to admins only
}


def page_file(name: str) -> str:
    """The path `st.page_link` / `st.switch_page` accept for page `name`."""
    return str(VIEWS / PAGES[name][0])


def url(name: str, **params: object) -> str:
    """A relative link to page `name` with its context, e.g. `browse?table=demo.chat`
    (blank and None values are left out)."""
    query = {k: str(v) for k, v in params.items() if v not in (None, "")}
    return name + (f"?{urlencode(query)}" if query else "")
