"""YAML as run cards, `--set` values and form fields read it: plain data, no aliases.

A few lines of YAML anchors and aliases (`&a [*b, *b, ...]`, nine levels deep) expand
to billions of nodes: loading such a "billion laughs" card took ~50 s and 6 GB, and the
error message then printed the expanded value. A card is a config written by a person
or by Podium (whose dumper never emits aliases), so aliases are refused outright while
the document is composed, before anything expands; the text itself has a size cap.
"""

from __future__ import annotations

from typing import Any

import yaml

from podium.errors import InvalidInput

MAX_YAML_BYTES = 1 * 2**20  # a card is a config plus notes; a megabyte is far beyond that


class _NoAliasLoader(yaml.SafeLoader):
    """SafeLoader that stops at the first alias (`*name`), naming where it is."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]  # untyped stub
            raise _AliasFound(mark.line + 1, mark.column + 1)
        return super().compose_node(parent, index)


class _AliasFound(Exception):
    def __init__(self, line: int, column: int) -> None:
        super().__init__(line, column)
        self.line, self.column = line, column


class _NoAliasDumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def load_yaml(text: str, source: str, first_line: int = 1) -> Any:
    """`text` as plain YAML data; InvalidInput (naming `source`, and lines counted from
    `first_line`) for an alias, text over `MAX_YAML_BYTES`, or invalid YAML."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_YAML_BYTES:
        raise InvalidInput(
            f"{source} is {size:,} bytes; at most {MAX_YAML_BYTES:,} are accepted. "
            "Keep large data in a table or a file and name it in the card."
        )
    try:
        return yaml.load(text, Loader=_NoAliasLoader)  # noqa: S506 (a SafeLoader subclass)
    except _AliasFound as found:
        line = found.line + first_line - 1
        raise InvalidInput(
            f"{source}: line {line}, column {found.column} uses a YAML alias (*name); "
            "aliases are not accepted here. Write the value out in full."
        ) from None
    except yaml.YAMLError as exc:
        raise InvalidInput(f"{source}: not valid YAML: {exc}") from None
    except RecursionError:
        raise InvalidInput(f"{source}: the YAML is nested too deeply to read.") from None


def dump_yaml(value: Any, **options: Any) -> str:
    """`value` as YAML that `load_yaml` reads back: repeated objects are written out in
    full, never as anchors and aliases."""
    text: str = yaml.dump(value, Dumper=_NoAliasDumper, **options)
    return text
