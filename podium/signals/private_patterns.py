"""What private data and secrets look like: one detector per kind, each a pattern and a
check that cuts false alarms (Luhn for card numbers, mod 97 for IBANs, the address
parser for IPs, digit counts for phone numbers).

Secrets (API keys, tokens, private keys) are detect-secrets' own plugin patterns (the
set BigCode's PII pipeline for code also used), plus the token shapes of services it
does not know. Its keyword and entropy detectors are left out: on prose and code they
flag far more than they find.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from podium.signals.private_triggers import Batch, Trigger


@dataclass(frozen=True)
class Hit:
    kind: str  # email, phone, ip_address, card_number, iban, secret
    detail: str  # which secret ("GitHub Token"), or the kind again
    start: int
    end: int


@dataclass(frozen=True)
class Detector:
    kind: str
    detail: str
    pattern: re.Pattern[str]
    trigger: Trigger
    span: Callable[[re.Match[str], str], tuple[int, int] | None]


def _whole(match: re.Match[str], text: str) -> tuple[int, int] | None:
    return match.span()


def _group(match: re.Match[str], text: str) -> tuple[int, int] | None:
    return match.span(1) if match.group(1) else None


_EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}"
    r"[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![\w-])"
)
_FILE_ENDINGS = frozenset({"png", "jpg", "jpeg", "gif", "svg", "webp", "js", "css", "py", "md"})


def _email(match: re.Match[str], text: str) -> tuple[int, int] | None:
    tld = match.group().rsplit(".", 1)[1].lower()
    return None if tld in _FILE_ENDINGS else match.span()


_PHONE = re.compile(
    r"(?<![\w+.-])(?:\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}|\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4})"
    r"(?![\w]|[.-]\d)"
)


def _phone(match: re.Match[str], text: str) -> tuple[int, int] | None:
    digits = sum(c.isdigit() for c in match.group())
    international = match.group().startswith("+")
    return match.span() if (9 <= digits <= 15 if international else digits == 10) else None


_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_IPV4 = re.compile(rf"(?<![\w.]){_OCTET}(?:\.{_OCTET}){{3}}(?!\w|\.\d)")
_IPV6 = re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])")


def _ipv6(match: re.Match[str], text: str) -> tuple[int, int] | None:
    value = match.group()
    if value.count(":") < 2 or not any(c.isalnum() for c in value):
        return None
    if re.fullmatch(r"[\d:]+", value) and "::" not in value:
        return None  # a time of day or a ratio, not an address
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return None
    return match.span()


_CARD = re.compile(r"(?<![\w-])\d(?:[ -]?\d){12,18}(?![\w-])")
# How card numbers are written when grouped: 16 and 19 digits by fours, American Express
# 4-6-5, Diners 4-6-4, 13-digit Visa 4-4-4-1.
_CARD_GROUPS = ([4, 4, 4, 4], [4, 4, 4, 4, 3], [4, 6, 5], [4, 6, 4], [4, 4, 4, 1])
_CARD_PREFIX = re.compile(r"4|5[1-5]|2[2-7]|3[47]|6011|65|64[4-9]|35|30[0-5]|36|38")


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card(match: re.Match[str], text: str) -> tuple[int, int] | None:
    raw = match.group()
    if " " in raw and "-" in raw:
        return None
    groups = [len(g) for g in re.split(r"[ -]", raw)]
    if len(groups) > 1 and groups not in _CARD_GROUPS:
        return None  # digits in another layout (an account number, an IBAN's tail)
    digits = raw.replace(" ", "").replace("-", "")
    if not (13 <= len(digits) <= 19 and _CARD_PREFIX.match(digits) and luhn_ok(digits)):
        return None
    return match.span()


# Lengths of the IBANs of SEPA countries and a few more (ISO 13616 registry).
IBAN_LENGTHS = {
    "AD": 24, "AT": 20, "BE": 16, "BG": 22, "CH": 21, "CY": 28, "CZ": 24, "DE": 22,
    "DK": 18, "EE": 20, "ES": 24, "FI": 18, "FR": 27, "GB": 22, "GI": 23, "GR": 27,
    "HR": 21, "HU": 28, "IE": 22, "IS": 26, "IT": 27, "LI": 21, "LT": 20, "LU": 20,
    "LV": 21, "MC": 27, "MT": 31, "NL": 18, "NO": 15, "PL": 28, "PT": 25, "RO": 24,
    "SE": 24, "SI": 19, "SK": 24, "SM": 27, "VA": 22, "BR": 29, "SA": 24, "TR": 26,
    "AE": 23, "IL": 23, "UA": 29,
}  # fmt: skip
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}")


def iban_ok(value: str) -> bool:
    moved = value[4:] + value[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def _iban(match: re.Match[str], text: str) -> tuple[int, int] | None:
    length = IBAN_LENGTHS.get(match.group()[:2])
    if length is None:
        return None
    taken, end = 0, match.start()
    for end in range(match.start(), match.end()):  # noqa: B007 - end is used below
        if text[end] != " ":
            taken += 1
            if taken == length:
                break
    if taken < length:
        return None
    compact = text[match.start() : end + 1].replace(" ", "")
    if end + 1 < len(text) and text[end + 1].isalnum():
        return None  # the number runs on: not this IBAN
    return (match.start(), end + 1) if iban_ok(compact) else None


# detect-secrets plugins kept, and for which the secret is the pattern's first group.
_SECRET_PLUGINS = (
    "AWSKeyDetector",
    "AzureStorageKeyDetector",
    "BasicAuthDetector",
    "DiscordBotTokenDetector",
    "GitHubTokenDetector",
    "GitLabTokenDetector",
    "JwtTokenDetector",
    "MailchimpDetector",
    "NpmDetector",
    "OpenAIDetector",
    "PrivateKeyDetector",
    "PypiTokenDetector",
    "SendGridDetector",
    "SlackDetector",
    "SquareOAuthDetector",
    "StripeDetector",
    "TelegramBotTokenDetector",
    "TwilioKeyDetector",
)
_SECRET_IN_GROUP = frozenset({"BasicAuthDetector", "NpmDetector"})
# Token shapes detect-secrets 1.5 does not know.
_EXTRA_SECRETS = {
    "OpenAI Project Key": r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}",
    "Anthropic API Key": r"sk-ant-(?:api|admin)\d\d-[A-Za-z0-9_-]{80,}",
    "Hugging Face Token": r"(?<![A-Za-z0-9])hf_[A-Za-z]{34}(?![A-Za-z0-9])",
    "Google API Key": r"AIza[0-9A-Za-z_-]{35}",
    "GitHub Fine-grained Token": r"github_pat_[A-Za-z0-9_]{82}",
}
_KEY_END = re.compile(r"-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----")


def _private_key(match: re.Match[str], text: str) -> tuple[int, int] | None:
    start = text.rfind("-----", 0, match.start())
    start = start if start >= 0 and match.start() - start <= 5 else match.start()
    end = _KEY_END.search(text, match.end())
    return (start, end.end() if end else match.end())


def _aws_span(match: re.Match[str], text: str) -> tuple[int, int] | None:
    return match.span(1) if match.re.groups and match.group(1) else match.span()


def _any(*needles: str) -> Trigger:
    return Trigger(any_of=needles)


# A substring every match of a secret type contains: a regex is run only on a text that
# holds one.
_SECRET_TRIGGERS: dict[str, Trigger] = {
    "AWS Access Key": Trigger(any_of=("AKIA", "ASIA", "ABIA", "ACCA", "A3T"), any_case=("aws",)),
    "Azure Storage Account access key": _any("AccountKey="),
    "Basic Auth Credentials": Trigger(all_of=("://", "@")),
    "GitHub Token": _any("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "GitLab Token": _any("gl", "GR1348941"),
    "JSON Web Token": _any("eyJ"),
    "Mailchimp Access Key": _any("-us"),
    "NPM tokens": _any("_authToken"),
    "OpenAI Token": _any("T3BlbkFJ"),
    "Private Key": _any("PRIVATE KEY"),
    "PyPI Token": _any("pypi-"),
    "SendGrid API Key": _any("SG."),
    "Slack Token": _any("xox", "hooks.slack.com"),
    "Square OAuth Secret": _any("sq0csp-"),
    "Stripe Access Key": _any("k_live_"),
    "Telegram Bot Token": _any(":"),
    "Twilio API Key": _any("AC", "SK"),
    "OpenAI Project Key": _any("sk-"),
    "Anthropic API Key": _any("sk-ant-"),
    "Hugging Face Token": _any("hf_"),
    "Google API Key": _any("AIza"),
    "GitHub Fine-grained Token": _any("github_pat_"),
}


@functools.cache
def secret_detectors() -> tuple[Detector, ...]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    found = []
    plugins: dict[str, Any] = dict(get_mapping_from_secret_type_to_class())
    for secret_type, plugin in plugins.items():
        if plugin.__name__ not in _SECRET_PLUGINS:
            continue
        for pattern in plugin.denylist:
            if plugin.__name__ == "PrivateKeyDetector":
                span = _private_key
            elif plugin.__name__ == "AWSKeyDetector":
                span = _aws_span
            elif plugin.__name__ in _SECRET_IN_GROUP:
                span = _group
            else:
                span = _whole
            trigger = _SECRET_TRIGGERS.get(secret_type, Trigger())
            found.append(Detector("secret", secret_type, pattern, trigger, span))
    for detail, source in _EXTRA_SECRETS.items():
        found.append(
            Detector("secret", detail, re.compile(source), _SECRET_TRIGGERS[detail], _whole)
        )
    return tuple(found)


@functools.cache
def detectors(kinds: tuple[str, ...]) -> tuple[Detector, ...]:
    plain = {
        "email": [Detector("email", "email", _EMAIL, _any("@"), _email)],
        "phone": [Detector("phone", "phone", _PHONE, Trigger(shape="digit"), _phone)],
        "ip_address": [
            Detector("ip_address", "ipv4", _IPV4, Trigger(shape="digit.digit"), _whole),
            # "::", or more than two colons
            Detector("ip_address", "ipv6", _IPV6, Trigger(("::",), colons=3), _ipv6),
        ],
        "card_number": [
            Detector("card_number", "card_number", _CARD, Trigger(shape="4 digits"), _card)
        ],
        "iban": [Detector("iban", "iban", _IBAN, Trigger(shape="AAdd"), _iban)],
    }
    chosen: list[Detector] = []
    for kind in kinds:
        chosen.extend(secret_detectors() if kind == "secret" else plain[kind])
    return tuple(chosen)


def find(text: str, chosen: tuple[Detector, ...]) -> Iterator[Hit]:
    """Every hit in `text` (see `find_all`)."""
    yield from find_all([text], chosen)[0]


def find_all(texts: Sequence[str | None], chosen: tuple[Detector, ...]) -> list[list[Hit]]:
    """Every hit in each of `texts`, by start; overlapping hits of one kind are kept once
    (the first and longest), so a key two patterns both match counts once. Each
    detector's trigger is searched for over all the texts at once."""
    batch = Batch.of(texts)
    found: list[list[Hit]] = [[] for _ in batch.texts]
    for detector in chosen:
        for i in detector.trigger.passing(batch):
            text = batch.texts[i]
            for match in detector.pattern.finditer(text):
                span = detector.span(match, text)
                if span is not None and span[1] > span[0]:
                    found[i].append(Hit(detector.kind, detector.detail, span[0], span[1]))
    return [_once(hits) if hits else hits for hits in found]


def _once(hits: list[Hit]) -> list[Hit]:
    hits.sort(key=lambda h: (h.kind, h.start, -h.end))
    kept: list[Hit] = []
    for hit in hits:
        last = kept[-1] if kept else None
        if last is not None and last.kind == hit.kind and hit.start < last.end:
            continue
        kept.append(hit)
    return sorted(kept, key=lambda h: (h.start, h.kind))
