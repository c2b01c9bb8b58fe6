"""Async RL: acting (vLLM replicas) and learning as separate roles, off-policy with a
staleness bound."""
