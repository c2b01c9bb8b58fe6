"""Signals: values computed over one snapshot of a table and stored beside it.

A signal (near-duplicates, contamination, private data, language, length; later
embeddings, topics, judges' scores) is one small class (`podium.signals.signal`) that
declares its output columns and computes them, either row by row over streamed batches
(a row signal) or in stages over the whole snapshot (a table signal). Every signal is
written the same way, as an Iceberg table `NS.TABLE__sig_KIND` of values keyed by row
id, whose properties name the table, snapshot, signal version and settings it
describes (`podium.signals.store`); a run is a `signals` job (`podium.signals.job`).
"""
