"""poppler (pdftotext, pdffonts, pdftoppm) and qpdf as test oracles for the PDF writer."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

needs_poppler = pytest.mark.skipif(
    not all(shutil.which(tool) for tool in ("pdftotext", "pdffonts", "pdftoppm")),
    reason="poppler-utils not installed (apt-get install poppler-utils poppler-data)",
)
needs_cjk_font = pytest.mark.skipif(
    shutil.which("fc-list") is None
    or not subprocess.run(["fc-list", ":lang=zh"], capture_output=True, text=True).stdout.strip(),
    reason="no Chinese font installed (apt-get install fonts-wqy-zenhei)",
)


def run(*command: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(part) for part in command], capture_output=True, text=True, timeout=60, check=False
    )


def write(tmp_path: Path, data: bytes, name: str = "doc.pdf") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def text(path: Path, *options: str) -> str:
    result = run("pdftotext", *options, "-enc", "UTF-8", path, "-")
    assert result.returncode == 0, result.stderr
    assert "Error" not in result.stderr
    return result.stdout


def pages(path: Path, *options: str) -> list[str]:
    return text(path, *options).split("\f")[:-1]


def fonts(path: Path) -> dict[str, list[str]]:
    """pdffonts' rows by font name (Type 3 fonts have none: "[none]")."""
    result = run("pdffonts", path)
    assert result.returncode == 0, result.stderr
    return {line.split()[0]: line.split() for line in result.stdout.splitlines()[2:]}


def words(path: Path) -> list[tuple[str, float, float]]:
    """(word, xMin, yMin) of every word on the first page, from ``pdftotext -bbox``."""
    found = re.findall(
        r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="[\d.]+" yMax="[\d.]+">([^<]*)</word>',
        text(path, "-bbox", "-f", "1", "-l", "1"),
    )
    return [(word, float(x), float(y)) for x, y, word in found]


def gray_image(path: Path, tmp_path: Path, *, dpi: int = 72) -> tuple[int, int, bytes]:
    """(width, height, pixels) of the first page rendered in gray (one byte a pixel, 0 black).

    At 72 dpi a pixel is a PDF point, counted from the top of the page.
    """
    out = tmp_path / "render"
    result = run("pdftoppm", "-r", str(dpi), "-gray", "-singlefile", "-f", "1", path, out)
    assert result.returncode == 0 and "Error" not in result.stderr, result.stderr
    data = out.with_suffix(".pgm").read_bytes()
    header = re.match(rb"P5\s+(\d+)\s+(\d+)\s+255\s", data)
    assert header
    return int(header.group(1)), int(header.group(2)), data[header.end() :]


def dark_pixels(pixels: bytes, threshold: int = 128) -> int:
    return sum(1 for value in pixels if value < threshold)
