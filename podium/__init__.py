"""Podium: a workbench for LLM post-training data."""

__version__ = "0.1.0"
