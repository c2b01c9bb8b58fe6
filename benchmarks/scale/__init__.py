"""The scale benchmark (`benchmarks/real_size.py`, `make bench-scale`), in parts: seeded
data (`data`), cold commands and their baselines (`measure`), the steps (`steps`), the
shared S3 + PostgreSQL store (`s3`) and the printed and JSON report (`report`)."""
