"""End-to-end checks of the PDF writer with poppler (pdfinfo, pdftotext, pdffonts, pdftoppm).

Needs the Debian packages poppler-utils and poppler-data (CJK CMaps); the CJK rendering test also
needs a CJK font (fonts-wqy-zenhei). qpdf is used when present.
"""

from __future__ import annotations

import re
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tea_agent_mini.export import PdfDocument, PdfMeta, markdown_to_pdf
from tests.export.pdf_helpers import run as _run
from tests.export.pdf_helpers import text as _text
from tests.export.pdf_helpers import write as _write

pytestmark = pytest.mark.skipif(
    not all(shutil.which(tool) for tool in ("pdftotext", "pdfinfo", "pdffonts", "pdftoppm")),
    reason="poppler-utils not installed (apt-get install poppler-utils poppler-data)",
)

CHINESE = "你好，世界。这是一个测试。"
FIXED_DATE = datetime(2024, 5, 6, 7, 8, 9, tzinfo=timezone.utc)

SAMPLE = f"""# Quarterly report

An English paragraph with **bold words** and `inline code`
that was soft-wrapped in the source.

{CHINESE}

Hello 世界 mixed

## Lists

- first bullet
- second bullet

1. first step
2. second step

```python
def hello(name):
    if name:
        return name
```

---

Last line of page one.

<!-- pagebreak -->

## Page two

日本語のテキストです。

\f

한국어 텍스트입니다.
"""


def _info(path: Path) -> dict[str, str]:
    result = _run("pdfinfo", "-enc", "UTF-8", path)
    assert result.returncode == 0, result.stderr
    pairs = (line.split(":", 1) for line in result.stdout.splitlines() if ":" in line)
    return {key.strip(): value.strip() for key, value in pairs}


def _pages(path: Path) -> list[str]:
    return _text(path).split("\f")[:-1]


@pytest.fixture
def sample_pdf(tmp_path: Path) -> Path:
    meta = PdfMeta(title="季度报告 Report", author="Ada", subject="Tests", created=FIXED_DATE)
    return _write(tmp_path, markdown_to_pdf(SAMPLE, meta))


def test_pdfinfo_reads_metadata_and_pages(sample_pdf: Path) -> None:
    info = _info(sample_pdf)
    assert info["Title"] == "季度报告 Report"
    assert info["Author"] == "Ada"
    assert info["Subject"] == "Tests"
    assert info["Creator"] == "tea_agent_mini"
    assert info["Producer"].startswith("tea_agent_mini ")
    assert "2024" in info["CreationDate"]
    assert info["PDF version"] == "1.7"
    assert info["Pages"] == "3"
    assert info["Page size"].startswith("595.28 x 841.89")


def test_text_extracts_exactly(sample_pdf: Path) -> None:
    lines = _text(sample_pdf).splitlines()
    assert "Quarterly report" in lines
    assert CHINESE in lines
    assert "Hello 世界 mixed" in lines
    assert "日本語のテキストです。" in lines
    assert "한국어 텍스트입니다." in lines
    joined = " ".join(lines)
    assert (
        "An English paragraph with bold words and inline code that was soft-wrapped in the source."
        in joined
    )


def test_page_breaks_and_footers(sample_pdf: Path) -> None:
    pages = _pages(sample_pdf)
    assert len(pages) == 3
    assert "Last line of page one." in pages[0] and "Page two" not in pages[0]
    assert "日本語のテキストです。" in pages[1] and "한국어" not in pages[1]
    assert "한국어 텍스트입니다." in pages[2]
    for number, page in enumerate(pages, start=1):
        assert f"Page {number} of 3" in page


def test_cjk_fonts_are_type0_with_to_unicode(sample_pdf: Path) -> None:
    result = _run("pdffonts", sample_pdf)
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines()[2:]}
    assert set(rows) == {
        "Helvetica",
        "Helvetica-Bold",
        "Courier",
        "STSong-Light-UniGB-UTF16-H",
        "KozMinPro-Regular-UniJIS-UTF16-H",
        "HYSMyeongJo-Medium-UniKS-UTF16-H",
    }
    for name in ("STSong-Light", "KozMinPro-Regular", "HYSMyeongJo-Medium"):
        row = next(r for key, r in rows.items() if key.startswith(name))
        assert row[1:4] == ["CID", "Type", "0"]
        assert row[-5:-2] == ["no", "no", "yes"]  # not embedded, not subset, has ToUnicode


def test_code_block_keeps_indentation(tmp_path: Path) -> None:
    document = PdfDocument()
    document.code_block("def hello(name):\n    if name:\n        return name\n\treturn None")
    lines = [line for line in _text(_write(tmp_path, document.to_bytes()), "-layout").splitlines()]
    starts = {line.strip(): len(line) - len(line.lstrip()) for line in lines if line.strip()}
    base = starts["def hello(name):"]
    assert starts["if name:"] - base == 4
    assert starts["return name"] - base == 8
    assert starts["return None"] - base == 4  # the tab became four spaces


def test_long_code_line_is_wrapped_not_lost(tmp_path: Path) -> None:
    long_line = "    result = " + " + ".join(f"value_{i}" for i in range(60))
    document = PdfDocument()
    document.code_block(long_line)
    text = " ".join(_text(_write(tmp_path, document.to_bytes())).split())
    assert " ".join(long_line.split()) in text
    assert len([w for w in text.split() if w.startswith("value_")]) == 60


def test_long_text_flows_onto_several_pages(tmp_path: Path) -> None:
    words = [f"word{i:04d}" for i in range(3000)]
    paragraphs = [" ".join(words[i : i + 100]) for i in range(0, len(words), 100)]
    path = _write(tmp_path, markdown_to_pdf("\n\n".join(paragraphs)))
    pages = _pages(path)
    assert len(pages) == int(_info(path)["Pages"]) >= 3
    found = re.findall(r"word\d{4}", _text(path))
    assert found == words
    for number, page in enumerate(pages, start=1):
        assert f"Page {number} of {len(pages)}" in page


def test_long_chinese_text_wraps_and_extracts(tmp_path: Path) -> None:
    text = CHINESE * 40
    path = _write(tmp_path, markdown_to_pdf(text))
    lines = [line for line in _text(path).splitlines() if line and not line.startswith("Page ")]
    assert len(lines) > 5
    assert "".join(lines) == text
    assert not any(line.startswith(("，", "。")) for line in lines)


def test_explicit_page_breaks_set_page_count(tmp_path: Path) -> None:
    document = PdfDocument(PdfMeta(title="Breaks"))
    for index in range(4):
        document.paragraph(f"Section {index}")
        document.page_break()
    document.page_break()  # an empty page is never started twice
    assert document.page_count == 4  # nor written when nothing follows the last break
    path = _write(tmp_path, document.to_bytes())
    assert _info(path)["Pages"] == "4"
    pages = _pages(path)
    assert [f"Section {i}" in pages[i] for i in range(4)] == [True] * 4


def test_lists_hang_their_continuation_lines(tmp_path: Path) -> None:
    item = "a long list item " * 20
    document = PdfDocument()
    document.bullet_list([item.strip(), "short"])
    document.numbered_list(["one", "two"], start=7)
    text = _text(_write(tmp_path, document.to_bytes()), "-layout")
    lines = [line for line in text.splitlines() if line.strip()]
    assert lines[0].lstrip().startswith("• a long list item")
    text_column = lines[0].index("a long")
    assert len(lines[1]) - len(lines[1].lstrip()) == text_column  # hanging indent
    assert any(line.strip() == "7. one" for line in lines)
    assert any(line.strip() == "8. two" for line in lines)


def test_replaced_characters_do_not_break_the_file(tmp_path: Path) -> None:
    document = PdfDocument()
    document.paragraph("emoji 😀 arrow → café \x00 end")
    text = _text(_write(tmp_path, document.to_bytes()))
    assert "emoji 😀 arrow -> café end" in text


def test_every_page_renders(sample_pdf: Path, tmp_path: Path) -> None:
    result = _run("pdftoppm", "-r", "40", "-png", sample_pdf, tmp_path / "page")
    assert result.returncode == 0, result.stderr
    assert "Syntax Error" not in result.stderr
    images = sorted(tmp_path.glob("page-*.png"))
    assert len(images) == 3
    for image in images:
        assert image.read_bytes().startswith(b"\x89PNG") and image.stat().st_size > 1000


def _dark_pixels(tmp_path: Path, text: str) -> int:
    document = PdfDocument()
    document.paragraph(text)
    path = _write(tmp_path, document.to_bytes(), "ink.pdf")
    crop = ["-x", "0", "-y", "0", "-W", "800", "-H", "200"]
    result = _run("pdftoppm", "-r", "100", "-gray", "-singlefile", *crop, path, tmp_path / "ink")
    assert result.returncode == 0 and "Error" not in result.stderr, result.stderr
    data = (tmp_path / "ink.pgm").read_bytes()
    header = re.match(rb"P5\s+\d+\s+\d+\s+255\s", data)
    assert header
    return sum(1 for value in data[header.end() :] if value < 128)


def test_chinese_glyphs_are_painted(tmp_path: Path) -> None:
    if shutil.which("fc-list") is None or not _run("fc-list", ":lang=zh").stdout.strip():
        pytest.skip("no Chinese font installed (apt-get install fonts-wqy-zenhei)")
    # A missing font paints the same empty box for every character, so a one-stroke character
    # and a many-stroke one only differ in ink when real glyphs are drawn.
    sparse = _dark_pixels(tmp_path, "一" * 8)
    dense = _dark_pixels(tmp_path, "鬱" * 8)
    assert dense > 3 * sparse > 0


@pytest.mark.skipif(shutil.which("qpdf") is None, reason="qpdf not installed")
def test_qpdf_finds_no_structural_errors(sample_pdf: Path) -> None:
    result = _run("qpdf", "--check", sample_pdf)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No syntax or stream encoding errors found" in result.stdout
