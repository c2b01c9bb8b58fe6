"""What every load session does, in either mode (browser or protocol): the seeded mix of
actions, the words searched for, and what a session reports."""

from __future__ import annotations

from dataclasses import dataclass, field

TABLE = "load.sft"
WORDS = ("quetzalcoatl", "def ", "json", "error", "ka lo")
# A fixed mix (mostly page changes), each session starting at a seeded point.
MIX = ("label", "page", "page", "search", "page", "sample", "page", "page", "search", "page")


@dataclass
class SessionResult:
    page_changes: list[float] = field(default_factory=list)
    actions: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    lost_inputs: int = 0  # page numbers typed that did not take (typed again once)
