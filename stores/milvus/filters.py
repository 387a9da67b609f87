"""Metadata filters as Milvus boolean expressions, with the docstore's meaning (stores.docstore.filter_rows).

The same filter mapping the SQLite docstore runs as SQL runs here as one expression over the collection's
scalar fields (`id`, `doc_id`, `title`) and its `metadata` JSON field:

    {"language": "en"}                       metadata["language"] == "en"
    {"doc_id": ["a", "b"]}                   doc_id in ["a", "b"]
    {"category": {"prefix": "cs."}}          (metadata["category"] >= "cs." and metadata["category"] < "cs.\\U0010ffff")
    {"year": {"gte": 2020, "lt": 2024}}      (metadata["year"] >= 2020 and metadata["year"] < 2024)

A prefix is a string range rather than `like "cs.%"`, since Milvus Lite has no escape for `%` / `_` inside a
pattern. A JSON value compares only with a bound of its own type (a number never matches a string bound), as in
the docstore. None never matches (SQL's NULL = NULL is not true), and an empty list matches nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from stores.docstore import check_filters

COLUMNS = ("id", "doc_id", "title")
NOTHING = "row < 0"  # rows start at 1: an expression no row satisfies
_RANGE_OPERATORS = {"gte": ">=", "gt": ">", "lte": "<=", "lt": "<"}
_PREFIX_END = "\U0010ffff"  # above every character: p <= s < p + this  <=>  s starts with p


def filter_expression(filters: Mapping[str, Any] | None) -> str:
    """The Milvus expression of a filter mapping ("" for none); FilterError as the docstore raises it."""
    if not filters:
        return ""
    check_filters(filters)
    return " and ".join(_clause(_field(key), value) for key, value in filters.items())


def rows_expression(rows: Iterable[int]) -> str:
    """`row in [...]`: the rows a search may score (NOTHING for none)."""
    listed = ", ".join(str(int(row)) for row in rows)
    return f"row in [{listed}]" if listed else NOTHING


def both(*expressions: str) -> str:
    """The conjunction of the non-empty expressions."""
    kept = [f"({e})" for e in expressions if e]
    return " and ".join(kept)


def literal(value: Any) -> str:
    """A value as an expression literal: strings double-quoted with JSON escapes, booleans lower-case."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return repr(value) if isinstance(value, float) else str(int(value))


def _field(key: str) -> str:
    return key if key in COLUMNS else f"metadata[{json.dumps(key, ensure_ascii=False)}]"


def _clause(field: str, value: Any) -> str:
    if field in COLUMNS:  # text columns: SQLite compares a number given for them as its text, ranges by type
        if isinstance(value, Mapping) and set(value) != {"prefix"} and not all(
                isinstance(bound, str) for bound in value.values()):
            return NOTHING
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value)
    if isinstance(value, list | tuple | set | frozenset):
        if field in COLUMNS and value and all(isinstance(item, str) for item in value):
            return f"{field} in [{', '.join(literal(item) for item in value)}]"  # one term, however many ids
        alternatives = [_clause(field, item) for item in value]
        return "(" + " or ".join(alternatives) + ")" if alternatives else NOTHING
    if isinstance(value, Mapping):
        if set(value) == {"prefix"}:
            prefix = str(value["prefix"])
            return f"({field} >= {literal(prefix)} and {field} < {literal(prefix + _PREFIX_END)})"
        return "(" + " and ".join(f"{field} {_RANGE_OPERATORS[op]} {literal(bound)}"
                                  for op, bound in value.items()) + ")"
    if value is None:
        return NOTHING
    return f"{field} == {literal(value)}"
