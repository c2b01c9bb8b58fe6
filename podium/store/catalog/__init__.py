"""The Iceberg catalog: opening it, table names, table kinds, checked commits, and the one
module that touches pyiceberg's private API.
"""
