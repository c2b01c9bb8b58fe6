"""The SFT table schema (see DESIGN.md "Data model") and its Arrow twin."""

from __future__ import annotations

import pyarrow as pa
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.schema import Schema
from pyiceberg.types import (
    ListType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
)

SFT_COLUMNS = ("id", "messages", "system", "source", "split", "tags", "metadata", "created_at")
ROLES = ("system", "user", "assistant", "tool")

SFT_SCHEMA = Schema(
    NestedField(1, "id", StringType(), required=False),
    NestedField(
        2,
        "messages",
        ListType(
            3,
            StructType(
                NestedField(4, "role", StringType(), required=False),
                NestedField(5, "content", StringType(), required=False),
            ),
            element_required=False,
        ),
        required=False,
    ),
    NestedField(6, "system", StringType(), required=False),
    NestedField(7, "source", StringType(), required=False),
    NestedField(8, "split", StringType(), required=False),
    NestedField(9, "tags", ListType(10, StringType(), element_required=False), required=False),
    NestedField(11, "metadata", StringType(), required=False, doc="JSON object"),
    NestedField(12, "created_at", TimestamptzType(), required=False),
)


def _plain(schema: pa.Schema) -> pa.Schema:
    """Drop pyiceberg's field-id metadata so the schema compares equal to user data."""

    def strip(t: pa.DataType) -> pa.DataType:
        if pa.types.is_list(t):
            return pa.list_(pa.field("element", strip(t.value_type)))
        if pa.types.is_struct(t):
            return pa.struct([pa.field(f.name, strip(f.type)) for f in t])
        return t

    return pa.schema([pa.field(f.name, strip(f.type)) for f in schema])


SFT_ARROW_SCHEMA: pa.Schema = _plain(schema_to_pyarrow(SFT_SCHEMA))

# Table properties Podium reads and writes.
PROP_KIND = "podium.kind"  # "sft", "samples", "validation-report", ...
PROP_MAPPING = "podium.mapping"  # JSON: canonical column -> stored column
# Set while the job writing the table stopped part-way ("failed at 40 of 100; running it
# again resumes"); the run that completes it removes it.
PROP_PARTIAL = "podium.partial"
PROP_LINEAGE_PREFIX = "podium.lineage."
# Lineage a generated table carries: the input snapshot ("table@snapshot") and the model.
PROP_LINEAGE_INPUT = PROP_LINEAGE_PREFIX + "input"
PROP_LINEAGE_CHECKPOINT = PROP_LINEAGE_PREFIX + "checkpoint"
PROP_LINEAGE_CHECKPOINT_LOCATION = PROP_LINEAGE_PREFIX + "checkpoint_location"
