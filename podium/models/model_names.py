"""What a model may be called: the one rule the registry and the key store share."""

from __future__ import annotations

import re

from podium.errors import InvalidInput

DEFAULT_ALIAS = "base"  # `--model base` always means the default base model
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def check_name(name: str) -> str:
    if name == DEFAULT_ALIAS or not _NAME_RE.match(name):
        raise InvalidInput(
            f"Model name {name!r} is not allowed: use letters, digits, '.', '_' or '-' "
            f"(at most 128), starting with a letter or digit; {DEFAULT_ALIAS!r} is reserved "
            "for the default base model."
        )
    return name
