"""Private data and secrets: each kind found with its exact span; look-alikes that fail
the kind's check (Luhn, mod 97, the address parser, digit counts) are not."""

from __future__ import annotations

import pytest

from podium.signals.private_patterns import detectors, find, find_all, iban_ok, luhn_ok
from podium.signals.settings import PRIVATE_KINDS

ALL = detectors(PRIVATE_KINDS)

FOUND = [
    ("email", "Write to jane.doe+work@mail.example.org today.", "jane.doe+work@mail.example.org"),
    ("phone", "Call +44 20 7946 0958 after six.", "+44 20 7946 0958"),
    ("phone", "US office: (415) 555-0132.", "(415) 555-0132"),
    ("ip_address", "ssh root@host -p 22 # 203.0.113.7 is the box", "203.0.113.7"),
    ("ip_address", "listen on 2001:db8::8a2e:370:7334 now", "2001:db8::8a2e:370:7334"),
    ("card_number", "Visa 4111 1111 1111 1111 exp 12/29", "4111 1111 1111 1111"),
    ("card_number", "amex=378282246310005;", "378282246310005"),
    ("iban", "IBAN: DE89 3704 0044 0532 0130 00 (Berlin)", "DE89 3704 0044 0532 0130 00"),
    ("iban", "pay GB82WEST12345698765432 by Friday", "GB82WEST12345698765432"),
    ("secret", 'aws_access_key_id = "AKIAIOSFODNN7EXAMPLE"', "AKIAIOSFODNN7EXAMPLE"),
    (
        "secret",
        "token: ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
        "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    ),
    (
        "secret",
        "HF_TOKEN=hf_" + "abcdefghijklmnopqrstuvwxyzABCDEFGH",
        "hf_" + "abcdefghijklmnopqrstuvwxyzABCDEFGH",
    ),
    ("secret", "url = 'https://admin:s3cretPass@db.internal/x'", "s3cretPass"),
]


@pytest.mark.parametrize(("kind", "text", "value"), FOUND)
def test_each_kind_is_found_with_its_span(kind: str, text: str, value: str) -> None:
    hits = [h for h in find(text, ALL) if h.kind == kind]
    assert [text[h.start : h.end] for h in hits] == [value]


def test_a_private_key_block_is_one_span_from_begin_to_end() -> None:
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA0abc\n-----END RSA PRIVATE KEY-----"
    text = f"key:\n{key}\nbye"
    (hit,) = [h for h in find(text, ALL) if h.kind == "secret"]
    assert text[hit.start : hit.end] == key


@pytest.mark.parametrize(
    "text",
    [
        "card 4111 1111 1111 1112 (fails Luhn)",
        "IBAN DE89 3704 0044 0532 0130 01 (fails mod 97)",
        "released 2024-01-15, version 1.2.3, build 20240115",
        "the time was 12:30:45 and the ratio 3:4:5",
        "see image logo@2x.png and call me maybe",
        "x = 1234567890123",  # a number in code: no separators, fails Luhn
        "@property\ndef name(self): return self._name",
    ],
)
def test_look_alikes_are_not_hits(text: str) -> None:
    assert list(find(text, ALL)) == []


def test_checks() -> None:
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")
    assert iban_ok("GB82WEST12345698765432") and not iban_ok("GB82WEST12345698765433")


def test_only_the_kinds_asked_for_are_looked_for() -> None:
    text = "mail a@b.example or call +44 20 7946 0958"
    assert {h.kind for h in find(text, detectors(("email",)))} == {"email"}


def test_a_batch_finds_what_each_text_alone_finds() -> None:
    """The triggers are searched over a whole batch at once: a trigger's run split across
    two texts finds nothing, a NUL inside a text is no boundary, and a digit of another
    script still lets the patterns run."""
    texts = [
        *(text for _, text, _ in FOUND),
        "call 415",  # "415" + " 555-0132" would be a phone across the boundary
        " 555-0132 x",
        "ip 10.0.0",  # and "10.0.0" + ".1" an address
        ".1 here",
        "a:b",  # three colons, one per text
        ":c",
        None,
        "",
        "NUL\x00DE89 3704 0044 0532 0130 00 then Call +44 20 7946 0958.",
        "رقم ٠٥٥٥١٢٣٤٥٦ and Call +44 20 7946 0958",
    ]
    expected = [list(find(t, ALL)) if t else [] for t in texts]
    assert find_all(texts, ALL) == expected
    assert [h.kind for h in expected[-2]] == ["iban", "phone"]
    assert not any(expected[len(FOUND) : len(FOUND) + 6])
