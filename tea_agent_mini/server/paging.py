"""Paging of the list routes: every list has a default and a maximum ``limit``, and says whether
more items exist beyond the page (``has_more``) so a client can ask for the next one.

A route reads one item more than it returns (``limit + 1``); that extra item is how it knows.
Out-of-range or malformed values are a 400 naming the parameter and the accepted range.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from starlette.requests import Request

from .bodies import query_int

__all__ = ["MAX_ID", "MAX_OFFSET", "limit_of", "page_json", "trim"]

T = TypeVar("T")

MAX_OFFSET = 1_000_000
MAX_ID = 2**62


def limit_of(request: Request, default: int, maximum: int) -> int:
    """The ``limit`` query parameter: 1 to ``maximum``, ``default`` when absent."""
    return query_int(request, "limit", default, minimum=1, maximum=maximum)


def trim(items: Sequence[T], limit: int, *, keep_last: bool = False) -> tuple[list[T], bool]:
    """``items`` read with ``limit + 1``: the page and whether there was more. ``keep_last``
    drops the extra item from the front (pages of the newest items, in oldest-first order)."""
    page = list(items)
    if len(page) <= limit:
        return page, False
    return (page[-limit:] if keep_last else page[:limit]), True


def page_json(data: list[Any], has_more: bool, **extra: Any) -> dict[str, Any]:
    return {"object": "list", "data": data, "has_more": has_more, **extra}
