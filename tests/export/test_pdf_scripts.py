"""Mixed scripts: Chinese with kana and Hangul, italics, and the fallback glyph for emoji."""

from __future__ import annotations

import re
import shutil
import zlib
from pathlib import Path

import pytest

from tea_agent_mini.export import PdfDocument, PdfMeta, Span, markdown_to_pdf
from tea_agent_mini.export.fallback import clusters, is_emoji
from tea_agent_mini.export.fonts import (
    HELVETICA,
    HELVETICA_BOLD_OBLIQUE,
    HELVETICA_OBLIQUE,
    FontMetrics,
    cjk_font_for,
)
from tea_agent_mini.export.layout import BOLD_ITALIC, FALLBACK, ITALIC, TextFlow
from tests.export.pdf_helpers import (
    dark_pixels,
    fonts,
    gray_image,
    needs_cjk_font,
    needs_poppler,
    run,
    text,
    write,
)

MIXED = "中文和日本語のかなと한국어 汉字 混在 mixed"
EMOJI = "Emoji: 😀 👍🏽 👨‍👩‍👧 🇨🇳 ❤️ done"


def _streams(data: bytes) -> list[bytes]:
    return [zlib.decompress(s) for s in re.findall(rb"stream\n(.*?)\nendstream", data, re.S)]


@pytest.mark.parametrize(
    ("char", "preferred", "font"),
    [
        ("汉", "zh", "zh"),
        ("漢", "ja", "ja"),  # a kanji the Japanese font has
        ("汉", "ja", "zh"),  # a simplified character it lacks
        ("の", "zh", "ja"),
        ("한", "zh", "ko"),
        ("中", "ko", "ko"),
        ("㐀", "ja", "zh"),  # Extension A: only Adobe-GB1
        ("α", "zh", "zh"),  # Greek, not in WinAnsi: the CJK fonts have it
        ("😀", "zh", None),
        ("\ue000", "ja", None),  # private use: a codec maps it, no font has it
        ("\u1100", "ko", None),  # a conjoining jamo
    ],
)
def test_cjk_font_for_picks_a_font_that_has_the_character(char, preferred, font) -> None:
    assert cjk_font_for(char, preferred) == font


def test_han_next_to_kana_falls_back_per_character() -> None:
    line = TextFlow(FontMetrics(), 10, "ja").line([Span("日本語の汉字")])
    runs = [(run.font, run.text) for run in line.runs]
    assert runs == [("ja", "日本語の"), ("zh", "汉"), ("ja", "字")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a👍🏽b", ["a", "👍🏽", "b"]),
        ("👨‍👩‍👧", ["👨‍👩‍👧"]),
        ("🇨🇳🇯🇵", ["🇨🇳", "🇯🇵"]),
        ("❤️!", ["❤️", "!"]),
        ("1️⃣", ["1️⃣"]),
        ("a\u200db", ["a", "\u200d", "b"]),  # ZWJ joins emoji only
        ("e\u0301", ["e\u0301"]),
    ],
)
def test_clusters(text: str, expected: list[str]) -> None:
    assert clusters(text) == expected


def test_emoji_and_other_unknown_clusters_become_one_fallback_run_each() -> None:
    line = TextFlow(FontMetrics(), 10).line([Span("a😀👍🏽ไ❤️b")])
    assert [(run.font, run.text) for run in line.runs] == [
        (HELVETICA, "a"),
        (FALLBACK, "😀"),
        (FALLBACK, "👍🏽"),
        (FALLBACK, "ไ"),
        (FALLBACK, "❤️"),
        (HELVETICA, "b"),
    ]
    assert all(run.width == 10 for run in line.runs[1:5])  # one em each
    assert [is_emoji(run.text) for run in line.runs[1:5]] == [True, True, False, True]


def test_fallback_font_maps_codes_back_to_the_clusters() -> None:
    data = markdown_to_pdf("a 😀 b ❤️ c 😀", PdfMeta(title="x"))
    assert b"/Subtype /Type3" in data
    assert b"/Differences [0 /m /emoji /emoji]" in data  # 😀 twice, one code
    cmap = next(s for s in _streams(data) if b"begincmap" in s)
    assert b"<01> <D83DDE00>" in cmap and b"<02> <2764FE0F>" in cmap
    assert b"<00> <FF>" in cmap  # one-byte codes


def test_more_than_255_fallback_clusters_take_a_second_font() -> None:
    many = " ".join(chr(0x1F300 + i) for i in range(300))
    data = markdown_to_pdf(many)
    assert data.count(b"/Subtype /Type3") == 2
    content = b"".join(_streams(data))
    assert b"/E1 " in content and b"/E2 " in content


def test_italic_uses_the_oblique_faces_and_slants_cjk() -> None:
    line = TextFlow(FontMetrics(), 10).line([Span("it 斜", ITALIC), Span("bi", BOLD_ITALIC)])
    assert [run.font for run in line.runs] == [HELVETICA_OBLIQUE, "zh", HELVETICA_BOLD_OBLIQUE]
    data = markdown_to_pdf("*it 斜*")
    content = b"".join(_streams(data))
    assert re.search(rb"/C1 [\d.]+ Tf 1 0 0\.2 1 [\d. ]+ Tm <659C> Tj", content)
    assert b"/BaseFont /Helvetica-Oblique" in data


# -- with poppler -----------------------------------------------------------------------------


@needs_poppler
def test_mixed_chinese_kana_hangul_extracts_and_uses_three_fonts(tmp_path: Path) -> None:
    path = write(tmp_path, markdown_to_pdf(MIXED))
    assert MIXED in text(path).splitlines()
    names = set(fonts(path))
    assert {
        "STSong-Light-UniGB-UTF16-H",
        "KozMinPro-Regular-UniJIS-UTF16-H",
        "HYSMyeongJo-Medium-UniKS-UTF16-H",
    } <= names


def _ink(tmp_path: Path, words: str, threshold: int = 128) -> int:
    document = PdfDocument()
    document.paragraph(words)
    width, height, pixels = gray_image(write(tmp_path, document.to_bytes(), "ink.pdf"), tmp_path)
    return dark_pixels(pixels[: width * 90], threshold)  # the first line, above the footer


@needs_poppler
@needs_cjk_font
def test_simplified_han_next_to_kana_is_painted(tmp_path: Path) -> None:
    # Before the per-character choice, 汉 went to the Japanese font, which has no such glyph,
    # and nothing (or a box) was painted.
    kana = _ink(tmp_path, "かなかな")
    with_han = _ink(tmp_path, "かなかな" + "汉" * 6)
    assert with_han > kana + 6 * 12


@needs_poppler
@needs_cjk_font
def test_hangul_and_kana_are_painted(tmp_path: Path) -> None:
    assert _ink(tmp_path, "한국어 텍스트") > 100
    assert _ink(tmp_path, "ひらがな カタカナ") > 100


@needs_poppler
def test_emoji_extract_as_themselves_on_their_line(tmp_path: Path) -> None:
    path = write(tmp_path, markdown_to_pdf(EMOJI))
    assert EMOJI in text(path).splitlines()  # same line as the text around them, no "?"
    assert "?" not in text(path)
    assert any(row[1:3] == ["Type", "3"] for row in fonts(path).values())


@pytest.mark.skipif(shutil.which("qpdf") is None, reason="qpdf not installed")
def test_qpdf_accepts_fallback_fonts_tables_and_quotes(tmp_path: Path) -> None:
    markdown = f"{MIXED}\n\n> *{EMOJI}*\n\n| a | 😀 |\n|---|---|\n| 한 | **ไทย** |\n"
    path = write(tmp_path, markdown_to_pdf(markdown, PdfMeta(title="😀 check")))
    result = run("qpdf", "--check", path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No syntax or stream encoding errors found" in result.stdout


@needs_poppler
def test_emoji_fallback_glyph_is_painted(tmp_path: Path) -> None:
    assert _ink(tmp_path, "😀" * 5) > 5 * 15
    assert _ink(tmp_path, "ไทย", 200) > 3 * 15  # the box for other unknown scripts
