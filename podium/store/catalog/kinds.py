"""Every kind of table Podium writes: the values of the `podium.kind` property, the
group a table picker shows each in, and the tables of given kinds.

One registry, so that a new kind (an `X__annotations` table, say) is placed once: a
picker that asks for datasets never offers it by accident.
"""

from __future__ import annotations

from podium.store.catalog.catalog import list_tables, open_catalog, parse_name
from podium.store.schema import PROP_KIND

SFT = "sft"
EVAL_SET = "eval-set"
SAMPLES = "samples"
ROLLOUTS = "rollouts"  # an async RL run's generated samples (trainers/async_rl)
CODE_EXEC_ROWS = "code-exec-rows"
CODE_EXEC_VERIFY = "code-exec-verify"
FUNCTIONS = "functions"
VALIDATION_REPORT = "validation-report"
COMPARE_VOTES = "compare-votes"
VIBES = "vibes"
COMPARISON = "comparison"
ANNOTATIONS = "annotations"
SIGNAL = "signal"  # a signal's values beside its table (podium/signals), NS.T__sig_KIND
UNKNOWN = ""  # imported by hand or by another engine: no podium.kind property

GROUP_OF_KIND = {
    SFT: "datasets",
    EVAL_SET: "datasets",
    UNKNOWN: "datasets",  # assume a dataset
    SAMPLES: "samples",
    ROLLOUTS: "samples",
    CODE_EXEC_ROWS: "samples",
    CODE_EXEC_VERIFY: "samples",
    FUNCTIONS: "functions",
    VALIDATION_REPORT: "reports",
    COMPARE_VOTES: "votes",
    VIBES: "votes",
    COMPARISON: "comparisons",
    ANNOTATIONS: "annotations",
    SIGNAL: "reports",
}
# Groups that hold Podium's own bookkeeping about other tables, not data to train on.
# (Tables under the names Podium keeps, `table_name.RESERVED_NAMES`, are internal too,
# even when written before their kind was recorded.)
INTERNAL_GROUPS = frozenset({"reports", "votes", "comparisons", "annotations"})


def group_of(kind: str) -> str:
    """The picker group of a table of `kind` (an unknown kind: a dataset)."""
    return GROUP_OF_KIND.get(kind, "datasets")


def tables_of_kind(*kinds: str) -> list[str]:
    """Tables whose `podium.kind` is one of `kinds`, in catalog order; a table that cannot
    be loaded is left out rather than failing the listing."""
    catalog = open_catalog()
    found = []
    for name in list_tables(catalog):
        try:
            kind = catalog.load_table(parse_name(name)).properties.get(PROP_KIND, UNKNOWN)
        except Exception:  # noqa: BLE001 - a broken table is simply not offered
            continue
        if kind in kinds:
            found.append(name)
    return found
