"""Training tests share the tiny-model fixtures of `tests/train_fixtures.py`."""

from train_fixtures import (  # noqa: F401  (fixtures are found by name)
    make_table,
    memo_pairs,
    recorder,
    stub_base,
    tiny_base,
    tiny_checkpoint,
)
