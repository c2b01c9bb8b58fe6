"""Reading snapshots: file plans, scans, queries, the SQL console, stats, diffs, refs and
exports.
"""
