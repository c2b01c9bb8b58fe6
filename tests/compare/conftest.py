"""A ready comparison of two checkpoints whose samples already exist (no server needed)."""

from compare_data import compare_config, comparison  # noqa: F401
