"""App state beside the catalog: the SQL database, its migrations, users."""
