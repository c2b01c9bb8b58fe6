"""Language: lingua's models from its own wheel, over all languages or a chosen few."""

from __future__ import annotations

import numpy as np
import pytest

from podium.errors import InvalidInput
from podium.signals.language import Language
from podium.signals.settings import LanguageSettings
from podium.signals.turns import Turns

TEXTS = [
    "Le comité se réunira de nouveau la semaine prochaine pour discuter du budget.",
    "Der Ausschuss wird sich nächste Woche erneut treffen, um den Haushalt zu besprechen.",
    "",
]


def turns() -> Turns:
    n = len(TEXTS)
    return Turns(
        [f"r{i}" for i in range(n)], np.arange(n), np.zeros(n, np.int64), ["user"] * n, TEXTS
    )


@pytest.mark.parametrize("languages", [[], ["fr", "de", "en"]])
def test_each_row_gets_its_language_and_an_empty_one_und(languages: list[str]) -> None:
    found = Language(LanguageSettings(languages=languages)).compute(turns()).to_pylist()
    assert [r["language"] for r in found] == ["fr", "de", "und"]


def test_unknown_or_single_language_codes_are_refused() -> None:
    with pytest.raises(InvalidInput, match="Unknown language code"):
        LanguageSettings(languages=["en", "klingon"])
    with pytest.raises(InvalidInput, match="at least two"):
        LanguageSettings(languages=["en"])
