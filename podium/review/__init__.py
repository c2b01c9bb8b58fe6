"""Review that acts: annotations, edits and removals as snapshots, queues, diffs, refs.

Every change a reviewer makes is versioned. Labels, ratings and notes are appended to
an annotations table beside the data (`annotations`); edits and removals commit one
new snapshot of the table whose summary names author, message and rows touched
(`changes`); `diff` compares any two snapshots file list first; `refs` names snapshots
with Iceberg tags and branches; `queues` hands rows to reviewers from the state
database without reading the table.
"""
