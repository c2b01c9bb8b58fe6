"""Checks before a validate job exists (see podium/jobs/preflight.py): unknown rules and
missing or invalid schema files fail here, against the table's column mapping."""

from __future__ import annotations

from podium.store.catalog.catalog import load_table
from podium.validate.job import ValidateConfig
from podium.validate.rules import parse_rules


def validate(config: ValidateConfig) -> ValidateConfig:
    parse_rules(config.rules, load_table(config.table.name).properties, config.table.name)
    return config
