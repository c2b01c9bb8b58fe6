"""Side-by-side comparison of checkpoints: the compare job, blind votes, ratings, trends.

podium.compare.job        the `compare` job kind (samples per checkpoint, reused by key)
podium.compare.table      the comparison table and reading it back
podium.compare.checks     automatic checks on every answer (rules, sandboxed tests, length)
podium.compare.votes      blind pairs and the `compare.votes` Iceberg table
podium.compare.ratings    Bradley-Terry ratings, win rates, pass rates
podium.compare.trends     a training run's checkpoints against its base, by step
podium.compare.diff       word-level differences between answers as HTML
"""
