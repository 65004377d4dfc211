from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from tea_agent_mini.errors import ToolError, WorkspaceError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.tools.files.savefile import toolkit_save_file


@pytest.fixture
def ctx(workspace: Path, tea_home: Path) -> ToolContext:
    return ToolContext(workspace=workspace, home=tea_home)


def test_text_write_then_append(ctx, workspace):
    out = toolkit_save_file(ctx, "notes/a.txt", "first\r\nline\n")
    assert out.startswith("created 12 bytes in notes/a.txt")
    toolkit_save_file(ctx, "notes/a.txt", "more\n", mode="append")
    assert (workspace / "notes/a.txt").read_bytes() == b"first\r\nline\nmore\n"


def test_chunked_base64_reassembles_binary_exactly(ctx, workspace):
    payload = bytes(range(256)) * 40 + b"\x00\xff\r\n\x1a"
    encoded = base64.b64encode(payload).decode()
    cuts = [0, 1001, 2050, 7777, len(encoded)]  # not multiples of 4: split anywhere
    chunks = [encoded[a:b] for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
    order = [2, 0, 3, 1]  # out of order on purpose
    for n, index in enumerate(order):
        out = toolkit_save_file(
            ctx, "bin/blob.dat", chunks[index], "base64", chunk_index=index, total_chunks=4
        )
        if n < 3:
            assert "waiting for chunk(s)" in out
            assert not (workspace / "bin/blob.dat").exists()  # nothing half-written
    assert "4 chunks assembled" in out
    assert (workspace / "bin/blob.dat").read_bytes() == payload
    assert not any((ctx.home / "tmp" / "save_file").iterdir())  # staging cleaned up


def test_chunked_text_keeps_line_endings_and_replaces_atomically(ctx, workspace):
    target = workspace / "big.txt"
    target.write_text("old content")
    parts = ["alpha\r\n", "beta\n", "gamma"]
    for index, part in enumerate(parts):
        toolkit_save_file(ctx, "big.txt", part, chunk_index=index, total_chunks=3)
        if index < 2:
            assert target.read_text() == "old content"
    assert target.read_bytes() == b"alpha\r\nbeta\ngamma"


def test_chunked_append(ctx, workspace):
    (workspace / "log.txt").write_text("start\n")
    toolkit_save_file(ctx, "log.txt", "b\n", mode="append", chunk_index=1, total_chunks=2)
    toolkit_save_file(ctx, "log.txt", "a\n", mode="append", chunk_index=0, total_chunks=2)
    assert (workspace / "log.txt").read_text() == "start\na\nb\n"


def test_resending_chunk_zero_starts_over(ctx, workspace):
    toolkit_save_file(ctx, "x.txt", "stale-", chunk_index=0, total_chunks=2)
    toolkit_save_file(ctx, "x.txt", "fresh-", chunk_index=0, total_chunks=2)
    toolkit_save_file(ctx, "x.txt", "end", chunk_index=1, total_chunks=2)
    assert (workspace / "x.txt").read_text() == "fresh-end"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"chunk_index": 0}, "both chunk_index and total_chunks"),
        ({"chunk_index": 3, "total_chunks": 3}, "between 0 and 2"),
        ({"chunk_index": 0, "total_chunks": 0}, "total_chunks must be"),
        ({"encoding": "base64"}, "not base64"),
    ],
)
def test_bad_requests_are_refused(ctx, workspace, kwargs, message):
    with pytest.raises(ToolError, match=message):
        toolkit_save_file(ctx, "f.txt", "hello world!", **kwargs)
    assert not (workspace / "f.txt").exists()


def test_paths_outside_the_workspace_are_refused(ctx, workspace):
    with pytest.raises(WorkspaceError):
        toolkit_save_file(ctx, "../escape.txt", "x")
    assert not (workspace.parent / "escape.txt").exists()


@pytest.mark.skipif(os.name != "posix", reason="permission bits")
def test_overwrite_keeps_permissions(ctx, workspace):
    script = workspace / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    toolkit_save_file(ctx, "run.sh", "#!/bin/sh\necho hi\n")
    assert script.stat().st_mode & 0o777 == 0o755
