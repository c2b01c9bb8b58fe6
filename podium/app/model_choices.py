"""Which registered models a page's checkpoint picker offers, and which it preselects
(Generate and Vibe check), without Streamlit."""

from __future__ import annotations

from podium.models import list_models


def model_choices(wanted: str | None = None) -> tuple[list[str], int]:
    """Registered model names and the index to preselect: `wanted` (a URL's ?model=),
    else the default base, else the first."""
    models = list_models()
    names = [m.name for m in models]
    if wanted in names:
        return names, names.index(wanted)
    default = next((i for i, m in enumerate(models) if m.is_default), 0)
    return names, default
