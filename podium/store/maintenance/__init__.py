"""Keeping tables healthy: compaction, snapshot expiry, orphan and warehouse sweeps."""
