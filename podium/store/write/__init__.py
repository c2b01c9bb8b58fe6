"""Writing tables: appends and overwrites, imports, row deltas with position deletes, staged
files, row locations, the demo datasets.
"""
