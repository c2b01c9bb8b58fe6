"""The Browse page: `view.py` lays it out, the other modules are its model."""
