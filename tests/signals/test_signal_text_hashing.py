"""Word, n-gram and shingle hashes: equal text gives equal hashes wherever it stands."""

from __future__ import annotations

from podium.signals.text_hashing import code_points, shingles, word_ngrams, words


def test_a_word_hashes_the_same_in_any_text_and_case() -> None:
    found = words(code_points(["Hello world", "x", "and HELLO again"]))
    assert found.text.tolist() == [0, 0, 1, 2, 2, 2]
    assert found.hashes[0] == found.hashes[4]  # Hello / HELLO
    assert found.hashes[0] != found.hashes[1]
    assert (found.start.tolist(), found.end.tolist()) == ([0, 6, 0, 0, 4, 10], [5, 11, 1, 3, 9, 15])


def test_ngrams_never_cross_from_one_text_into_the_next() -> None:
    found = words(code_points(["a b c", "d e"]))
    grams, first = word_ngrams(found, 2)
    assert first.tolist() == [0, 1, 3]  # (a b), (b c), (d e): never (c d)
    again, _ = word_ngrams(words(code_points(["zz d e"])), 2)
    assert grams[2] == again[1]


def test_shingles_ignore_how_text_is_wrapped() -> None:
    hashes, offsets = shingles(code_points(["one  two\nthree ", "  ONE two three", "abc"]), 5)
    first = set(hashes[offsets[0] : offsets[1]].tolist())
    second = set(hashes[offsets[1] : offsets[2]].tolist())
    assert first == second and len(first) == len("one two three") - 4
    assert offsets[3] == offsets[2]  # "abc" is shorter than a shingle


def test_non_ascii_and_astral_characters_keep_their_offsets() -> None:
    found = words(code_points(["naïve 🙂 café"]))
    assert (found.start.tolist(), found.end.tolist()) == ([0, 8], [5, 12])
