"""Language: the language of each row's chosen turns, by lingua (its models ship inside
its package; nothing is downloaded). A row with too little text to tell is `und`."""

from __future__ import annotations

import functools
from collections import Counter
from typing import TYPE_CHECKING, ClassVar

import pyarrow as pa

from podium.signals.settings import LanguageSettings, check_installed
from podium.signals.signal import RowSignal
from podium.signals.turns import Turns

if TYPE_CHECKING:
    from lingua import LanguageDetector

UNDETERMINED = "und"


@functools.cache
def detector(accuracy: str, languages: tuple[str, ...] = ()) -> LanguageDetector:
    from lingua import IsoCode639_1, LanguageDetectorBuilder

    if languages:
        codes = [getattr(IsoCode639_1, code.upper()) for code in languages]
        builder = LanguageDetectorBuilder.from_iso_codes_639_1(*codes)
    else:
        builder = LanguageDetectorBuilder.from_all_languages()
    if accuracy == "low":
        builder = builder.with_low_accuracy_mode()
    return builder.build()


class Language(RowSignal[LanguageSettings]):
    name: ClassVar[str] = "language"
    version: ClassVar[int] = 1
    description: ClassVar[str] = "The language of each row (ISO 639-1; und: undetermined)."
    schema: ClassVar[pa.Schema] = pa.schema(
        [pa.field("id", pa.string()), pa.field("language", pa.string())]
    )

    def __init__(self, settings: LanguageSettings) -> None:
        super().__init__(settings)
        self.counts: Counter[str] = Counter()

    def check(self) -> None:
        check_installed()

    def compute(self, turns: Turns) -> pa.RecordBatch:
        limit = self.settings.max_chars
        texts = [t[:limit] for t in turns.row_texts()]
        chosen = detector(self.settings.accuracy, tuple(self.settings.languages))
        found = chosen.detect_languages_in_parallel_of(texts)
        codes = [
            lang.iso_code_639_1.name.lower() if lang is not None else UNDETERMINED for lang in found
        ]
        self.counts.update(codes)
        return pa.RecordBatch.from_arrays(
            [pa.array(turns.ids, pa.string()), pa.array(codes, pa.string())], schema=self.schema
        )

    def summary(self) -> dict[str, int]:
        return dict(self.counts.most_common())
