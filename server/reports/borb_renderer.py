"""The PDF report drawn with borb 3 (AGPL-3.0, the optional `reports` extra).

Importing this module imports borb, so only `server.reports.renderer.default_renderer` does it,
at render time. Before borb is first used, its usage statistics are switched off: borb 3.0.9
otherwise posts statistics over the network and, on first use in the main thread, replaces the
SIGTERM/SIGINT handlers with its own, which breaks a clean shutdown of the service. Text is
drawn with the standard PDF fonts, which cover Latin-1 only, so other characters are
transliterated or replaced. borb's producer line is kept, as its license asks.
"""

from __future__ import annotations

import contextlib
import functools
import io
import threading
import unicodedata
from datetime import UTC, datetime
from typing import Any

from borb.pdf import UsageStatistics

UsageStatistics.opt_out()  # before anything else of borb runs: no network, no signal handlers

from borb.pdf import (  # noqa: E402  (the opt-out above must run first)
    PDF,
    Document,
    FixedColumnWidthTable,
    HexColor,
    Image,
    Page,
    Paragraph,
    SingleColumnLayout,
    Standard14Fonts,
)
from borb.pdf import Table as BorbTable  # noqa: E402
from borb.pdf.layout_element.layout_element import LayoutElement  # noqa: E402

from server.reports.data import ReportData  # noqa: E402
from server.reports.sections import (  # noqa: E402
    Headline,
    ImageBlock,
    Section,
    Table,
    build_sections,
)
from server.thumbnails import thumbnail  # noqa: E402

#: Rows per drawn table: borb 3 cannot split a table across pages, so long tables are chunked.
ROWS_PER_TABLE = 22
#: Longest text drawn in one table cell or paragraph.
MAX_CELL_CHARS = 400
#: Longest unbroken word (longer ones get break points so they fit the column).
MAX_WORD_CHARS = 28
#: Size (points) at which a thumbnail is drawn.
THUMBNAIL_BOX = (220, 165)

_FONT = "Helvetica"
_BOLD = "Helvetica-Bold"
_GREEN = "1B7F3B"
_RED = "B3261E"
_GREY = "5F6368"
_HEADER_BACKGROUND = "E8EAED"

#: Characters outside Latin-1 with a readable substitute.
_SUBSTITUTES = {
    "\u20ac": "EUR",  # euro sign
    "\u2713": "v",  # check mark
    "\u2714": "v",
    "\u2717": "x",  # ballot x
    "\u201c": '"',  # curly quotes
    "\u201d": '"',
    "\u2018": "'",
    "\u2019": "'",
    "\u2013": "-",  # en and em dash
    "\u2014": "-",
    "\u2026": "...",  # ellipsis
    "\u2022": "*",  # bullet
    "\u0141": "L",  # letters NFKD does not decompose
    "\u0142": "l",
    "\u0152": "OE",
    "\u0153": "oe",
    "\u0110": "D",
    "\u0111": "d",
    "\u0131": "i",
}

_render_lock = threading.Lock()


def latin1(text: str) -> str:
    """Text the standard fonts can draw: transliterated to Latin-1, `?` where impossible."""
    out: list[str] = []
    for char in text:
        if char in ("\n", "\r", "\t"):
            out.append(" ")
        elif ord(char) < 32 or 127 <= ord(char) < 160:
            continue
        elif ord(char) < 256:
            out.append(char)
        elif char in _SUBSTITUTES:
            out.append(_SUBSTITUTES[char])
        else:
            decomposed = unicodedata.normalize("NFKD", char)
            base = "".join(c for c in decomposed if ord(c) < 256 and not unicodedata.combining(c))
            out.append(base or "?")
    return "".join(out)


def cell_text(text: str) -> str:
    """Safe, bounded cell text: Latin-1, at most MAX_CELL_CHARS, long words broken."""
    text = latin1(text).strip() or "-"
    if len(text) > MAX_CELL_CHARS:
        text = text[: MAX_CELL_CHARS - 3] + "..."
    words = []
    for word in text.split(" "):
        while len(word) > MAX_WORD_CHARS:
            cut = _break_point(word)
            words.append(word[:cut])
            word = word[cut:]
        words.append(word)
    return " ".join(words)


#: Where a long word (an email, a URL, a file name) reads best broken: before "@", after these.
_BREAK_AFTER = "./-_?&=,;:"


def _break_point(word: str) -> int:
    """Where to break a word longer than MAX_WORD_CHARS: the last natural break within the
    limit ("maria.gonzalez" | "@aseguradora.com.ar", "…/reports/" | "…"), else the limit.
    Never a break in the first third, which would leave a stub of a line."""
    for cut in range(MAX_WORD_CHARS, MAX_WORD_CHARS // 3, -1):
        if word[cut] == "@" or word[cut - 1] in _BREAK_AFTER:
            return cut
    return MAX_WORD_CHARS


@functools.cache
def _font(bold: bool) -> Any:
    """The standard font (built once: borb builds its metrics tables on every `get`)."""
    return Standard14Fonts.get(_BOLD if bold else _FONT)


@functools.cache
def _color(hex_code: str) -> Any:
    return HexColor(hex_code)


def _paragraph(
    text: str, *, size: int = 9, bold: bool = False, color: str = "000000", **kwargs: Any
) -> Any:
    return Paragraph(
        cell_text(text),
        font=_font(bold),
        font_size=size,
        font_color=_color(color),
        **kwargs,
    )


def _table(header: list[str] | None, rows: list[list[str]], widths: list[int]) -> Any:
    count = len(rows) + (1 if header else 0)
    table = FixedColumnWidthTable(
        number_of_rows=count, number_of_columns=len(widths), column_widths=widths
    )
    if header:
        for title in header:
            table.append_layout_element(
                _paragraph(title, bold=True, background_color=_color(_HEADER_BACKGROUND))
            )
    for row in rows:
        for value in row:
            table.append_layout_element(_paragraph(value))
    table.set_padding_on_all_cells(3, 4, 3, 4)
    return table


def _append_table(
    layout: Any, header: list[str] | None, rows: list[list[str]], widths: list[int]
) -> None:
    """Append a table; one taller than a page (borb refuses those) is split in halves, and a
    single row that still does not fit is shortened, so long texts never fail a report."""
    try:
        layout.append_layout_element(_table(header, rows, widths))
        return
    except AssertionError:  # borb 3 signals "too tall" with an assert, before painting anything
        pass
    if len(rows) > 1:
        middle = len(rows) // 2
        _append_table(layout, header, rows[:middle], widths)
        _append_table(layout, header, rows[middle:], widths)
        return
    shortened = [[cell if len(cell) <= 60 else cell[:57] + "..." for cell in rows[0]]]
    if shortened != rows:
        _append_table(layout, header, shortened, widths)
    else:
        layout.append_layout_element(_paragraph("(row too large to show)", color=_GREY))


def _chunks(rows: list[list[str]]) -> list[list[list[str]]]:
    return [rows[i : i + ROWS_PER_TABLE] for i in range(0, len(rows), ROWS_PER_TABLE)] or [[]]


class _Flow:
    """The page layout, keeping each heading on the same page as the element that follows it."""

    def __init__(self, layout: Any) -> None:
        self.layout = layout
        self.pending: str | None = None

    def heading(self, title: str) -> None:
        self.flush()
        self.pending = title

    def flush(self) -> None:
        if self.pending is not None:
            title, self.pending = self.pending, None
            self.layout.append_layout_element(_paragraph(title, size=13, bold=True, margin_top=14))

    def append_layout_element(self, element: Any) -> None:
        if self.pending is None:
            self.layout.append_layout_element(element)
            return
        title, self.pending = self.pending, None
        box = FixedColumnWidthTable(number_of_rows=2, number_of_columns=1, margin_top=14)
        box.append_layout_element(_paragraph(title, size=13, bold=True))
        box.append_layout_element(element)
        box.no_borders()
        box.set_padding_on_all_cells(0, 0, 6, 0)
        try:
            self.layout.append_layout_element(box)
        except AssertionError:  # together they are taller than a page: heading, then element
            self.layout.append_layout_element(_paragraph(title, size=13, bold=True, margin_top=14))
            self.layout.append_layout_element(element)


class BorbRenderer:
    none_text = "None."
    no_image_text = "(image not available)"
    """`ReportRenderer` with borb: A4 portrait, one column, page numbers in the footer."""

    def render(self, report: ReportData) -> bytes:
        headline, sections = build_sections(report)
        with _render_lock:  # borb keeps module-level state; render one document at a time
            # The report's words for an empty table and a missing image (its language).
            self.none_text, self.no_image_text = headline.none_text, headline.no_image_text
            document = Document()
            page = Page()
            document.append_page(page)
            layout = _Flow(SingleColumnLayout(page))
            self._headline(layout, headline)
            for section in sections:
                self._section(layout, section)
            layout.flush()
            self._footers(document, headline)
            self._metadata(document, report, headline)
            buffer = io.BytesIO()
            PDF.write(what=document, where_to=buffer)
        return buffer.getvalue()

    def _headline(self, layout: Any, headline: Headline) -> None:
        layout.append_layout_element(_paragraph(headline.company, size=11, color=_GREY))
        layout.append_layout_element(_paragraph(headline.title, size=16, bold=True))
        layout.append_layout_element(_paragraph(headline.subtitle, size=9))
        verdict = headline.verdict_text
        color = {"approved": _GREEN, "disapproved": _RED}.get(headline.verdict, _GREY)
        layout.append_layout_element(
            _paragraph(verdict, size=30, bold=True, color=color, margin_top=12)
        )
        for reason in headline.reasons:
            layout.append_layout_element(_paragraph(f"- {reason}", size=11))
        for line in headline.reviewed:
            layout.append_layout_element(_paragraph(line, size=11, bold=True, margin_top=6))

    def _section(self, layout: _Flow, section: Section) -> None:
        layout.heading(section.title)
        if section.rows:
            rows = [[key, value] for key, value in section.rows]
            for chunk in _chunks(rows):
                _append_table(layout, None, chunk, [160, 355])
        for table in section.tables:
            self._data_table(layout, table)
        for text in section.paragraphs:
            layout.append_layout_element(_paragraph(text))
        for block in section.images:
            self._image(layout, block)

    def _data_table(self, layout: Any, table: Table) -> None:
        widths = table.weights or [1] * len(table.header)  # borb scales them to the column
        if not table.rows:
            layout.append_layout_element(_paragraph(self.none_text, color=_GREY))
            return
        for chunk in _chunks(table.rows):
            _append_table(layout, table.header, chunk, widths)

    def _image(self, layout: Any, block: ImageBlock) -> None:
        """Caption over the thumbnail beside its facts (kept together), then validations and
        damages."""
        picture = thumbnail(block.content) if block.content else None
        if picture is not None:
            width, height = THUMBNAIL_BOX
            scale = min(width / picture.width, height / picture.height)
            size = (max(1, int(picture.width * scale)), max(1, int(picture.height * scale)))
            visual: Any = Image(picture, size=size)
        else:
            visual = _paragraph(self.no_image_text, color=_GREY)
        facts = _table(None, [[k, v] for k, v in block.facts], [2, 3])
        row = FixedColumnWidthTable(
            number_of_rows=2, number_of_columns=2, column_widths=[1, 1], margin_top=10
        )
        row.append_layout_element(
            BorbTable.TableCell(_paragraph(block.caption, size=11, bold=True), column_span=2)
        )
        row.append_layout_element(visual)
        row.append_layout_element(facts)
        row.no_borders()
        row.set_padding_on_all_cells(0, 6, 4, 0)
        layout.append_layout_element(row)
        self._data_table(layout, block.validations)
        if block.damages is not None:
            self._data_table(layout, block.damages)

    def _footers(self, document: Any, headline: Headline) -> None:
        total = document.get_number_of_pages()
        for index in range(total):
            page = document.get_page(index)
            width, _ = page.get_size()
            _paragraph(
                headline.footer % {"page": index + 1, "total": total},
                size=8,
                color=_GREY,
                horizontal_alignment=LayoutElement.HorizontalAlignment.RIGHT,
            ).paint(available_space=(40, 20, int(width) - 80, 20), page=page)

    def _metadata(self, document: Any, report: ReportData, headline: Headline) -> None:
        info = document["Trailer"]["Info"]
        created = datetime.now(UTC)
        if report.generated_at:
            with contextlib.suppress(ValueError):
                created = datetime.fromisoformat(report.generated_at.replace("Z", "+00:00"))
        stamp = created.astimezone(UTC).strftime("D:%Y%m%d%H%M%S+00'00'")
        info["Title"] = latin1(f"Inspection report {headline.inspection_id}")
        info["Author"] = latin1(headline.company)
        info["Subject"] = latin1(f"{headline.template}: {headline.verdict}")
        info["Creator"] = "inspectlang"
        info["CreationDate"] = stamp
        info["ModDate"] = stamp
