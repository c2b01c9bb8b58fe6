"""User-facing errors.

Every error a person can cause (bad file, unknown table, invalid card) is a
`PodiumError`: its message names the problem and what to do, and the CLI prints it
without a traceback and exits non-zero.
"""


class PodiumError(Exception):
    """An error caused by input; the message is shown to the user as is."""

    exit_code = 2


class NotFound(PodiumError):
    """A named thing (table, snapshot, job, model) does not exist."""


class InvalidInput(PodiumError):
    """A file, expression or setting that cannot be used as given."""


class Cancelled(Exception):
    """Raised inside long work when the user asked it to stop."""


class PermissionDenied(PodiumError):
    """The acting user's role does not allow the action."""

    exit_code = 3
