"""Uploads (limits, types, attaching to a message) and the OpenAPI document and docs page."""

from __future__ import annotations

import base64
import re
import struct
import zlib
from pathlib import Path

import pytest
from starlette.routing import Route

from tests.fakes.background import turn_requests
from tests.server.server_helpers import read_events

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def tiny_png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return PNG_SIGNATURE + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def upload(http, name: str, data: bytes, declared: str = "application/octet-stream"):
    return http.post("/v1/uploads", files={"file": (name, data, declared)})


def test_image_upload_round_trip_and_attach(http, scripted_server, tea_home: Path):
    png = tiny_png()
    created = upload(http, "../../photo <1>.png", png, "text/html")
    assert created.status_code == 201
    info = created.json()
    assert info["type"] == "image/png" and info["size"] == len(png)
    assert "/" not in info["name"] and "<" not in info["name"]
    assert [p.name for p in (tea_home / "uploads").iterdir() if p.suffix == ".png"] == [
        f"{info['id']}.png"
    ]
    fetched = http.get(f"/v1/uploads/{info['id']}")
    assert fetched.status_code == 200 and fetched.content == png
    assert fetched.headers["content-type"] == "image/png"
    assert fetched.headers["x-content-type-options"] == "nosniff"

    session = http.post("/v1/sessions", json={}).json()
    _, events = read_events(
        http,
        "POST",
        f"/v1/sessions/{session['id']}/messages",
        json={"content": "what is this?", "attachments": [info["id"]]},
    )
    assert events[0].event == "start" and events[0].data["attachments"] == 1
    assert events[-1].event == "done"
    block, *content = turn_requests(scripted_server)[-1]["messages"][-1]["content"]
    assert block["type"] == "text" and block["text"].startswith("<context>")
    assert content[0] == {"type": "text", "text": "what is this?"}
    url = content[1]["image_url"]["url"]
    assert url == "data:image/png;base64," + base64.b64encode(png).decode()
    stored = http.get(f"/v1/sessions/{session['id']}/messages").json()["data"][0]
    assert stored["content"][1]["type"] == "image_url"


def test_text_upload_attaches_as_text(http, scripted_server):
    info = upload(http, "notes.md", b"# Notes\nbuy tea\n").json()
    assert info["type"] == "text/markdown"
    session = http.post("/v1/sessions", json={}).json()
    read_events(
        http,
        "POST",
        f"/v1/sessions/{session['id']}/messages",
        json={"content": "", "attachments": [info["id"]]},
    )
    # the turn's request, not a title request the background worker may have sent after it
    turn = next(
        r for r in scripted_server.requests if isinstance(r["messages"][-1]["content"], list)
    )
    _block, *parts = turn["messages"][-1]["content"]
    assert parts[0]["type"] == "text" and "buy tea" in parts[0]["text"]


@pytest.mark.parametrize(
    ("data", "status"),
    [
        (b"\x00\x01\x02binary\xff", 415),
        (b"MZ\x90\x00\x03\x00\x00\x00", 415),
        (b"", 400),
    ],
)
def test_upload_types_are_checked(http, data, status):
    response = upload(http, "thing.png", data, "image/png")
    assert response.status_code == status
    assert "error" in response.json()


def test_upload_size_and_form_checks(http):
    too_big = b"a" * (20 * 1024 * 1024 + 1)
    response = upload(http, "big.txt", too_big, "text/plain")
    assert response.status_code == 413
    assert http.post("/v1/uploads", json={"file": "x"}).status_code == 415
    no_file = http.post("/v1/uploads", files={"other": ("a.txt", b"a", "text/plain")})
    assert no_file.status_code == 400
    for bad in ("f" * 32, "..%2F..%2Fetc%2Fpasswd", "abc"):
        assert http.get(f"/v1/uploads/{bad}").status_code == 404


def test_pdf_uploads_but_cannot_be_attached(http):
    info = upload(http, "doc.pdf", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n").json()
    assert info["type"] == "application/pdf"
    download = http.get(f"/v1/uploads/{info['id']}")
    assert download.headers["content-disposition"].startswith("attachment")
    session = http.post("/v1/sessions", json={}).json()
    response = http.post(
        f"/v1/sessions/{session['id']}/messages",
        json={"content": "read it", "attachments": [info["id"]]},
    )
    assert response.status_code == 400 and "cannot be attached" in response.text


def test_openapi_documents_every_route(live, http):
    document = http.get("/openapi.json").json()
    assert document["openapi"] == "3.1.0" and document["info"]["version"]
    for route in live.app.routes:
        assert isinstance(route, Route)
        path = re.sub(r"\{(\w+):\w+\}", r"{\1}", route.path)
        for method in route.methods - {"HEAD"}:
            operation = document["paths"][path][method.lower()]
            assert operation["summary"] and operation["responses"], (method, path)
    operations = [op for item in document["paths"].values() for op in item.values()]
    ids = [op["operationId"] for op in operations]
    assert len(ids) == len(set(ids))
    secured = document["paths"]["/v1/sessions"]["get"]
    assert secured["security"] and "401" in secured["responses"]
    assert document["paths"]["/health"]["get"]["security"] == []
    refs = re.findall(r'"#/components/schemas/(\w+)"', http.get("/openapi.json").text)
    assert refs and set(refs) <= set(document["components"]["schemas"])


def test_openapi_passes_the_spec_validator(http):
    validator = pytest.importorskip("openapi_spec_validator")
    validator.validate(http.get("/openapi.json").json())


def test_docs_page_is_self_contained(http):
    page = http.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "/openapi.json" in page.text
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page.text)
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "connect-src 'self'" in csp
