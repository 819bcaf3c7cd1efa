"""vdesk's text-document and PDF metrics give OSWorld's own verdicts: each case is scored by both
(tests/osworld/reference.py) on documents built here with python-docx and odfpy, and PDFs written
by hand (one Helvetica text object a page): right answers, wrong ones, near misses, missing and
damaged files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.osworld.reference import Case, assert_same_verdicts


def _docx(path: Path, paragraphs: list[str], build: Callable[[Any], None] | None = None) -> str:
    """A docx of ``paragraphs`` at ``path``, then ``build(document)`` for anything more."""
    import docx

    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    if build is not None:
        build(document)
    document.save(str(path))
    return str(path)


def _odt(path: Path, paragraphs: list[str], heading: str | None = None) -> str:
    """An odt whose paragraphs are ``paragraphs``; a ``\\x00`` in one marks where a ``text:s``
    space goes (which the reference does not read)."""
    from odf.opendocument import OpenDocumentText
    from odf.text import H, P, S

    document = OpenDocumentText()
    if heading is not None:
        document.text.addElement(H(outlinelevel=1, text=heading))
    for text in paragraphs:
        paragraph = P()
        for i, part in enumerate(text.split("\x00")):
            if i:
                paragraph.addElement(S())
            if part:
                paragraph.addText(part)
        document.text.addElement(paragraph)
    document.save(str(path))
    return str(path)


def _pdf(path: Path, pages: list[list[str]]) -> str:
    """A PDF of ``pages``, each a list of lines in Helvetica (no library writes text PDFs here)."""
    objects: list[bytes] = [b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    contents = []
    for lines in pages:
        shown = b" ".join(b"(" + line.encode("latin-1") + b") Tj T*" for line in lines)
        stream = b"BT /F1 12 Tf 72 720 Td 14 TL " + shown + b" ET"
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
        contents.append(len(objects))
    tree = len(objects) + len(pages) + 1
    kids = []
    for content in contents:
        objects.append(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 1 0 R >> >>"
                       b" /Contents %d 0 R >>" % (tree, content))
        kids.append(len(objects))
    objects.append(b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % k for k in kids), len(kids)))
    objects.append(b"<< /Type /Catalog /Pages %d 0 R >>" % tree)
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, len(objects), xref)
    path.write_bytes(out)
    return str(path)


def _broken(path: Path) -> str:
    path.write_bytes(b"not a zip, not a PDF")
    return str(path)


def test_compare_docx_files(tmp_path: Path) -> None:
    gold = _docx(tmp_path / "gold.docx", ["Hello world", "", "Second line"])
    same = _docx(tmp_path / "same.docx", ["Hello world", "", "Second line"])
    spaced = _docx(tmp_path / "spaced.docx", ["Hello   world", "Second line"])
    cased = _docx(tmp_path / "cased.docx", ["hello WORLD", "", "second line"])
    swapped = _docx(tmp_path / "swapped.docx", ["Second line", "", "Hello world"])
    padded = _docx(tmp_path / "padded.docx", [" Second line", "", "Hello world"])
    typo = _docx(tmp_path / "typo.docx", ["Hello word", "", "Second line"])
    longer = _docx(tmp_path / "longer.docx", ["Hello world", "", "Second line", "Third"])
    empty = _docx(tmp_path / "empty.docx", [])
    empty2 = _docx(tmp_path / "empty2.docx", [])
    odt_gold = _odt(tmp_path / "gold.odt", ["Hello world", "Second line"])
    odt_same = _odt(tmp_path / "same.odt", ["Hello world", "Second line"])
    odt_space = _odt(tmp_path / "space.odt", ["Hello\x00world", "Second line"])
    odt_heading = _odt(tmp_path / "heading.odt", ["Hello world", "Second line"], heading="Title")
    upper = _docx(tmp_path / "GOLD.DOCX", ["Hello world", "", "Second line"])
    broken = _broken(tmp_path / "broken.docx")
    m = "compare_docx_files"
    assert_same_verdicts([
        Case(m, same, gold, label="same"),
        Case(m, spaced, gold, label="blanks ignored by default"),
        Case(m, spaced, gold, {"ignore_blanks": False}, label="blanks counted"),
        Case(m, cased, gold, label="case counts"),
        Case(m, cased, gold, {"ignore_case": True}, label="case ignored"),
        Case(m, cased, gold, {"ignore_case": True, "ignore_blanks": False}, label="case ignored by paragraph"),
        Case(m, swapped, gold, label="order counts"),
        Case(m, swapped, gold, {"ignore_order": True}, label="order ignored"),
        Case(m, padded, gold, {"ignore_order": True}, label="order ignored, padded paragraph"),
        Case(m, padded, gold, {"ignore_order": True, "ignore_blanks": False}, label="sorted as they are"),
        Case(m, typo, gold, label="typo"),
        Case(m, typo, gold, {"fuzzy_match": True}, label="typo fuzzy"),
        Case(m, typo, gold, {"fuzzy_match": True, "ignore_blanks": False}, label="typo fuzzy by paragraph"),
        Case(m, cased, gold, {"fuzzy_match": True, "ignore_blanks": False, "ignore_case": True},
             label="fuzzy by paragraph, case ignored"),
        Case(m, typo, gold, {"content_only": True}, label="content only"),
        Case(m, cased, gold, {"content_only": True, "ignore_case": True}, label="content only, case ignored"),
        Case(m, longer, gold, {"ignore_blanks": False}, label="more paragraphs"),
        Case(m, longer, gold, {"ignore_blanks": False, "fuzzy_match": True}, label="more paragraphs, fuzzy"),
        Case(m, spaced, gold, {"ignore_blanks": False, "delete_empty_lines": True}, label="empty lines deleted"),
        Case(m, swapped, gold, {"ignore_blanks": True, "ignore_order": True, "content_only": True,
                                "delete_empty_lines": True}, label="a real task's options"),
        Case(m, empty, empty2, {"ignore_blanks": False, "fuzzy_match": True}, label="both empty, fuzzy"),
        Case(m, empty, gold, label="empty"),
        Case(m, odt_same, odt_gold, label="odt same"),
        Case(m, odt_space, odt_gold, label="odt text:s not read"),
        Case(m, odt_heading, odt_gold, label="odt heading not read"),
        Case(m, odt_heading, odt_gold, {"ignore_blanks": False}, label="odt heading, by paragraph"),
        Case(m, odt_same, gold, label="odt against docx"),
        Case(m, upper, gold, label="suffix in capitals"),
        Case(m, None, gold, label="missing"),
        Case(m, broken, gold, label="damaged"),
    ])


def test_compare_docx_tables(tmp_path: Path) -> None:
    def tables(*grids: list[list[str]]) -> Callable[[Any], None]:
        def build(document: Any) -> None:
            for grid in grids:
                table = document.add_table(rows=len(grid), cols=len(grid[0]))
                for i, row in enumerate(grid):
                    for j, text in enumerate(row):
                        table.cell(i, j).text = text
        return build

    grid = [["Item", "Price"], ["Tea", "3"]]
    gold = _docx(tmp_path / "gold.docx", ["Prices"], tables(grid))
    same = _docx(tmp_path / "same.docx", ["Other text"], tables([["Item ", "Price"], ["Tea", " 3"]]))
    wrong = _docx(tmp_path / "wrong.docx", ["Prices"], tables([["Item", "Price"], ["Tea", "4"]]))
    wider = _docx(tmp_path / "wider.docx", ["Prices"], tables([["Item", "Price", ""], ["Tea", "3", ""]]))
    more = _docx(tmp_path / "more.docx", ["Prices"], tables(grid, [["x"]]))
    none = _docx(tmp_path / "none.docx", ["Prices"])

    def merged(document: Any) -> None:
        tables(grid)(document)
        table = document.tables[0]
        table.cell(1, 0).merge(table.cell(1, 1))
        table.cell(1, 0).text = "Tea"

    joined = _docx(tmp_path / "joined.docx", ["Prices"], merged)
    m = "compare_docx_tables"
    assert_same_verdicts([
        Case(m, gold, gold, label="itself"),
        Case(m, same, gold, label="same cells, stripped"),
        Case(m, wrong, gold, label="one cell differs"),
        Case(m, wider, gold, label="another column"),
        Case(m, more, gold, label="another table"),
        Case(m, none, gold, label="no table"),
        Case(m, none, none, label="neither has a table"),
        Case(m, joined, gold, label="merged cells"),
        Case(m, None, gold, label="missing"),
        Case(m, _broken(tmp_path / "broken.docx"), gold, label="damaged"),
    ])


def test_compare_line_spacing(tmp_path: Path) -> None:
    def spacing(*values: float | None) -> Callable[[Any], None]:
        def build(document: Any) -> None:
            for paragraph, value in zip(document.paragraphs, values):
                paragraph.paragraph_format.line_spacing = value
        return build

    texts = ["Intro", "Body", "End"]
    gold = _docx(tmp_path / "gold.docx", texts, spacing(1.0, 2.0, 1.5))
    same = _docx(tmp_path / "same.docx", texts, spacing(1.0, 2.0, 1.5))
    off = _docx(tmp_path / "off.docx", texts, spacing(1.0, 2.0, 1.0))
    unset = _docx(tmp_path / "unset.docx", texts, spacing(1.0, 2.0, None))
    other_text = _docx(tmp_path / "other.docx", ["Intro", "Body", "Ending"], spacing(1.0, 2.0, 1.5))
    extra = _docx(tmp_path / "extra.docx", ["Intro", "Body", "End", ""], spacing(1.0, 2.0, 1.5))
    m = "compare_line_spacing"
    assert_same_verdicts([
        Case(m, same, gold, label="same"),
        Case(m, off, gold, label="one paragraph's spacing"),
        Case(m, unset, gold, label="spacing unset"),
        Case(m, other_text, gold, label="same spacing, other text"),
        Case(m, extra, gold, label="an empty paragraph more"),
        Case(m, None, gold, label="missing"),
        Case(m, _broken(tmp_path / "broken.docx"), gold, label="damaged"),
    ])


def test_pdf_metrics(tmp_path: Path) -> None:
    gold = _pdf(tmp_path / "gold.pdf", [["Meeting agenda", "Thursday at noon"], ["Page two"]])
    same = _pdf(tmp_path / "same.pdf", [["Meeting agenda", "Thursday at noon"], ["Page two"]])
    one_page = _pdf(tmp_path / "one.pdf", [["Meeting agenda", "Thursday at noon", "Page two"]])
    near = _pdf(tmp_path / "near.pdf", [["Meeting agenda", "Friday at noon"], ["Page two"]])
    blank_first = _pdf(tmp_path / "blank.pdf", [[], ["Meeting agenda", "Thursday at noon"], ["Page two"]])
    other = _pdf(tmp_path / "other.pdf", [["Lunch menu: soup"]])
    textless = _pdf(tmp_path / "textless.pdf", [[]])
    broken = _broken(tmp_path / "broken.pdf")
    missing = str(tmp_path / "missing.pdf")
    m = "compare_pdfs"
    assert_same_verdicts([
        Case(m, same, gold, label="same"),
        Case(m, one_page, gold, label="same lines on one page"),
        Case(m, near, gold, label="one word differs"),
        Case(m, blank_first, gold, label="a blank page first"),
        Case(m, other, gold, label="other text"),
        Case(m, None, gold, label="missing result"),
        Case(m, None, textless, label="missing result, expected without text"),
        Case(m, missing, gold, label="result path without a file"),
        Case(m, broken, gold, label="damaged"),
        Case(m, [same, near], [gold, gold], label="two pairs"),
        Case(m, [same], [gold, gold], label="fewer results"),
        Case(m, [same, broken], [gold, gold], label="one pair damaged"),
        Case(m, [same, None], [gold, textless], label="a missing one of two"),
        Case(m, same, [gold], label="one result, a list expected"),
        Case(m, None, [gold], label="no result, a list expected"),
        Case(m, [], [], label="empty lists"),
        Case("check_pdf_pages", gold, {"relation": "eq", "ref_value": 2}, label="two pages"),
        Case("check_pdf_pages", one_page, {"relation": "eq", "ref_value": 2}, label="one page"),
        Case("check_pdf_pages", blank_first, {"relation": "ge", "ref_value": 2}, label="at least"),
        Case("check_pdf_pages", one_page, {"relation": "lt", "ref_value": 1}, label="fewer than"),
        Case("check_pdf_pages", None, {"relation": "eq", "ref_value": 1}, label="missing"),
        Case("check_pdf_pages", broken, {"relation": "eq", "ref_value": 1}, label="damaged"),
    ])
