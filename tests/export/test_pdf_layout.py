"""Unit tests of the PDF writer that need no external tool: file structure, metrics, text flow,
markdown parsing."""

from __future__ import annotations

import re
import zlib
from datetime import datetime, timedelta, timezone

import pytest

from tea_agent_mini.export import PdfDocument, PdfMeta, Span, markdown_to_pdf, parse_markdown
from tea_agent_mini.export.fonts import (
    COURIER,
    HELVETICA,
    HELVETICA_BOLD,
    FontMetrics,
    cjk_script,
    to_winansi,
)
from tea_agent_mini.export.layout import BOLD, CODE, REGULAR, TextFlow
from tea_agent_mini.export.markdown_blocks import (
    CodeBlock,
    Heading,
    ListBlock,
    PageBreak,
    Paragraph,
    Rule,
    parse_inline,
)
from tea_agent_mini.export.pdf import pdf_date, text_string

FIXED = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def _streams(data: bytes) -> list[bytes]:
    bodies = re.findall(rb"stream\n(.*?)\nendstream", data, re.DOTALL)
    return [zlib.decompress(body) for body in bodies]


def test_xref_offsets_point_at_their_objects() -> None:
    data = markdown_to_pdf("# Title\n\nHello 世界\n\n```\ncode\n```", PdfMeta(created=FIXED))
    assert data.startswith(b"%PDF-1.7\n")
    assert data.endswith(b"%%EOF\n")
    xref_at = int(re.search(rb"startxref\n(\d+)\n%%EOF\n$", data).group(1))
    assert data[xref_at:].startswith(b"xref\n0 ")
    count = int(re.match(rb"xref\n0 (\d+)\n", data[xref_at:]).group(1))
    table = data[xref_at:].split(b"\n", 2)[2]
    entries = [table[i * 20 : (i + 1) * 20] for i in range(count)]
    assert entries[0] == b"0000000000 65535 f \n"
    for number, entry in enumerate(entries[1:], start=1):
        assert entry.endswith(b" 00000 n \n")
        offset = int(entry[:10])
        assert data[offset:].startswith(b"%d 0 obj\n" % number)
    assert re.search(rb"trailer\n<< /Size %d /Root 1 0 R /Info \d+ 0 R /ID" % count, data)


def test_output_is_deterministic_for_a_fixed_date() -> None:
    meta = PdfMeta(title="Same", created=FIXED)
    assert markdown_to_pdf("text 文字", meta) == markdown_to_pdf("text 文字", meta)
    assert markdown_to_pdf("text", meta) != markdown_to_pdf("text", PdfMeta(title="Other"))


def test_info_dictionary_holds_the_metadata() -> None:
    meta = PdfMeta(title="T (1)", author="Zoë", subject="S", creator="me", created=FIXED)
    data = markdown_to_pdf("x", meta)
    info = re.search(rb"<< /Title .*? >>", data).group(0).decode("latin-1")
    assert "/Title (T \\(1\\))" in info
    assert "/Author <FEFF005A006F00EB>" in info
    assert "/Subject (S)" in info and "/Creator (me)" in info
    assert "/Producer (tea_agent_mini " in info
    assert "/CreationDate (D:20240102030405+00'00')" in info


@pytest.mark.parametrize(
    ("moment", "expected"),
    [
        (datetime(2024, 1, 2, 3, 4, 5), "D:20240102030405+00'00'"),
        (
            datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=8))),
            "D:20240102030405+08'00'",
        ),
        (
            datetime(2024, 1, 2, tzinfo=timezone(timedelta(hours=-3, minutes=-30))),
            "D:20240102000000-03'30'",
        ),
    ],
)
def test_pdf_date(moment: datetime, expected: str) -> None:
    assert pdf_date(moment) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("plain", "(plain)"), ("a\\b(c)", "(a\\\\b\\(c\\))"), ("é", "<FEFF00E9>"), ("a\x00b", "(ab)")],
)
def test_text_string(text: str, expected: str) -> None:
    assert text_string(text) == expected


@pytest.mark.parametrize(
    ("text", "font", "width"),
    [
        ("W", HELVETICA, 944),
        ("i", HELVETICA, 222),
        ("i", HELVETICA_BOLD, 278),
        ("é€", HELVETICA, 1112),
        ("Hello", HELVETICA, 722 + 556 + 222 + 222 + 556),
        ("iW é", COURIER, 2400),
    ],
)
def test_latin_widths_come_from_the_afm_tables(text: str, font: str, width: int) -> None:
    assert FontMetrics().text_width(text, font, 1000) == pytest.approx(width)


@pytest.mark.parametrize(
    ("char", "shown"),
    [
        ("é", "é"),
        ("€", "€"),
        ("→", "->"),
        ("😀", "?"),
        ("\x00", ""),
        ("\u200b", ""),
        ("ā", "a"),
        ("\u2003", " "),
        ("ﬁ", "fi"),
        ("\ud800", "?"),
    ],
)
def test_to_winansi_replaces_what_winansi_lacks(char: str, shown: str) -> None:
    assert to_winansi(char) == shown


@pytest.mark.parametrize(
    ("char", "script"),
    [("中", "han"), ("。", "han"), ("，", "han"), ("の", "ja"), ("カ", "ja"), ("한", "ko"),
     ("a", None), ("é", None), ("😀", None), ("𠀀", None)],
)  # fmt: skip
def test_cjk_script(char: str, script: str | None) -> None:
    assert cjk_script(char) == script


def test_mixed_line_switches_font_per_run() -> None:
    line = TextFlow(FontMetrics(), 10).line([Span("Hello 世界 mixed")])
    assert [(run.font, run.text) for run in line.runs] == [
        (HELVETICA, "Hello "),
        ("zh", "世界"),
        (HELVETICA, " mixed"),
    ]
    assert line.runs[1].width == pytest.approx(20.0)  # one em per CJK character
    assert line.runs[2].x == pytest.approx(line.runs[0].width + 20.0)


def test_kana_moves_han_to_the_japanese_font() -> None:
    data = markdown_to_pdf("日本語のテキスト\n\n中文段落", PdfMeta(created=FIXED))
    assert b"/BaseFont /KozMinPro-Regular-UniJIS-UTF16-H" in data
    assert b"/BaseFont /STSong-Light-UniGB-UTF16-H" in data
    content = b"".join(_streams(data))
    assert re.search(rb"/C2 [\d.]+ Tf 1 0 0 1 [\d. ]+ Tm <65E5672C8A9E306E", content)
    assert re.search(rb"/C1 [\d.]+ Tf 1 0 0 1 [\d. ]+ Tm <4E2D6587", content)


def test_latin_only_document_has_no_cjk_font() -> None:
    data = markdown_to_pdf("Just English.", PdfMeta(created=FIXED))
    assert b"Type0" not in data and b"ToUnicode" not in data


def test_to_unicode_cmap_lists_the_used_characters() -> None:
    data = markdown_to_pdf("你好", PdfMeta(created=FIXED))
    cmap = next(s for s in _streams(data) if b"begincmap" in s)
    assert b"<4F60> <4F60>" in cmap and b"<597D> <597D>" in cmap
    assert b"2 beginbfchar" in cmap


@pytest.mark.parametrize("width", [60.0, 150.0, 400.0])
def test_wrap_fits_the_width_and_keeps_every_word(width: float) -> None:
    text = "The quick brown fox jumps over the lazy dog " * 12 + "Pneumonoultramicroscopic"
    lines = TextFlow(FontMetrics(), 11).wrap([Span(text)], width)
    assert all(line.width <= width + 1e-6 for line in lines)
    assert "".join(line.text.replace(" ", "") for line in lines) == text.replace(" ", "")
    assert all(not line.text.startswith(" ") and not line.text.endswith(" ") for line in lines)


def test_wrap_cjk_never_starts_a_line_with_closing_punctuation() -> None:
    text = "你好，世界。这是一个测试。" * 10
    lines = TextFlow(FontMetrics(), 10).wrap([Span(text)], 95.0)
    assert "".join(line.text for line in lines) == text
    assert all(not line.text.startswith(("，", "。")) for line in lines)
    assert len(lines) > 10


def test_wrap_keeps_styles_apart() -> None:
    spans = [Span("plain "), Span("bold", BOLD), Span(" and "), Span("code", CODE)]
    (line,) = TextFlow(FontMetrics(), 10).wrap(spans, 500)
    assert [run.font for run in line.runs] == [HELVETICA, HELVETICA_BOLD, HELVETICA, COURIER]


def test_wrap_code_repeats_indentation_and_loses_nothing() -> None:
    code = "        call(" + ", ".join(f"argument_{i}" for i in range(20)) + ")"
    lines = TextFlow(FontMetrics(), 9).wrap_code(code, 200.0)
    assert len(lines) > 3
    assert all(line.text.startswith("        ") for line in lines)
    assert all(line.width <= 200.0 + 1e-6 for line in lines)
    rebuilt = lines[0].text + "".join(line.text[8:] for line in lines[1:])
    assert rebuilt == code


def test_wrap_code_hard_breaks_a_word_without_spaces() -> None:
    lines = TextFlow(FontMetrics(), 10).wrap_code("x" * 100, 60.0)
    assert [len(line.text) for line in lines] == [10] * 10


def test_parse_markdown_blocks() -> None:
    text = (
        "# Title\n\nfirst line\nsecond line\n\n## Sub ##\n\n- a\n- b\n  - nested\n"
        "  continued\n\n1. one\n2) two\n\n```py\n    indented\n\n  x\n```\n\n---\n\n"
        "<!-- PageBreak -->\n\f\n### Three\n#### Four\n汉字第一行\n第二行\n"
    )
    blocks = parse_markdown(text)
    assert blocks[0] == Heading(1, "Title")
    assert blocks[1] == Paragraph("first line second line")
    assert blocks[2] == Heading(2, "Sub")
    bullets = blocks[3]
    assert isinstance(bullets, ListBlock)
    assert [(i.level, i.ordered, i.text) for i in bullets.items] == [
        (0, False, "a"),
        (0, False, "b"),
        (1, False, "nested continued"),
    ]
    numbered = blocks[4]
    assert [(i.number, i.text) for i in numbered.items] == [(1, "one"), (2, "two")]
    assert blocks[5] == CodeBlock("    indented\n\n  x")
    assert blocks[6:9] == [Rule(), PageBreak(), PageBreak()]
    assert blocks[9:] == [Heading(3, "Three"), Heading(4, "Four"), Paragraph("汉字第一行第二行")]


def test_unclosed_fence_runs_to_the_end() -> None:
    assert parse_markdown("```\n# not a heading\n- nor a list") == [
        CodeBlock("# not a heading\n- nor a list")
    ]


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        ("plain", [Span("plain")]),
        ("a **b** c", [Span("a "), Span("b", BOLD), Span(" c")]),
        ("use `x = 1` here", [Span("use "), Span("x = 1", CODE), Span(" here")]),
        ("__bold__`code`", [Span("bold", BOLD), Span("code", CODE)]),
        ("not **closed", [Span("not **closed", REGULAR)]),
    ],
)
def test_parse_inline(text: str, spans: list[Span]) -> None:
    assert parse_inline(text) == spans


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\f",
        "```",
        "- ",
        "#",
        "\x00\x01\x1b[31m ansi",
        "lone \ud800 surrogate and 😀 emoji",
        "𠀀 ext-B and ｶﾞ halfwidth",
        "word" * 500,
        "\t\t  \n\n\n   ",
        "| table | row |\n|---|---|\n| a | b |",
    ],
)
def test_odd_input_still_gives_a_pdf(text: str) -> None:
    data = markdown_to_pdf(text, PdfMeta(title=text))
    assert data.startswith(b"%PDF-1.7") and data.endswith(b"%%EOF\n")
    assert b"/Count " in data


def test_document_rejects_a_page_too_small_for_its_margins() -> None:
    with pytest.raises(ValueError):
        PdfDocument(page_size=(150, 150))


def test_page_break_on_an_empty_page_adds_nothing() -> None:
    document = PdfDocument()
    document.page_break()
    document.page_break()
    assert document.page_count == 1
    document.paragraph("x")
    document.page_break()
    document.paragraph("y")
    assert document.page_count == 2
