"""Fail when product modules import each other in a circle (`make check` runs this).

Every import counts, including those inside functions and under `TYPE_CHECKING`: a
circle means a shared definition lives in a module that also uses the others, and it
belongs in a leaf module of its own. Uses grimp, the graph import-linter is built on.

    .venv/bin/python scripts/check_import_cycles.py    # exit 1 and the circles, or 0
"""

from __future__ import annotations

import sys

import grimp

PACKAGES = ("podium", "generators", "trainers")


def circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected groups of two or more modules (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = []
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        work.append((root, sorted(graph.find_modules_directly_imported_by(root))))
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph.find_modules_directly_imported_by(nxt))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return sorted(found)


def main() -> int:
    found = circles(grimp.build_graph(*PACKAGES))
    for group in found:
        print("import circle: " + " -> ".join(group), file=sys.stderr)
    if found:
        print(
            f"{len(found)} import circle(s): move the shared definition into a leaf module.",
            file=sys.stderr,
        )
        return 1
    print("no import circles between product modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
