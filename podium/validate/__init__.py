"""Structured-output validation: rules over one text, and runs over whole tables.

- `rules`: rule specs (`json`, `json-schema[:PATH]`, `xml`, `xsd:PATH`, `python`,
  `regex:PATTERN`, `tool-call[:PATH]`) parsed and compiled before any work;
  the rules themselves live in `json_rules`, `markup_rules`, `text_rules`, `tool_calls`.
- `result`: the common `Result` (ok, rule, kind, message, line, column, offset).
- `extract`: whole message or first fenced block; `locate`: where a JSON value sits.
- `batch`: the loop over many texts; `turns`: Arrow rows -> turns -> report rows;
  `parallel`: batches over worker processes; `on_ray`: data files over Ray tasks;
  `tally`: failure counts that add up across either.
- `job`: `ValidateConfig` and `validate_table` / `run_validate` (the `validate` job kind).
- `report`: the report table, `malformed_ids(table, snapshot)` for Browse.
- `caret` and `review`: what the CLI and the Validate page show.
"""
