"""Mean-pooled token embeddings (what wordllama computes), tokenizing each distinct
whitespace piece once.

wordllama's tokenizer (Llama 2's BPE) has no pre-tokenizer, so BPE runs over a whole
row as one word: no merge is cached between rows, and its `embed` pads each batch to
its longest row. No token of its vocabulary holds '▁' after another character, so no
merge crosses the start of a '▁'-run: tokenizing each piece ('▁'-run plus the characters
up to the next '▁') gives the same tokens as the whole text. Rows then become sparse
piece counts, pieces sparse token counts, and the pooled vector two sparse products
with the embedding matrix (1.8e-7 from wordllama's own output; ~6x its rows/s on ~1 KiB
rows, docs/speed.md).
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import numpy.typing as npt

# The tokenizer's normalizer, done here so pieces are cut from the normalized text: a
# '▁' before the text and in place of each space.
SPACE = "▁"
PIECE = re.compile(f"{SPACE}*[^{SPACE}]+|{SPACE}+")
# Pieces whose tokens are kept between batches (a few hundred bytes each).
CACHE_PIECES = 200_000


class PooledTokens:
    def __init__(self, tokenizer: Any, embedding: npt.NDArray[np.float32]) -> None:
        from tokenizers import Tokenizer

        config = json.loads(tokenizer.to_str())
        config["normalizer"] = None
        config["pre_tokenizer"] = None
        config["padding"] = None
        config["truncation"] = None
        self._tokenizer = Tokenizer.from_str(json.dumps(config))
        self._embedding = embedding
        self._tokens: dict[str, list[int]] = {}

    def mean(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """The mean of each text's token embeddings (a text without tokens: zeros)."""
        local: dict[str, int] = {}
        rows = [[local.setdefault(p, len(local)) for p in _pieces(t)] for t in texts]
        counts = (
            _counts(rows, len(local)) @ _counts(self._tokens_of(list(local)), len(self._embedding))
        ).tocsr()
        totals = np.asarray(counts.sum(axis=1), np.float32).reshape(-1, 1)
        sums = np.asarray(counts @ self._embedding, np.float32)
        return np.asarray(sums / np.maximum(totals, 1), np.float32)

    def _tokens_of(self, pieces: list[str]) -> list[list[int]]:
        if len(self._tokens) + len(pieces) > CACHE_PIECES:
            self._tokens.clear()  # bounded memory; the next batches refill it
        new = [p for p in pieces if p not in self._tokens]
        last = len(self._embedding) - 1  # wordllama clamps ids past its matrix too
        for piece, encoding in zip(
            new, self._tokenizer.encode_batch(new, add_special_tokens=False), strict=True
        ):
            self._tokens[piece] = [min(i, last) for i in encoding.ids]
        return [self._tokens[p] for p in pieces]


def _pieces(text: str) -> list[str]:
    """The normalizer's text (an empty text stays empty, as its Prepend leaves it) cut
    into pieces."""
    return PIECE.findall(SPACE + text.replace(" ", SPACE)) if text else []


def _counts(lists: list[list[int]], columns: int) -> Any:
    """A CSR matrix with a 1 per entry of each list (repeats add up)."""
    from scipy import sparse  # type: ignore[import-untyped]  # no stubs for the pinned scipy

    lengths = np.fromiter(map(len, lists), np.int64, len(lists))
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    indices = np.fromiter((i for each in lists for i in each), np.int64, int(indptr[-1]))
    return sparse.csr_matrix(
        (np.ones(len(indices), np.float32), indices, indptr), shape=(len(lists), columns)
    )
