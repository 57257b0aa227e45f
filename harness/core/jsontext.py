"""JSON read from files anyone may have edited (meta.json, dataset lines, board
files, cache headers): :func:`loads` is ``json.loads`` with a nesting limit.

``json.loads('[' * 100000)`` raises RecursionError, which is not a ValueError:
every reader that caught ValueError for bad JSON let it through as an internal
error, and a cache header that raised it was never rebuilt. Here any nesting
deeper than MAX_DEPTH (far beyond what the harness writes: meta.json nests five
levels) is a ``json.JSONDecodeError`` like any other bad JSON. Standard library
only (workers and cache readers import it).
"""

from __future__ import annotations

import json
from typing import Any

#: Deepest nesting of arrays and objects read.
MAX_DEPTH = 64


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """The value of the JSON ``text``; ``json.JSONDecodeError`` (a ValueError,
    ``.msg`` the reason) for bad JSON and for nesting deeper than ``max_depth``."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise _too_deep(text, max_depth) from None
    if _depth(value, max_depth) > max_depth:
        raise _too_deep(text, max_depth)
    return value


def _too_deep(text: str | bytes, max_depth: int) -> json.JSONDecodeError:
    doc = text if isinstance(text, str) else text.decode("utf-8", errors="replace")
    return json.JSONDecodeError(f"nested deeper than {max_depth} levels", doc, 0)


def _depth(value: Any, limit: int) -> int:
    """Nesting depth of a parsed value (a scalar: 0), counted up to ``limit + 1``
    without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list):
            continue
        depth += 1
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth) for child in item)
    return deepest
