"""Table layout: column widths from the cells' content, and every cell wrapped to its column.

Widths follow the automatic layout of HTML tables: columns whose content fits on one line get
that width; when the table would be wider than the room it has, every column keeps at least its
widest unbreakable word (no more than an equal share, when even those do not fit) and the rest of
the room goes to the columns in proportion to how much they would still grow.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .layout import REGULAR, Line, Span, TextFlow, spans_of

CELL_PADDING = 4.0
LEFT, CENTER, RIGHT = "left", "center", "right"

Cell = str | Sequence[Span]


@dataclass(frozen=True)
class TableLayout:
    """Column widths (padding included) and each cell's wrapped lines; a newline in a cell's text
    starts a new line within it."""

    widths: list[float]
    aligns: list[str]
    header: list[list[Line]]
    rows: list[list[list[Line]]]

    @property
    def width(self) -> float:
        return sum(self.widths)


def layout_table(
    header: Sequence[Cell],
    rows: Sequence[Sequence[Cell]],
    aligns: Sequence[str],
    available: float,
    flow_for: Callable[[Sequence[Span]], TextFlow],
) -> TableLayout:
    """Lays out the table in ``available`` points; ``flow_for`` gives the text flow for a cell."""
    columns = max([len(header), *(len(row) for row in rows)], default=1) or 1
    grid = [_cells(row, columns) for row in [header, *rows]]
    flows = [[flow_for([s for part in cell for s in part]) for cell in row] for row in grid]
    minimum = [0.0] * columns
    natural = [0.0] * columns
    for row, row_flows in zip(grid, flows, strict=True):
        for column, (cell, flow) in enumerate(zip(row, row_flows, strict=True)):
            for part in cell:
                widest, whole = flow.extent(part)
                minimum[column] = max(minimum[column], widest)
                natural[column] = max(natural[column], whole)
    pad = 2 * CELL_PADDING
    widths = column_widths([m + pad for m in minimum], [n + pad + 0.01 for n in natural], available)
    wrapped = [
        [
            [line for part in cell for line in flow.wrap(part, width - pad)]
            for cell, flow, width in zip(row, row_flows, widths, strict=True)
        ]
        for row, row_flows in zip(grid, flows, strict=True)
    ]
    kinds = [a if a in (CENTER, RIGHT) else LEFT for a in aligns]
    kinds += [LEFT] * (columns - len(kinds))
    return TableLayout(widths, kinds[:columns], wrapped[0], wrapped[1:])


def column_widths(minimum: list[float], natural: list[float], available: float) -> list[float]:
    """Widths within ``available`` for columns with these minimum and natural widths."""
    if sum(natural) <= available:
        return natural
    if sum(minimum) > available:
        share = available / len(minimum)
        minimum = [min(m, share) for m in minimum]
    room = available - sum(minimum)
    grow = [max(n - m, 0.0) for n, m in zip(natural, minimum, strict=True)]
    total = sum(grow)
    if total <= 0:
        return [m + room / len(minimum) for m in minimum]
    return [m + room * g / total for m, g in zip(minimum, grow, strict=True)]


def row_height(cells: Sequence[Sequence[Line]], leading: float) -> float:
    return 2 * CELL_PADDING + max([1, *(len(lines) for lines in cells)]) * leading


def _cells(row: Sequence[Cell], columns: int) -> list[list[list[Span]]]:
    """Each cell as its lines of spans (split at newlines); missing cells are empty."""
    padded = [*row[:columns], *([""] * (columns - len(row)))]
    return [_split_lines(spans_of(cell)) for cell in padded]


def _split_lines(spans: list[Span]) -> list[list[Span]]:
    lines: list[list[Span]] = [[]]
    for span in spans:
        pieces = span.text.split("\n")
        for index, piece in enumerate(pieces):
            if index:
                lines.append([])
            if piece:
                lines[-1].append(Span(piece, span.style))
    return [line or [Span("", REGULAR)] for line in lines]
