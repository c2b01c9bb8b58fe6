"""Iceberg storage and app state, in rooms that mirror the domain: `catalog/` (opening it,
names, kinds, checked commits, the one module on pyiceberg's private API), `read/` (plans,
scans, queries, exports), `write/` (appends, imports, row deltas, position deletes),
`maintenance/` (compaction, expiry, orphans) and `state/` (the SQL database of app state).
The SFT schema (`schema.py`) and private scratch folders (`private_tmp.py`) serve them all.
"""
