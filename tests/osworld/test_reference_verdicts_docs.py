"""vdesk's text-document and PDF metrics give OSWorld's own verdicts: each case is scored by both
(tests/osworld/reference.py) on documents built here with python-docx and odfpy, and PDFs written
by hand (one Helvetica text object a page): right answers, wrong ones, near misses, missing and
damaged files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.osworld.reference import Case, assert_same_verdicts, write_file as _write


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


# -- the Writer family -----------------------------------------------------------------------
def _runs(path: Path, paragraphs: list[list[tuple[str, dict[str, Any]]]],
          build: Callable[[Any], None] | None = None) -> str:
    """A docx of paragraphs made of runs, each ``(text, {font attribute: value})``."""
    def add(document: Any) -> None:
        for runs in paragraphs:
            paragraph = document.add_paragraph()
            for text, font in runs:
                run = paragraph.add_run(text)
                for name, value in font.items():
                    setattr(run.font, name, value)
        if build is not None:
            build(document)
    return _docx(path, [], add)


def test_text_and_reference_metrics(tmp_path: Path) -> None:
    gold = _docx(tmp_path / "gold.docx", ["Gemini results", "", "Line one", "Line  two"])
    joined = _docx(tmp_path / "joined.docx", ["Gemini results", "Line one", "Line  two"])
    spaced = _docx(tmp_path / "spaced.docx", ["Gemini results", " ", "Line one", "Line two"])
    other = _docx(tmp_path / "other.docx", ["Gemini results", "Line one"])
    m = "compare_docx_files_and_ignore_new_lines"
    cases = [
        Case(m, joined, gold, label="empty paragraph dropped"),
        Case(m, joined, gold, {"ignore_blanks": False}, label="by paragraph"),
        Case(m, spaced, gold, label="blank paragraph, blanks ignored"),
        Case(m, spaced, gold, {"ignore_blanks": False}, label="blank paragraph is not empty"),
        Case(m, other, gold, label="a line missing"),
        Case(m, None, gold, label="missing"),
        Case(m, _odt(tmp_path / "a.odt", ["Gemini results"]), gold, label="odt"),
    ]
    body = ["Case study", "Some text", "References"]
    refs = ["Smith, J. (2020). A study. Journal, 1.", "", "Doe, A. (2019). Another. Press."]
    ref_gold = _docx(tmp_path / "refs.docx", body + refs)
    ref_same = _docx(tmp_path / "refs_same.docx", ["Other body"] + ["References"] + refs)
    ref_near = _docx(tmp_path / "refs_near.docx", body + ["Smith, J. (2021). A study. Journal, 1.",
                                                          "Doe, A. (2019). Another. Press"])
    ref_far = _docx(tmp_path / "refs_far.docx", body + ["Nothing alike at all here", "Zzz"])
    ref_short = _docx(tmp_path / "refs_short.docx", body + refs[:1])
    no_heading = _docx(tmp_path / "noref.docx", ["Case study", "Some text"])
    no_heading2 = _docx(tmp_path / "noref2.docx", ["Other"])
    heading_only = _docx(tmp_path / "headonly.docx", body)
    m = "compare_references"
    options = {"content_only": True, "reference_base_result": 0.6}
    cases += [
        Case(m, ref_same, ref_gold, options, label="same references"),
        Case(m, ref_near, ref_gold, options, label="near references"),
        Case(m, ref_near, ref_gold, label="near references, default base"),
        Case(m, ref_far, ref_gold, options, label="other references"),
        Case(m, ref_short, ref_gold, options, label="fewer references"),
        Case(m, no_heading, ref_gold, options, label="no heading in result"),
        Case(m, no_heading, no_heading2, options, label="no heading in either"),
        Case(m, heading_only, heading_only, options, label="heading, no references"),
        Case(m, ref_near, ref_gold, {"reference_indicator": "Some text"}, label="another heading"),
        Case(m, None, ref_gold, options, label="missing"),
        Case(m, _broken(tmp_path / "broken.docx"), ref_gold, options, label="damaged"),
    ]
    assert_same_verdicts(cases)


def test_check_tabstops(tmp_path: Path) -> None:
    from docx.enum.text import WD_TAB_ALIGNMENT
    from docx.shared import Inches

    def stops(*stops_of: list[tuple[float, Any]]) -> Callable[[Any], None]:
        def build(document: Any) -> None:
            for paragraph, these in zip([p for p in document.paragraphs if p.text.strip()], stops_of):
                for inches, alignment in these:
                    paragraph.paragraph_format.tab_stops.add_tab_stop(Inches(inches), alignment)
        return build

    right, left, clear = WD_TAB_ALIGNMENT.RIGHT, WD_TAB_ALIGNMENT.LEFT, WD_TAB_ALIGNMENT.CLEAR
    texts = ["Tea cup set\t12", "", "Blue mug big\t7"]
    gold = _docx(tmp_path / "gold.docx", texts, stops([(6, right)], [(6, right)]))
    same = _docx(tmp_path / "same.docx", texts, stops([(6, right), (0, left)], [(6, right), (2, clear)]))
    shifted = _docx(tmp_path / "shifted.docx", texts, stops([(5.5, right)], [(6, right)]))
    far = _docx(tmp_path / "far.docx", texts, stops([(6, right)], [(-60, right)]))
    aligned = _docx(tmp_path / "aligned.docx", texts, stops([(6, left)], [(6, right)]))
    unset = _docx(tmp_path / "unset.docx", texts)
    words = _docx(tmp_path / "words.docx", ["Tea cup\t12", "Blue mug big\t7"], stops([(6, right)], [(6, right)]))
    extra = _docx(tmp_path / "extra.docx", texts + ["More\t1"], stops([(6, right)], [(6, right)]))
    no_tab = _docx(tmp_path / "notab.docx", ["Tea cup set 12", "Blue mug big 7"], stops([(6, right)], [(6, right)]))
    m = "check_tabstops"
    split = {"word_number_split_by_tabstop": 3, "index": 0}
    assert_same_verdicts([
        Case(m, same, gold, label="same stops, ignored ones aside"),
        Case(m, same, gold, split, label="same stops, three words"),
        Case(m, shifted, gold, label="one stop shifted"),
        Case(m, far, gold, label="a stop far off: below 0"),
        Case(m, aligned, gold, label="other alignment"),
        Case(m, unset, gold, label="no stops"),
        Case(m, words, gold, split, label="two words before the tab"),
        Case(m, words, gold, label="two words, not counted"),
        Case(m, no_tab, gold, {"word_number_split_by_tabstop": 3, "index": 1}, label="no second part"),
        Case(m, extra, gold, label="another paragraph"),
        Case(m, None, gold, label="missing"),
        Case(m, _broken(tmp_path / "broken.docx"), gold, label="damaged"),
    ])


def test_formatting_metrics(tmp_path: Path) -> None:
    from docx.enum.text import WD_ALIGN_PARAGRAPH, WD_BREAK
    from docx.shared import Pt

    plain = {}
    h2o = _runs(tmp_path / "h2o.docx", [[("H", plain), ("2", {"subscript": True}), ("O", plain)]])
    h2o_gold = _runs(tmp_path / "h2o_gold.docx", [[("H", plain), ("2", {"subscript": True}), ("O", plain)]])
    h2o_plain = _runs(tmp_path / "h2o_plain.docx", [[("H2O", plain)]])
    h2o_shifted = _runs(tmp_path / "h2o_shift.docx", [[("H2", plain), ("O", {"subscript": True})]])
    h2o_super = _runs(tmp_path / "h2o_sup.docx", [[("H", plain), ("2", {"superscript": True}), ("O", plain)]])
    cases = [
        Case("compare_subscript_contains", h2o, h2o_gold, label="subscript"),
        Case("compare_subscript_contains", h2o_plain, h2o_gold, label="no subscript"),
        Case("compare_subscript_contains", h2o_shifted, h2o_gold, label="subscript elsewhere"),
        Case("compare_subscript_contains", h2o_super, h2o_gold, label="superscript"),
        Case("compare_subscript_contains", None, h2o_gold, label="missing"),
    ]
    times = {"name": "Times New Roman"}
    all_times = _runs(tmp_path / "times.docx", [[("Dublin ", times), ("Zoo", times)], [("Intro", times)]])
    one_arial = _runs(tmp_path / "arial.docx", [[("Dublin ", times), ("Zoo", {"name": "Arial"})]])
    unnamed = _runs(tmp_path / "unnamed.docx", [[("Dublin ", times), ("Zoo", plain)]])
    rule = {"font_name": "Times New Roman"}
    cases += [
        Case("compare_font_names", all_times, rule, label="all Times"),
        Case("compare_font_names", one_arial, rule, label="one run Arial"),
        Case("compare_font_names", unnamed, rule, label="a run inherits"),
        Case("compare_font_names", _docx(tmp_path / "empty.docx", []), rule, label="no runs"),
        Case("compare_font_names", None, rule, label="missing"),
    ]

    def italic(size: float | None) -> dict[str, Any]:
        return {"italic": True, "size": None if size is None else Pt(size)}

    text = [[("Title ", plain), ("Book", italic(14))], [("By ", plain), ("Someone", italic(14))]]
    italics_gold = _runs(tmp_path / "italic_gold.docx", [[("Title ", plain), ("Book", plain)],
                                                        [("By ", plain), ("Someone", plain)]])
    cases += [
        Case("check_italic_font_size_14", _runs(tmp_path / "it14.docx", text), italics_gold, label="all 14"),
        Case("check_italic_font_size_14", _runs(tmp_path / "it12.docx", [text[0], [("By ", plain), ("Someone", italic(12))]]),
             italics_gold, label="one italic 12"),
        Case("check_italic_font_size_14", _runs(tmp_path / "itnone.docx", [[("Title ", plain), ("Book", italic(None))]]
                                                + text[1:]), italics_gold, label="italic without a size"),
        Case("check_italic_font_size_14", _runs(tmp_path / "bold12.docx", [[("Title ", {"size": Pt(12)}), ("Book", plain)],
                                                                           text[1]]), italics_gold, label="12 pt not italic"),
        Case("check_italic_font_size_14", _runs(tmp_path / "ittext.docx", [[("Title ", plain), ("Books", italic(14))]]),
             italics_gold, label="text differs"),
        Case("check_italic_font_size_14", None, italics_gold, label="missing"),
    ]
    strike_gold = _docx(tmp_path / "strike_gold.docx", ["Course outline", "Old week 12 plan"])
    struck = {"strike": True}
    cases += [
        Case("evaluate_strike_through_last_paragraph",
             _runs(tmp_path / "struck.docx", [[("Course outline", plain)], [("Old week ", struck), ("12 plan", struck)]]),
             strike_gold, label="last struck"),
        Case("evaluate_strike_through_last_paragraph",
             _runs(tmp_path / "half.docx", [[("Course outline", plain)], [("Old week ", struck), ("12 plan", plain)]]),
             strike_gold, label="half struck"),
        Case("evaluate_strike_through_last_paragraph",
             _runs(tmp_path / "first.docx", [[("Course outline", struck)], [("Old week 12 plan", plain)]]),
             strike_gold, label="first struck"),
        Case("evaluate_strike_through_last_paragraph",
             _runs(tmp_path / "dstrike.docx", [[("Course outline", plain)], [("Old week 12 plan", {"double_strike": True})]]),
             strike_gold, label="double strike"),
        Case("evaluate_strike_through_last_paragraph",
             _runs(tmp_path / "struckx.docx", [[("Course outline", plain)], [("Old week 13 plan", struck)]]),
             strike_gold, label="text differs"),
        Case("evaluate_strike_through_last_paragraph", _docx(tmp_path / "e1.docx", []),
             _docx(tmp_path / "e2.docx", []), label="no paragraphs"),
        Case("evaluate_strike_through_last_paragraph", None, strike_gold, label="missing"),
    ]

    def centre(alignment: Any) -> Callable[[Any], None]:
        def build(document: Any) -> None:
            document.paragraphs[0].alignment = alignment
        return build

    cases += [
        Case("is_first_line_centered", _docx(tmp_path / "c.docx", ["Title", "Body"], centre(WD_ALIGN_PARAGRAPH.CENTER)),
             pass_expected=False, label="centred"),
        Case("is_first_line_centered", _docx(tmp_path / "r.docx", ["Title", "Body"], centre(WD_ALIGN_PARAGRAPH.RIGHT)),
             pass_expected=False, label="right"),
        Case("is_first_line_centered", _docx(tmp_path / "n.docx", ["Title", "Body"]), pass_expected=False, label="unset"),
        Case("is_first_line_centered", _docx(tmp_path / "none.docx", []), pass_expected=False, label="no paragraph"),
        Case("is_first_line_centered", None, pass_expected=False, label="missing"),
    ]

    def breaks(count: int, kind: Any = WD_BREAK.PAGE) -> Callable[[Any], None]:
        def build(document: Any) -> None:
            for paragraph in document.paragraphs[:count]:
                paragraph.runs[0].add_break(kind)
        return build

    pages = ["One", "Two", "Three", "Four", "Five", "Six"]
    five = _docx(tmp_path / "five.docx", pages, breaks(5))
    cases += [
        Case("contains_page_break", five, {"page_break_count": 5}, label="five breaks"),
        Case("contains_page_break", _docx(tmp_path / "four.docx", pages, breaks(4)), {"page_break_count": 5}, label="four"),
        Case("contains_page_break", _docx(tmp_path / "lines.docx", pages, breaks(5, WD_BREAK.LINE)),
             {"page_break_count": 5}, label="line breaks"),
        Case("contains_page_break", five, {}, label="any break"),
        Case("contains_page_break", _docx(tmp_path / "nobreak.docx", pages), {}, label="no break"),
        Case("contains_page_break", None, {"page_break_count": 5}, label="missing"),
    ]
    assert_same_verdicts(cases)


def test_footers_and_default_font(tmp_path: Path) -> None:
    from docx.enum.section import WD_SECTION

    def footers(*texts: str | None) -> Callable[[Any], None]:
        def build(document: Any) -> None:
            for _ in texts[1:]:
                document.add_section(WD_SECTION.NEW_PAGE)
            for section, text in zip(document.sections, texts):
                if text is not None:
                    section.footer.is_linked_to_previous = False
                    section.footer.paragraphs[0].text = text
        return build

    m = "has_page_numbers_in_footers"
    cases = [
        Case(m, _docx(tmp_path / "p1.docx", ["Body"], footers("Page 1")), pass_expected=False, label="number"),
        Case(m, _docx(tmp_path / "p2.docx", ["Body"], footers("Page 1", "Page 2")), pass_expected=False, label="two"),
        Case(m, _docx(tmp_path / "p3.docx", ["Body"], footers("Page 1", "Page")), pass_expected=False,
             label="second without"),
        Case(m, _docx(tmp_path / "p4.docx", ["Body"], footers("Page 1", None)), pass_expected=False,
             label="second linked"),
        Case(m, _docx(tmp_path / "p5.docx", ["Body"], footers("Page one")), pass_expected=False, label="words"),
        Case(m, _docx(tmp_path / "p6.docx", ["Body"]), pass_expected=False, label="no footer"),
        Case(m, None, pass_expected=False, label="missing"),
    ]

    def xcu(path: Path, *fonts: str, item: str = "/org.openoffice.Office.Writer/DefaultFont",
            prop: str = "Standard") -> str:
        items = "".join(f'<item oor:path="{item}"><prop oor:name="{prop}" oor:op="fuse"><value>{font}</value>'
                        f"</prop></item>" for font in fonts)
        path.write_text('<?xml version="1.0" encoding="UTF-8"?><oor:items xmlns:oor="http://openoffice.org/2001/registry"'
                        ' xmlns:xs="http://www.w3.org/2001/XMLSchema"'
                        f' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">{items}</oor:items>')
        return str(path)

    rule = {"font_name": "Times New Roman"}
    m = "find_default_font"
    cases += [
        Case(m, xcu(tmp_path / "a.xcu", "Times New Roman"), rule, label="set"),
        Case(m, xcu(tmp_path / "b.xcu", "Liberation Serif"), rule, label="other font"),
        Case(m, xcu(tmp_path / "c.xcu", "Arial", "Times New Roman"), rule, label="last wins"),
        Case(m, xcu(tmp_path / "d.xcu", "Times New Roman", "Arial"), rule, label="last wins, other"),
        Case(m, xcu(tmp_path / "e.xcu", "Times New Roman", prop="Heading"), rule, label="heading font"),
        Case(m, xcu(tmp_path / "f.xcu", "Times New Roman", item="/org.openoffice.Office.Calc/DefaultFont"), rule,
             label="Calc's"),
        Case(m, xcu(tmp_path / "g.xcu"), rule, label="nothing set"),
        Case(m, _write(tmp_path / "h.xcu", "<oor:items"), rule, label="damaged"),
        Case(m, None, rule, label="missing"),
    ]
    assert_same_verdicts(cases)



def test_colours_and_highlights(tmp_path: Path) -> None:
    from docx.shared import RGBColor

    words = [["apple", "dog"], ["egg", "cat"]]

    def coloured(colours: dict[str, RGBColor | None]) -> Callable[[Any], None]:
        def build(document: Any) -> None:
            table = document.add_table(rows=2, cols=2)
            for i, row in enumerate(words):
                for j, word in enumerate(row):
                    run = table.cell(i, j).paragraphs[0].add_run(word)
                    if colours.get(word) is not None:
                        run.font.color.rgb = colours[word]
        return build

    red, blue = RGBColor(255, 0, 0), RGBColor(0, 0, 255)
    right = {"apple": red, "egg": red, "dog": blue, "cat": blue}
    gold = _docx(tmp_path / "gold.docx", ["Sight words"], coloured({}))
    m = "evaluate_colored_words_in_tables"
    cases = [
        Case(m, _docx(tmp_path / "right.docx", ["Sight words"], coloured(right)), gold, label="right"),
        Case(m, _docx(tmp_path / "near.docx", ["Sight words"], coloured({**right, "egg": RGBColor(250, 5, 0)})), gold,
             label="nearly red"),
        Case(m, _docx(tmp_path / "dark.docx", ["Sight words"], coloured({**right, "egg": RGBColor(200, 0, 0)})), gold,
             label="dark red"),
        Case(m, _docx(tmp_path / "dark2.docx", ["Sight words"], coloured({**right, "egg": RGBColor(200, 0, 0)})), gold,
             {"threshold": 20}, label="dark red, wide threshold"),
        Case(m, _docx(tmp_path / "swap.docx", ["Sight words"], coloured({**right, "dog": red})), gold, label="swapped"),
        Case(m, _docx(tmp_path / "unset.docx", ["Sight words"], coloured({**right, "cat": None})), gold,
             label="a word without colour"),
        Case(m, _docx(tmp_path / "text.docx", ["Sight word"], coloured(right)), gold, label="text differs"),
        Case(m, None, gold, label="missing"),
    ]

    def odt(path: Path, spans: list[tuple[str, str | None]], style_kind: str = "text") -> str:
        from odf.opendocument import OpenDocumentText
        from odf.style import Style, TextProperties
        from odf.text import P, Span

        document = OpenDocumentText()
        for name, colour in {(n, c) for _, c in spans for n in [f"T{c}"] if c}:
            style = Style(name=name, family=style_kind)
            style.addElement(TextProperties(backgroundcolor=colour))
            document.automaticstyles.addElement(style)
        paragraph = P()
        for text, colour in spans:
            if colour:
                paragraph.addElement(Span(stylename=f"T{colour}", text=text))
            else:
                paragraph.addText(text)
        document.text.addElement(paragraph)
        document.save(str(path))
        return str(path)

    script = [("Hello, ", None), ("this is", None), (" a call.", None)]
    odt_gold = odt(tmp_path / "gold.odt", script)
    m = "check_highlighted_words"
    cases += [
        Case(m, odt(tmp_path / "clean.odt", script), odt_gold, label="nothing highlighted"),
        Case(m, odt(tmp_path / "yellow.odt", [script[0], ("this is", "#ffff00"), script[2]]), odt_gold,
             label="a yellow span"),
        Case(m, odt(tmp_path / "green.odt", [script[0], ("this is", "#00ff00"), script[2]]), odt_gold,
             label="a green span"),
        Case(m, odt(tmp_path / "upper.odt", [script[0], ("this is", "#FFFF00"), script[2]]), odt_gold,
             label="yellow in capitals"),
        Case(m, odt(tmp_path / "words.odt", [("Hello, this is a call!", None)]), odt_gold, label="text differs"),
        Case(m, _docx(tmp_path / "clean.docx", ["Hello, this is a call."]), odt_gold, label="a docx"),
        Case(m, None, odt_gold, label="missing"),
    ]
    assert_same_verdicts(cases)


def test_compare_docx_images(tmp_path: Path) -> None:
    from PIL import Image

    def png(name: str, colour: tuple[int, int, int], size: tuple[int, int] = (8, 8)) -> str:
        path = tmp_path / name
        Image.new("RGB", size, colour).save(path)
        return str(path)

    red, red2, blue = png("red.png", (255, 0, 0)), png("red2.png", (255, 0, 0)), png("blue.png", (0, 0, 255))
    near = png("near.png", (254, 0, 0))
    jpeg = tmp_path / "red.jpg"
    Image.new("RGB", (8, 8), (255, 0, 0)).save(jpeg, quality=100)

    def pictures(*images: str) -> Callable[[Any], None]:
        def build(document: Any) -> None:
            for image in images:
                document.add_picture(image)
        return build

    gold = _docx(tmp_path / "gold.docx", ["Schedule"], pictures(red, blue))
    m = "compare_docx_images"
    assert_same_verdicts([
        Case(m, _docx(tmp_path / "same.docx", ["Other text"], pictures(red2, blue)), gold, label="same images"),
        Case(m, _docx(tmp_path / "swap.docx", ["Schedule"], pictures(blue, red)), gold, label="swapped"),
        Case(m, _docx(tmp_path / "near.docx", ["Schedule"], pictures(near, blue)), gold, label="one pixel value off"),
        Case(m, _docx(tmp_path / "one.docx", ["Schedule"], pictures(red)), gold, label="one image"),
        Case(m, _docx(tmp_path / "jpeg.docx", ["Schedule"], pictures(str(jpeg), blue)), gold, label="as JPEG"),
        Case(m, _docx(tmp_path / "none.docx", ["Schedule"]), _docx(tmp_path / "none2.docx", []), label="no images"),
        Case(m, None, gold, label="missing"),
        Case(m, _broken(tmp_path / "broken.docx"), gold, label="damaged"),
    ])
