"""The fork server's parts: stdlib only (any Python >= 3.9), one idea per module.

Inside a sandbox they run as one script (`generators/sandbox/server_script.py` joins them
with `generators/sandbox/forkserver.py`, the server's main loop): the sandbox holds that
single file and nothing of the checkout. Here they are ordinary modules, so that linters
and type checkers read them like the rest of the code.

They are fully typed, within 3.9's limits: a signature's or a class body's annotations are
evaluated when the script starts, so a union there is quoted (`"int | None"`) and there is
no `from __future__ import annotations` (it cannot sit in the middle of the joined script).
"""
