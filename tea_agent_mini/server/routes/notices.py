"""``GET /v1/notices``: the notices tools stored for the user (``toolkit_notify`` without a
desktop, finished scheduled tasks), newest first across every session.

A turn running in this server also shows its notices at once, as ``notice`` events of kind
``notify`` on its stream; this list is how the UI finds the ones nobody was watching.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ..bodies import query_int
from ..paging import MAX_OFFSET, limit_of, page_json, trim
from ..spec import endpoint
from ..state import blocking, state

if TYPE_CHECKING:
    from ...store import Store

MAX_LIMIT = 200


def _notices(store: Store, limit: int, offset: int) -> list[dict[str, Any]]:
    from ...toolkit.notices import recent_notices

    titles: dict[str, str] = {}
    data = []
    for notice in recent_notices(store, offset + limit)[offset:]:
        topic_id = notice.get("topic_id")
        if topic_id and topic_id not in titles:
            topic = store.topics.get(topic_id)
            titles[topic_id] = topic.title if topic else ""
        data.append(
            {
                "title": str(notice.get("title", "")),
                "message": str(notice.get("message", "")),
                "urgency": str(notice.get("urgency", "normal")),
                "time": str(notice.get("time", "")),
                "session_id": topic_id,
                "session_title": titles.get(topic_id, "") if topic_id else "",
            }
        )
    return data


@endpoint(
    "Stored notices, newest first",
    tag="notices",
    query={
        "limit": f"int - at most this many (default 50, up to {MAX_LIMIT})",
        "offset": f"int - notices to skip, at most {MAX_OFFSET}",
    },
    response="NoticeList",
    errors=(400,),
    description=(
        "Notices saved by toolkit_notify when no desktop notification could be shown, and by "
        "scheduled tasks that notify when they finish. `time` is ISO 8601 (UTC)."
    ),
)
async def list_notices(request: Request) -> JSONResponse:
    limit = limit_of(request, 50, MAX_LIMIT)
    offset = query_int(request, "offset", 0, maximum=MAX_OFFSET)
    found = await blocking(_notices, state(request).store, limit + 1, offset)
    data, more = trim(found, limit)
    return JSONResponse(page_json(data, more))


def routes() -> list[Route]:
    return [Route("/v1/notices", list_notices, methods=["GET"])]
