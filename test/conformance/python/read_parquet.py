"""Reads Parquet files with PyArrow (Apache Arrow's own reader, independent of the writer) and prints
one JSON document: per file its row count, its schema (column name -> Arrow type) and its rows, with
timestamps as ISO 8601 UTC strings."""
import json
import sys

import pyarrow.parquet as pq


def cell(v):
    if hasattr(v, "isoformat"):
        return v.isoformat().replace("+00:00", "Z")
    return v


out = []
for path in sys.argv[1:]:
    table = pq.read_table(path)
    out.append(
        {
            "rows": table.num_rows,
            "schema": {f.name: str(f.type) for f in table.schema},
            "data": [{k: cell(v) for k, v in row.items()} for row in table.to_pylist()],
        }
    )
json.dump(out, sys.stdout, default=str)
