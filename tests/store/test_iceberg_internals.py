"""pyiceberg's private API as Podium uses it, held to the installed pyiceberg: one test per
private name `podium/store/catalog/iceberg_internals.py` reads (present, with the shape it is
called with, on real objects where it is state), so an upgrade that renames or reshapes
one fails here by name instead of silently in an edit. And a scan of the product's
source that fails when any other module reads a private pyiceberg name."""

from __future__ import annotations

import ast
import importlib
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog import MetastoreCatalog
from pyiceberg.exceptions import ValidationException
from pyiceberg.io import FileIO
from pyiceberg.io import pyarrow as pyiceberg_pyarrow
from pyiceberg.manifest import DataFile, ManifestWriter, ManifestWriterV2
from pyiceberg.table import StagedTable, Table, Transaction
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.snapshots import Operation
from pyiceberg.table.update import SetPropertiesUpdate
from pyiceberg.table.update.snapshot import CommitWindow, _SnapshotProducer
from store_helpers import sft_rows

from podium.store.catalog import iceberg_internals
from podium.store.catalog.catalog import load_table
from podium.store.catalog.iceberg_internals import (
    RowDeltaProducer,
    StagingCatalog,
    check_arrow_schema_compatible,
    parquet_writer_kwargs,
    to_file_schema,
    transaction_io,
)
from podium.store.read.plan import manifest_entries
from podium.store.schema import SFT_SCHEMA
from podium.store.write.file_writer import FileWriter
from podium.store.write.write import write_batches

ROOT = Path(__file__).resolve().parents[2]
INTERNALS = ROOT / "podium/store/catalog/iceberg_internals.py"
PACKAGES = ("podium", "generators", "trainers")
T = "internals.chat"


def params(func: Any) -> list[str]:
    return list(inspect.signature(func).parameters)


@pytest.fixture
def table(podium_home: Path) -> Table:
    return write_batches(T, sft_rows(4).to_batches(), mode="create", schema=SFT_SCHEMA)


# --- one test per private name --------------------------------------------------------


def test_a_transaction_keeps_its_table_in_table(table: Table) -> None:
    """`Transaction._table`: its `io` (every writer) and `metadata` (the row delta's
    rebase check reads the table as a retry refreshed it)."""
    txn = table.transaction()
    assert isinstance(txn._table, Table)
    assert isinstance(txn._table.io, FileIO)
    assert txn._table.metadata.table_uuid == table.metadata.table_uuid
    assert transaction_io(txn) is txn._table.io


def test_parquet_writer_kwargs_come_from_table_properties(table: Table) -> None:
    """`pyiceberg.io.pyarrow._get_parquet_writer_kwargs(table_properties)`."""
    assert params(pyiceberg_pyarrow._get_parquet_writer_kwargs) == ["table_properties"]
    kwargs = parquet_writer_kwargs({"write.parquet.compression-codec": "snappy"})
    assert kwargs["compression"] == "snappy"
    assert isinstance(parquet_writer_kwargs(table.metadata.properties), dict)


def test_schema_compatibility_is_checked_by_name_and_type(table: Table) -> None:
    """`_check_pyarrow_schema_compatible(requested_schema, provided_schema, ...,
    format_version)`: silent on a fitting batch, `ValueError` on one that does not fit."""
    assert params(pyiceberg_pyarrow._check_pyarrow_schema_compatible)[:2] == [
        "requested_schema",
        "provided_schema",
    ]
    assert "format_version" in params(pyiceberg_pyarrow._check_pyarrow_schema_compatible)
    version = table.metadata.format_version
    check_arrow_schema_compatible(table.schema(), sft_rows(1).schema, format_version=version)
    wrong = pa.schema([("id", pa.int64())])
    with pytest.raises(ValueError):
        check_arrow_schema_compatible(table.schema(), wrong, format_version=version)


def test_a_batch_is_projected_to_the_file_schema_with_field_ids(table: Table) -> None:
    """`_to_requested_schema(requested_schema, file_schema, batch, ..., include_field_ids,
    format_model)` with `ParquetFormatModel`."""
    names = params(pyiceberg_pyarrow._to_requested_schema)
    assert names[:3] == ["requested_schema", "file_schema", "batch"]
    assert {"include_field_ids", "format_model"} <= set(names)
    assert inspect.isclass(pyiceberg_pyarrow.ParquetFormatModel)
    batch = sft_rows(2).to_batches()[0]
    batch_schema = pyiceberg_pyarrow.pyarrow_to_schema(
        batch.schema, name_mapping=table.schema().name_mapping
    )
    projected = to_file_schema(batch, table_schema=table.schema(), batch_schema=batch_schema)
    assert projected.num_rows == 2
    field_ids = [f.metadata[b"PARQUET:field_id"] for f in projected.schema]
    assert field_ids == [str(f.field_id).encode() for f in table.schema().fields]


def test_a_metastore_catalog_stages_and_writes_metadata(table: Table, tmp_path: Path) -> None:
    """`MetastoreCatalog._load_file_io(properties, location)`,
    `_update_and_stage_table(current_table, table_identifier, requirements, updates)` and
    the static `_write_metadata(metadata, io, metadata_path)`: the steps of a commit."""
    assert params(MetastoreCatalog._load_file_io) == ["self", "properties", "location"]
    assert params(MetastoreCatalog._update_and_stage_table) == [
        "self",
        "current_table",
        "table_identifier",
        "requirements",
        "updates",
    ]
    assert isinstance(inspect.getattr_static(MetastoreCatalog, "_write_metadata"), staticmethod)
    assert params(MetastoreCatalog._write_metadata) == ["metadata", "io", "metadata_path"]
    assert issubclass(StagingCatalog, MetastoreCatalog)

    catalog = table.catalog
    assert isinstance(catalog, MetastoreCatalog)
    io = StagingCatalog.file_io_for(catalog, table.metadata.properties, table.metadata_location)  # type: ignore[arg-type]
    assert isinstance(io, FileIO)
    update = (SetPropertiesUpdate(updates={"staged": "yes"}),)
    staged = StagingCatalog.stage_update(catalog, table, table.name(), (), update)  # type: ignore[arg-type]
    assert isinstance(staged, StagedTable)
    assert staged.metadata.properties["staged"] == "yes"
    path = str(tmp_path / "staged.metadata.json")
    StagingCatalog.write_metadata_file(catalog, staged.metadata, staged.io, path)  # type: ignore[arg-type]
    assert Path(path).stat().st_size > 0


def test_a_manifest_writer_names_its_content_in_meta() -> None:
    """`ManifestWriter._meta` (a property; the delete manifest writer overrides it) and the
    abstract `content()`."""
    assert isinstance(inspect.getattr_static(ManifestWriter, "_meta"), property)
    assert isinstance(inspect.getattr_static(ManifestWriterV2, "_meta"), property)
    assert "content" in ManifestWriter.__abstractmethods__


def test_the_snapshot_producer_has_the_hooks_the_row_delta_overrides() -> None:
    """`_SnapshotProducer.__init__(operation, transaction, io, commit_uuid,
    snapshot_properties, branch)` and the hooks `_summary(snapshot_properties)`,
    `_validate_concurrency()`, `_manifests()`, `_deleted_entries()`,
    `_existing_manifests()`."""
    assert params(_SnapshotProducer.__init__) == [
        "self",
        "operation",
        "transaction",
        "io",
        "commit_uuid",
        "snapshot_properties",
        "branch",
    ]
    assert params(_SnapshotProducer._summary) == ["self", "snapshot_properties"]
    for hook in ("_validate_concurrency", "_manifests", "_deleted_entries", "_existing_manifests"):
        assert params(getattr(_SnapshotProducer, hook)) == ["self"], hook
    for public in ("append_data_file", "delete_data_file", "spec", "schema"):
        assert callable(getattr(_SnapshotProducer, public)), public
    assert callable(_SnapshotProducer.new_manifest_output)


def test_a_snapshot_producer_keeps_the_state_the_row_delta_reads(table: Table) -> None:
    """`_added_data_files`, `_deleted_data_files`, `_snapshot_id`, `_parent_snapshot_id`,
    `_compression`, `_io`, `_transaction`, `_commit_window` on a real producer."""
    txn = table.transaction()
    producer = RowDeltaProducer(
        Operation.APPEND, txn, "main", {}, lambda w, m: False, manifest_entries
    )
    assert producer._added_data_files == []
    assert producer._deleted_data_files == set()
    assert isinstance(producer._snapshot_id, int)
    assert producer._parent_snapshot_id == table.metadata.current_snapshot_id
    assert isinstance(producer._compression, str)
    assert producer._io is txn._table.io
    assert producer._transaction is txn
    assert producer._commit_window is None
    assert producer.snapshot_properties == {}


def _data_files(txn: Transaction, start: int) -> list[DataFile]:
    return FileWriter(txn, 2**20).write(iter(sft_rows(2, start=start).to_batches()), None)


@pytest.mark.parametrize("rebase", [False, True])
def test_a_retried_commit_asks_the_rebase_policy(table: Table, rebase: bool) -> None:
    """pyiceberg's commit retry sets `_commit_window` and calls `_validate_concurrency()`:
    a row delta overtaken by another writer asks its policy, which decides whether it
    lands on the new head or fails."""
    stale = load_table(T)
    planned_on = stale.metadata.current_snapshot_id
    write_batches(T, sft_rows(1, start=10).to_batches(), mode="append")  # lands first
    asked: list[tuple[CommitWindow, TableMetadata]] = []

    def policy(window: CommitWindow, metadata: TableMetadata) -> bool:
        asked.append((window, metadata))
        return rebase

    txn = stale.transaction()
    producer = RowDeltaProducer(Operation.APPEND, txn, "main", {}, policy, manifest_entries)
    for data_file in _data_files(txn, start=20):
        producer.append_data_file(data_file)
    producer.commit()
    if rebase:
        txn.commit_transaction()
        assert load_table(T).scan().to_arrow().num_rows == 4 + 1 + 2
    else:
        with pytest.raises(ValidationException, match="re-plan"):
            txn.commit_transaction()
        assert load_table(T).scan().to_arrow().num_rows == 4 + 1
    window, metadata = asked[0]  # from the snapshot it was planned on to the new head
    assert window.base is not None and window.base.snapshot_id == planned_on
    assert window.head is not None and window.head.parent_snapshot_id == planned_on
    assert metadata.snapshot_by_id(window.head.snapshot_id) == window.head


# --- nobody else reads them -----------------------------------------------------------


@dataclass(frozen=True)
class PrivateUse:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _imports(tree: ast.Module) -> dict[str, tuple[str, str | None]]:
    """Local name -> (module, imported attribute, or None for `import module`)."""
    found: dict[str, tuple[str, str | None]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                found[alias.asname or alias.name] = (node.module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found[alias.asname or alias.name.split(".")[0]] = (alias.name, None)
    return found


def _from_pyiceberg(module: str) -> bool:
    return module.split(".")[0] == "pyiceberg"


@dataclass
class Ancestry:
    """What a class inherits: the pyiceberg classes among its ancestors, and the names
    its Podium ancestors define (theirs to read)."""

    pyiceberg: list[type]
    podium_names: set[str]


def _ancestry(
    bases: list[ast.expr],
    imports: dict[str, tuple[str, str | None]],
    local: dict[str, ast.ClassDef],
) -> Ancestry:
    """Follows base classes defined in the module (by their source) and classes imported
    from pyiceberg or from podium.store (by importing them: the store's modules are
    cheap to import; pyiceberg subclasses live there)."""
    out = Ancestry([], set())
    for base in bases:
        if isinstance(base, ast.Subscript):
            base = base.value
        if not isinstance(base, ast.Name):
            continue
        if base.id in local:
            inner = _ancestry(local[base.id].bases, imports, local)
            out.pyiceberg += inner.pyiceberg
            out.podium_names |= inner.podium_names | _own_names(local[base.id])
            continue
        module, attr = imports.get(base.id, ("", None))
        if attr is None or not (_from_pyiceberg(module) or module.startswith("podium.store")):
            continue
        found = getattr(importlib.import_module(module), attr, None)
        if not isinstance(found, type):
            continue
        for ancestor in found.__mro__:
            if _from_pyiceberg(ancestor.__module__):
                out.pyiceberg.append(ancestor)
            elif ancestor is not object:
                out.podium_names |= set(vars(ancestor))
    return out


def _own_names(cls: ast.ClassDef) -> set[str]:
    """Names a class defines itself: methods, class attributes, `self.X = ...`."""
    names: set[str] = set()
    for node in ast.walk(cls):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node in cls.body:
            names.add(node.name)
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Name) and node in cls.body:
                names.add(target.id)
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
            ):
                names.add(target.attr)
    return names


def private_pyiceberg_uses(path: Path, source: str) -> list[PrivateUse]:
    """The private pyiceberg names a module reads, by these rules:

    1. An import from pyiceberg of a name starting with `_` (not a dunder), or of a
       pyiceberg module with such a part in its dotted path.
    2. In a module that imports from pyiceberg at all (at the top, in a function or under
       `TYPE_CHECKING`): an attribute read `X._name` where `X` is anything but the bare
       name `self` or `cls` (`txn._table`, `super()._summary`, `catalog._x`). A module
       that handles pyiceberg objects reads Podium's own privates only on `self`.
    3. In a class with a pyiceberg class among its ancestors (a base imported from
       pyiceberg, or from podium.store or defined in the module and itself such a class):
       `self._name` where neither the class nor a Podium ancestor defines `_name` (a
       method, a class attribute or `self._name = ...`), or where a pyiceberg ancestor
       has `_name` as a class attribute (an override of a private hook); and a method
       `def _name` a pyiceberg ancestor also has. pyiceberg's instance state
       (`self._added_data_files`) is caught by the first half: Podium never assigns it.

    Rule 2 reads only a module that imports pyiceberg: a module that gets a pyiceberg
    object without naming its type is not seen. Every product module that touches
    pyiceberg objects imports pyiceberg for its types (mypy's strict modules must)."""
    tree = ast.parse(source)
    rel = str(path.relative_to(ROOT))
    imports = _imports(tree)
    uses: list[PrivateUse] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and _from_pyiceberg(node.module or ""):
            module_private = any(_private(p) for p in (node.module or "").split("."))
            for alias in node.names:
                if module_private or _private(alias.name):
                    uses.append(PrivateUse(rel, node.lineno, f"imports {node.module}.{alias.name}"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "pyiceberg" and any(_private(p) for p in parts):
                    uses.append(PrivateUse(rel, node.lineno, f"imports {alias.name}"))
    classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    local = {c.name: c for c in classes}
    for cls in classes:
        ancestry = _ancestry(cls.bases, imports, local)
        if not ancestry.pyiceberg:
            continue
        own = _own_names(cls) | ancestry.podium_names

        def inherited(name: str, ancestry: Ancestry = ancestry) -> bool:
            return any(hasattr(b, name) for b in ancestry.pyiceberg)

        for node in ast.walk(cls):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node in cls.body:
                if _private(node.name) and inherited(node.name):
                    uses.append(PrivateUse(rel, node.lineno, f"overrides {node.name}"))
            if (
                isinstance(node, ast.Attribute)
                and _private(node.attr)
                and isinstance(node.value, ast.Name)
                and node.value.id == "self"
                and (node.attr not in own or inherited(node.attr))
            ):
                uses.append(PrivateUse(rel, node.lineno, f"reads self.{node.attr}"))
    if not any(_from_pyiceberg(module) for module, _ in imports.values()):
        return sorted(set(uses), key=lambda u: (u.line, u.what))
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and _private(node.attr)):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        uses.append(PrivateUse(rel, node.lineno, f"reads {ast.unparse(node.value)}.{node.attr}"))
    return sorted(set(uses), key=lambda u: (u.line, u.what))


def _product_modules() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def test_no_module_but_the_internals_reads_private_pyiceberg_names() -> None:
    found = [
        str(use)
        for path in _product_modules()
        if path != INTERNALS
        for use in private_pyiceberg_uses(path, path.read_text())
    ]
    assert found == [], (
        "private pyiceberg names outside podium/store/catalog/iceberg_internals.py (move each "
        "behind a function there, with a test in this file):\n" + "\n".join(found)
    )


def test_the_scan_finds_what_the_internals_module_reads() -> None:
    """The rules see every kind of use the internals module makes (so they would see one
    elsewhere): private imports, private reads on other objects, and a pyiceberg
    subclass's inherited state and overridden hooks."""
    uses = {u.what for u in private_pyiceberg_uses(INTERNALS, INTERNALS.read_text())}
    for expected in (
        "imports pyiceberg.table.update.snapshot._SnapshotProducer",
        "imports pyiceberg.io.pyarrow._get_parquet_writer_kwargs",
        "imports pyiceberg.io.pyarrow._check_pyarrow_schema_compatible",
        "imports pyiceberg.io.pyarrow._to_requested_schema",
        "reads txn._table",
        "reads self._transaction._table",
        "reads super()._meta",
        "reads super()._summary",
        "reads self._added_data_files",
        "reads self._deleted_data_files",
        "reads self._snapshot_id",
        "reads self._parent_snapshot_id",
        "reads self._compression",
        "reads self._io",
        "reads self._commit_window",
        "reads self._load_file_io",
        "reads self._update_and_stage_table",
        "reads self._write_metadata",
        "overrides _summary",
        "overrides _validate_concurrency",
        "overrides _manifests",
        "overrides _deleted_entries",
        "overrides _existing_manifests",
        "overrides _meta",
    ):
        assert expected in uses, expected
    # Podium's own state on a pyiceberg subclass is not pyiceberg's.
    assert "reads self._named_operation" not in uses
    assert "reads self._may_rebase" not in uses
    assert "reads self._read_entries" not in uses


def test_the_scan_leaves_podiums_own_private_names_alone(tmp_path: Path) -> None:
    source = (
        "from pyiceberg.table import Table\n"
        "class Cache:\n"
        "    def __init__(self) -> None:\n"
        "        self._tables: dict[str, Table] = {}\n"
        "    def get(self, name: str) -> Table:\n"
        "        return self._tables[name]\n"
        "def peek(table: Table) -> object:\n"
        "    return table.__class__\n"
    )
    assert private_pyiceberg_uses(ROOT / "podium" / "example.py", source) == []
    risky = (
        "from pyiceberg.table import Table\n"
        "def peek(table: Table) -> object:\n"
        "    return table._x\n"
    )
    assert [u.what for u in private_pyiceberg_uses(ROOT / "podium" / "x.py", risky)] == [
        "reads table._x"
    ]
    # A subclass of Podium's own pyiceberg subclass, importing nothing from pyiceberg.
    beneath = (
        "from podium.store.catalog.iceberg_internals import StagingCatalog\n"
        "class Mine(StagingCatalog):\n"
        "    def io(self) -> object:\n"
        "        return self._load_file_io({}, None)\n"
    )
    assert [u.what for u in private_pyiceberg_uses(ROOT / "podium" / "y.py", beneath)] == [
        "reads self._load_file_io"
    ]
    assert iceberg_internals.__file__ == str(INTERNALS)
