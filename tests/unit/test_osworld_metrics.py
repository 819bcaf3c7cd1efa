"""OSWorld's metrics on real files made by the libraries (openpyxl, python-docx, python-pptx, a
PDF), each with a case that passes and one that fails, and the lookup's refusals."""

from __future__ import annotations

import difflib
import io
import json
import zipfile
from pathlib import Path

import pytest
from rapidfuzz import fuzz
from hypothesis import given
from hypothesis import strategies as st

from vdesk.errors import DocumentError, UnsupportedMetric
from vdesk.osworld.metrics import lookup, names
from vdesk.osworld.metrics import inputs

FILES = Path(__file__).resolve().parents[2] / "examples" / "apps" / "files"
ISSUE_METRICS = [
    "exact_match", "check_include_exclude", "match_in_list", "is_in_list", "check_list", "check_direct_json_object",
    "check_json", "file_contains", "check_line_number", "diff_text_file", "literal_match", "fuzzy_match",
    "check_accessibility_tree", "compare_table", "compare_csv", "compare_docx_files",
    "compare_pptx_files", "compare_pdfs", "is_expected_url_pattern_match", "is_expected_active_tab",
    "is_expected_tabs", "is_expected_bookmarks",
]


def score(name, result, expected=None, **options) -> float:
    return lookup(name)(result, expected, **options)


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# -- the registry ----------------------------------------------------------------------------
def test_every_metric_the_issue_names_is_registered():
    assert set(ISSUE_METRICS) <= set(names())


def test_an_unknown_metric_option_or_rule_is_refused_by_name():
    with pytest.raises(UnsupportedMetric, match="'compare_image_text' is not supported"):
        lookup("compare_image_text")  # its verdict is easyocr's reading, a model vdesk does not download
    with pytest.raises(UnsupportedMetric, match="option 'bogus'"):
        lookup("compare_csv").check_options({"bogus": 1})
    with pytest.raises(UnsupportedMetric, match="rule type 'filter'"):
        lookup("compare_table").check_options({"rules": [{"type": "filter"}]})
    with pytest.raises(UnsupportedMetric, match="examine_colour"):
        lookup("compare_pptx_files").check_options({"examine_colour": True})
    lookup("compare_pptx_files").check_options({"examine_top_position": True, "examine_shape": False, "_note": "why"})
    with pytest.raises(UnsupportedMetric, match="'_note'"):  # comments are accepted only where the reference ignores them
        lookup("compare_csv").check_options({"_note": "why"})


# -- general ---------------------------------------------------------------------------------
@given(st.text(), st.text())
def test_exact_match_is_equality(result, wanted):
    assert score("exact_match", result, {"expected": wanted}) == float(result == wanted)


@given(st.text(), st.lists(st.text(min_size=1), max_size=3), st.lists(st.text(min_size=1), max_size=3))
def test_include_exclude(text, include, exclude):
    expected = all(s in text for s in include) and not any(s in text for s in exclude)
    assert score("check_include_exclude", text, {"include": include, "exclude": exclude}) == float(expected)


def test_lists_and_membership():
    assert score("match_in_list", "b", {"expected": ["a", "b"]}) == 1.0
    assert score("match_in_list", "c", {"expected": ["a", "b"]}) == 0.0
    assert score("is_in_list", ["a", "b"], {"expected": "b"}) == 1.0
    assert score("is_in_list", ["a"], {"expected": "b"}) == 0.0
    assert score("is_in_list", None, {"expected": "b"}) == 0.0


def test_check_list_patterns_over_lines(tmp_path):
    path = write(tmp_path, "out.txt", "alpha 1\nbeta 2\n")
    assert score("check_list", path, {"expect": [r"^alpha \d$"], "unexpect": ["gamma"]}) == 1.0
    assert score("check_list", path, {"expect": [r"^beta$"]}) == 0.0
    assert score("check_list", path, {"unexpect": ["beta"]}) == 0.0


def test_direct_json_object():
    result = {"name": "Ada", "tags": ["x", "y"], "title": "Hello World"}
    assert score("check_direct_json_object", result, {"expected": {"name": "Ada"}}) == 1.0
    assert score("check_direct_json_object", result, {"expected": {"name": "Bob"}}) == 0.0
    # Candidates count only where the reference's contains mode reads them; exact mode compares the list.
    assert score("check_direct_json_object", result, {"expected": {"name": ["Bob", "Ada"]}}) == 0.0
    assert score("check_direct_json_object", result, {"expected": {"name": ["Bob", "Ada"]}, "expect_in_result": True}) == 1.0
    assert score("check_direct_json_object", result, {"expected": {"title": "World"}, "expect_in_result": True}) == 1.0
    assert score("check_direct_json_object", result, {"expected": {"title": "world"}, "expect_in_result": True}) == 0.0
    assert score("check_direct_json_object", result, {"expected": {"tags": "z"}}, expect_in_result=True) == 0.0
    assert score("check_direct_json_object", None, {"expected": {"name": "Ada"}}) == 0.0


def test_check_json_rules_on_a_file(tmp_path):
    path = write(tmp_path, "settings.json", json.dumps({"editor": {"fontSize": 14, "theme": "dark"}}))
    assert score("check_json", path, {"expect": [{"key": ["editor", "fontSize"], "method": "eq", "ref": 14}]}) == 1.0
    assert score("check_json", path, {"expect": [{"key": ["editor", "fontSize"], "method": "gt", "ref": 20}]}) == 0.0
    assert score("check_json", path, {"unexpect": [{"key": ["editor", "theme"], "method": "re", "ref": "^d"}]}) == 0.0
    assert score("check_json", path, {"expect": [{"key": ["missing"], "method": "eq", "ref": 1}]}) == 0.0
    yaml_path = write(tmp_path, "c.yaml", "a:\n  b: 2\n")
    assert score("check_json", yaml_path, {"expect": [{"key": ["a", "b"], "method": "approx:0.5", "ref": 2.2}]},
                 is_yaml=True) == 1.0


def test_text_file_metrics(tmp_path):
    log = write(tmp_path, "log.txt", "12:00:01 start\nno time here\n23:59:59 stop\n")
    assert score("file_contains", log, {"expected": ["start", "stop"]}) == 1.0
    assert score("file_contains", log, {"expected": ["start", "pause"]}) == 0.0
    assert score("check_line_number", log, {"expected": 2}) == 1.0
    assert score("check_line_number", log, {"expected": 3}) == 0.0
    same = write(tmp_path, "same.txt", Path(log).read_text())
    other = write(tmp_path, "other.txt", "something else entirely")
    assert score("diff_text_file", log, same) == 1.0
    assert score("diff_text_file", log, other) == pytest.approx(
        difflib.SequenceMatcher(None, Path(log).read_text().splitlines(), ["something else entirely"]).ratio(),
        abs=1e-12)  # line by line, as the reference compares
    assert score("file_contains", None, {"expected": ["x"]}) == 0.0


def test_literal_and_fuzzy_match():
    assert score("literal_match", "Hello", "hello", ignore_case=True) == 1.0
    assert score("literal_match", "Hello", "hello") == 0.0
    assert score("literal_match", ["A", "b"], ["a", "B"], type="list", ignore_case=True) == 1.0
    assert score("literal_match", ["a"], ["a", "b"], type="list") == 0.0
    assert score("fuzzy_match", "kitten", {"expected": "kitten"}) == 1.0
    assert score("fuzzy_match", "kitten", {"expected": "sitting"}) == pytest.approx(8 / 13)  # 2·4 matched of 6+7


def test_infeasible_is_no_metric_of_its_own():
    # The whole func "infeasible" is judged by the agent's last action (tests/osworld/test_tasks_offline.py);
    # in a list the reference calls infeasible() with a result, which it does not take.
    with pytest.raises(UnsupportedMetric, match="whole func"):
        lookup("infeasible")


TREE = """<desktop-frame xmlns:st="https://accessibility.ubuntu.example.org/ns/state">
  <application name="Google Chrome"><entry name="Address and search bar" st:focused="true">example.org/a</entry>
  <push-button name="Reload"/></application></desktop-frame>"""


def test_accessibility_tree_by_css_and_xpath():
    assert score("check_accessibility_tree", TREE, [{"selectors": ['entry[name="Address and search bar"]'],
                                                     "text": "example.org/a"}]) == 1.0
    assert score("check_accessibility_tree", TREE, {"xpath": "//push-button[@name='Reload']"}) == 1.0
    assert score("check_accessibility_tree", TREE, {"xpath": "//entry[@st:focused='true']", "text": "example.org/b"}) == 0.0
    assert score("check_accessibility_tree", TREE, {"selectors": ["entry"], "text": "example.org/b",
                                                    "exact": False}) == pytest.approx(12 / 13)  # one letter of 13
    assert score("check_accessibility_tree", TREE, {"selectors": ["menu"]}) == 0.0


def test_an_xml_entity_bomb_is_not_expanded():
    bomb = ('<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
            '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><desktop-frame><label>&c;</label></desktop-frame>')
    assert score("check_accessibility_tree", bomb, {"selectors": ["label"], "text": "a" * 1000}) == 0.0


# -- tables ----------------------------------------------------------------------------------
def workbook(tmp_path: Path, name: str, rows, bold_a1: bool = False, freeze: str | None = None) -> str:
    import openpyxl
    from openpyxl.styles import Font

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Sheet1"
    for row in rows:
        sheet.append(row)
    if bold_a1:
        sheet["A1"].font = Font(bold=True, name="Arial")
    if freeze:
        sheet.freeze_panes = freeze
    path = tmp_path / name
    book.save(path)
    return str(path)


def test_compare_table_sheet_data_and_names(tmp_path):
    rows = [["Item", "Price"], ["Pens", 2.5], ["Ink", 10]]
    result = workbook(tmp_path, "r.xlsx", rows)
    same = workbook(tmp_path, "e.xlsx", [["Item", "Price"], ["Pens", 2.50001], ["Ink", 10.0]])
    other = workbook(tmp_path, "o.xlsx", [["Item", "Price"], ["Pens", 3], ["Ink", 10]])
    rules = [{"type": "sheet_name"}, {"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]
    assert score("compare_table", result, same, rules=rules) == 1.0
    assert score("compare_table", result, other, rules=rules) == 0.0
    assert score("compare_table", None, same, rules=rules) == 0.0
    assert score("compare_table", str(tmp_path / "missing.xlsx"), same, rules=rules) == 0.0


def test_compare_table_cells_fuzzy_and_freeze(tmp_path):
    result = workbook(tmp_path, "r.xlsx", [["Main Rd", 4]], bold_a1=True, freeze="A2")
    expected = workbook(tmp_path, "e.xlsx", [["main road", 4]], freeze="A2")
    cell = {"type": "check_cell", "sheet_idx": 0, "coordinate": "A1",
            "props": {"font_bold": {"method": "eq", "ref": True}, "value": {"method": "re", "ref": "^Main"}}}
    assert score("compare_table", result, None, rules=[cell]) == 1.0
    cell_fails = {**cell, "props": {"font_name": {"method": "eq", "ref": "Calibri"}}}
    assert score("compare_table", result, None, rules=[cell_fails]) == 0.0
    fuzzy = {"type": "sheet_fuzzy", "sheet_idx0": "RNSheet1", "sheet_idx1": "ENSheet1",
             "rules": [{"range": ["A1:A1"], "type": "exact_match", "ignore_case": True, "normalization": [["Rd", "Road"]]}]}
    assert score("compare_table", result, expected, rules=[fuzzy]) == 1.0
    fuzzy["rules"][0]["ignore_case"] = False
    assert score("compare_table", result, expected, rules=[fuzzy]) == 0.0
    assert score("compare_table", result, expected, rules=[{"type": "freeze", "sheet_idx0": 0, "sheet_idx1": "EI0"}]) == 1.0
    unfrozen = workbook(tmp_path, "u.xlsx", [["x"]])
    assert score("compare_table", result, unfrozen, rules=[{"type": "freeze", "sheet_idx0": 0, "sheet_idx1": "EI0"}]) == 0.0
    assert score("compare_table", result, None, rules=[{"type": "zoom", "sheet_idx": 0, "method": "eq", "ref": 100}]) == 1.0


def test_compare_table_sheet_print_reads_the_exported_csv(tmp_path):
    result = workbook(tmp_path, "r.xlsx", [["a", 1]])
    expected = workbook(tmp_path, "e.xlsx", [["a", 1]])
    rule = [{"type": "sheet_print", "sheet_idx0": 0, "sheet_idx1": "EI0"}]
    assert score("compare_table", result, expected, rules=rule) == 0.0  # no export beside them
    (tmp_path / "r-Sheet1.csv").write_text("a,1\n\n")
    (tmp_path / "e-Sheet1.csv").write_text("a,1\n")
    assert score("compare_table", result, expected, rules=rule) == 1.0


def test_compare_csv(tmp_path):
    result = write(tmp_path, "r.csv", "a,b\n1,2\n")
    assert score("compare_csv", result, write(tmp_path, "e.csv", "a,b\n1,2\n")) == 1.0
    spaced = write(tmp_path, "s.csv", "A,B \n1,2\n")
    assert score("compare_csv", result, spaced) == 0.0
    assert score("compare_csv", result, spaced, strict=False, ignore_case=True) == 1.0
    assert score("compare_csv", result, [spaced, write(tmp_path, "e2.csv", "a,b\n1,2\n")]) == 1.0


def test_a_zip_bomb_workbook_scores_zero_and_is_not_unpacked(tmp_path, monkeypatch):
    from vdesk import documents

    monkeypatch.setattr(documents, "UNPACKED_LIMIT", 100_000)
    bomb = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("xl/workbook.xml", b"\0" * 200_000)
    assert score("compare_table", str(bomb), None, rules=[{"type": "zoom", "sheet_idx": 0, "method": "eq", "ref": 100}]) == 0.0
    with pytest.raises(DocumentError, match="would unpack"):
        inputs.read_archive(bomb)


def test_a_file_past_the_size_limit_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(inputs, "FILE_LIMIT", 10)
    with pytest.raises(DocumentError, match="over the limit"):
        inputs.read_text(write(tmp_path, "big.txt", "x" * 11))


# -- documents -------------------------------------------------------------------------------
def docx(tmp_path: Path, name: str, paragraphs: list[str]) -> str:
    import docx as python_docx

    document = python_docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    path = tmp_path / name
    document.save(path)
    return str(path)


def test_compare_docx_files(tmp_path):
    result = docx(tmp_path, "r.docx", ["Hello  world", "Second line"])
    assert score("compare_docx_files", result, docx(tmp_path, "e.docx", ["Hello world", "Second line"])) == 1.0
    assert score("compare_docx_files", result, docx(tmp_path, "o.docx", ["Hello there", "Second line"])) == 0.0
    assert score("compare_docx_files", result, docx(tmp_path, "c.docx", ["hello  world", "second line"]),
                 ignore_case=True, ignore_blanks=False) == 1.0
    assert score("compare_docx_files", result, docx(tmp_path, "x.docx", ["Second line", "Hello  world"]),
                 ignore_order=True, ignore_blanks=False) == 1.0
    assert score("compare_docx_files", result, docx(tmp_path, "f.docx", ["Hello world", "Second lines"]),
                 content_only=True) == pytest.approx(fuzz.ratio("Hello world Second line", "Hello world Second lines") / 100)
    assert score("compare_docx_files", None, result) == 0.0
    assert score("compare_docx_files", write(tmp_path, "broken.docx", "not a zip"), result) == 0.0


def pptx(tmp_path: Path, name: str, title: str, left: int = 914400, bold: bool = False, note: str = "") -> str:
    import pptx as python_pptx
    from pptx.util import Emu, Pt

    deck = python_pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = title
    box = slide.shapes.add_textbox(Emu(left), Emu(914400), Emu(2743200), Emu(914400))
    run = box.text_frame.paragraphs[0].add_run()
    run.text = "Body"
    run.font.bold = bold
    run.font.size = Pt(18)
    if note:
        slide.notes_slide.notes_text_frame.text = note
    path = tmp_path / name
    deck.save(path)
    return str(path)


def test_compare_pptx_files(tmp_path):
    result = pptx(tmp_path, "r.pptx", "Quarterly review")
    assert score("compare_pptx_files", result, pptx(tmp_path, "e.pptx", "Quarterly review")) == 1.0
    assert score("compare_pptx_files", result, pptx(tmp_path, "t.pptx", "Annual review")) == 0.0
    moved = pptx(tmp_path, "m.pptx", "Quarterly review", left=1828800)
    assert score("compare_pptx_files", result, moved) == 0.0
    assert score("compare_pptx_files", result, moved, examine_shape=False) == 1.0
    bold = pptx(tmp_path, "b.pptx", "Quarterly review", bold=True)
    assert score("compare_pptx_files", result, bold) == 0.0
    assert score("compare_pptx_files", result, bold, examine_font_bold=False) == 1.0
    noted = pptx(tmp_path, "n.pptx", "Quarterly review", note="say hello")
    assert score("compare_pptx_files", result, noted) == 0.0
    assert score("compare_pptx_files", str(FILES / "deck.pptx"), str(FILES / "deck.pptx")) == 1.0


def pdf(tmp_path: Path, name: str, text: str) -> str:
    """A one-page PDF whose page shows ``text`` in Helvetica (objects and xref written out)."""
    stream = f"BT /F1 18 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> >> >>",
               b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out, offsets = io.BytesIO(), []
    out.write(b"%PDF-1.4\n")
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.write(b"".join(b"%010d 00000 n \n" % o for o in offsets))
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    path = tmp_path / name
    path.write_bytes(out.getvalue())
    return str(path)


def test_compare_pdfs(tmp_path):
    result = pdf(tmp_path, "r.pdf", "The meeting is on Thursday")
    assert score("compare_pdfs", result, pdf(tmp_path, "e.pdf", "The meeting is on Thursday")) == 1.0
    assert score("compare_pdfs", result, pdf(tmp_path, "o.pdf", "Lunch menu: soup")) == pytest.approx(
        fuzz.ratio("The meeting is on Thursday", "Lunch menu: soup") / 100)
    # a list of pairs scores the mean of the pairs' ratios
    assert score("compare_pdfs", [result, result], [result, pdf(tmp_path, "x.pdf", "zzz")]) == pytest.approx(
        (1.0 + fuzz.ratio("The meeting is on Thursday", "zzz") / 100) / 2)
    assert score("compare_pdfs", str(FILES / "notice.pdf"), str(FILES / "notice.pdf")) == 1.0
    assert score("compare_pdfs", write(tmp_path, "broken.pdf", "nope"), result) == 0.0
    assert score("compare_pdfs", None, result) == 0.0


# -- browser ---------------------------------------------------------------------------------
def test_browser_metrics():
    tab = {"title": "Docs", "url": "https://example.org/docs?q=1"}
    assert score("is_expected_url_pattern_match", tab, {"expected": [r"example\.org", r"q=1"]}) == 1.0
    assert score("is_expected_url_pattern_match", tab["url"], {"expected": [r"q=2"]}) == 0.0
    assert score("is_expected_active_tab", tab, {"type": "url", "url": tab["url"]}) == 1.0
    assert score("is_expected_active_tab", tab, {"type": "url", "url": "https://example.org/"}) == 0.0
    tabs = [{"url": "https://a.example/"}, {"url": "https://b.example/"}]
    assert score("is_expected_tabs", tabs, {"type": "url", "urls": ["https://a.example/", "https://b.example/"]}) == 1.0
    # in any order, as OSWorld's reference compares (each expected address found among the tabs)
    assert score("is_expected_tabs", tabs, {"type": "url", "urls": ["https://b.example/", "https://a.example/"]}) == 1.0
    assert score("is_expected_tabs", tabs, {"type": "url", "urls": ["https://a.example/"]}) == 0.0
    with pytest.raises(UnsupportedMetric, match="rule type 'title'"):
        score("is_expected_tabs", tabs, {"type": "title"})


def test_bookmarks():
    roots = {"bookmark_bar": {"children": [
        {"type": "folder", "name": "Work", "children": []},
        {"type": "url", "name": "Site", "url": "https://site.example/"},
        {"type": "folder", "name": "Liked Authors", "children": [
            {"type": "url", "url": "https://a.example/author"}, {"type": "url", "url": "https://b.example/author"}]}]}}
    assert score("is_expected_bookmarks", roots, {"type": "bookmark_bar_folders_names", "names": ["Work", "Liked Authors"]}) == 1.0
    assert score("is_expected_bookmarks", roots, {"type": "bookmark_bar_folders_names", "names": ["Work"]}) == 0.0
    assert score("is_expected_bookmarks", roots, {"type": "bookmark_bar_websites_urls", "urls": ["https://site.example/"]}) == 1.0
    liked = {"type": "liked_authors_websites_urls",
             "urls": [["https://a.example/author", "https://a.example/author/"], ["https://b.example/author"]]}
    assert score("is_expected_bookmarks", roots, liked) == 1.0
    assert score("is_expected_bookmarks", roots, {**liked, "urls": [["https://a.example/author"]]}) == 0.0


# -- programs' settings ----------------------------------------------------------------------
def test_vlc_settings(tmp_path):
    vlcrc = write(tmp_path, "vlcrc", "[qt]\n#qt-bgcone=1\nqt-max-volume=200\n[core]\n#qt-minimal-view=0\n"
                                     "input-record-path=/home/user/Videos/\nglobal-key-play-pause=Ctrl+p\n")
    assert score("check_qt_max_volume", vlcrc, {"expected_qt_max_volume": 200}) == 1.0
    assert score("check_qt_max_volume", vlcrc, {"expected_qt_max_volume": 125}) == 0.0
    assert score("check_qt_bgcone", vlcrc, {"expected_qt_bgcone": 1}) == 1.0  # the default, commented out
    assert score("check_qt_minimal_view", vlcrc, {"expected_qt_minimal_view": 1}) == 0.0
    assert score("check_one_instance_when_started_from_file", vlcrc,
                 {"expected_one_instance_when_started_from_file": 1}) == 1.0
    assert score("check_global_key_play_pause", vlcrc, {"expected_global_key_play_pause": 1}) == 1.0
    # the text exactly, as OSWorld's reference compares: the trailing slash makes it another folder
    assert score("is_vlc_recordings_folder", vlcrc, {"recording_file_path": "/home/user/Videos/"}) == 1.0
    assert score("is_vlc_recordings_folder", vlcrc, {"recording_file_path": "/home/user/Videos"}) == 0.0
    assert score("is_vlc_recordings_folder", vlcrc, {"recording_file_path": "/home/user/Desktop"}) == 0.0


def test_gimp_chrome_and_libreoffice_settings(tmp_path):
    gimprc = write(tmp_path, "gimprc", '# GIMP gimprc\n(undo-levels 100)\n(theme "Dark")\n')
    assert score("check_config_status", gimprc, {"key": "undo-levels", "value": "100"}) == 1.0
    assert score("check_config_status", gimprc, {"key": "theme", "value": '"Dark"'}) == 1.0
    assert score("check_config_status", gimprc, {"key": "undo-levels", "value": "5"}) == 0.0
    assert score("check_font_size", {"default_font_size": 20}, {"type": "value", "value": 20}) == 1.0
    assert score("check_font_size", {"default_font_size": 20}, {"type": "range", "min": 10, "max": 16}) == 0.0
    # The reference strips the "@option" suffix before comparing (so "a@1" never equals a name "a@1").
    assert score("check_enabled_experiments", ["a@1"], {"type": "names", "names": ["a@1"]}) == 0.0
    assert score("check_enabled_experiments", ["a@1"], {"type": "names", "names": ["a"]}) == 1.0
    assert score("check_enabled_experiments", [], {"type": "names", "names": ["a@1"]}) == 0.0
    xcu = write(tmp_path, "registrymodifications.xcu",
                '<?xml version="1.0" encoding="UTF-8"?><oor:items xmlns:oor="http://openoffice.org/2001/registry">'
                '<item oor:path="/org.openoffice.Setup/L10N"><prop oor:name="ooSetupSystemLocale" oor:op="fuse">'
                '<value>de-DE</value></prop></item></oor:items>')
    # shell patterns, as OSWorld's reference matches them: "de-*" matches de-DE, a bare "de" does not
    assert score("check_libre_locale", xcu, {"locale_set": ["de-*", "fr-*"]}) == 1.0
    assert score("check_libre_locale", xcu, {"locale_set": ["de", "en-*"]}) == 0.0


@pytest.mark.parametrize("name, expected", [
    ("check_list", {"expect": ["x"]}), ("file_contains", {"expected": ["x"]}), ("check_line_number", {"expected": 0}),
    ("diff_text_file", None), ("check_json", {"expect": []}), ("compare_csv", None),
    ("check_config_status", {"key": "a", "value": "b"}), ("check_qt_max_volume", {"expected_qt_max_volume": 125}),
    ("check_qt_bgcone", {"expected_qt_bgcone": 1}), ("is_vlc_recordings_folder", {"recording_file_path": "/x"}),
    ("check_global_key_play_pause", {"expected_global_key_play_pause": 0}), ("check_libre_locale", {"locale_set": [""]}),
    ("compare_docx_files", None), ("compare_pptx_files", None), ("compare_pdfs", None), ("compare_table", None),
])
def test_a_missing_result_file_scores_zero(tmp_path, name, expected):
    options = {"rules": [{"type": "zoom", "sheet_idx": 0, "method": "eq", "ref": 100}]} if name == "compare_table" else {}
    expected = expected if expected is not None else write(tmp_path, "expected.txt", "x")
    assert score(name, str(tmp_path / "missing"), expected, **options) == 0.0


def docx_with_table(tmp_path: Path, name: str, cells: list[list[str]], spacing: float | None = None) -> str:
    import docx as python_docx

    document = python_docx.Document()
    paragraph = document.add_paragraph("Prices")
    if spacing is not None:
        paragraph.paragraph_format.line_spacing = spacing
    table = document.add_table(rows=len(cells), cols=len(cells[0]))
    for row, values in zip(table.rows, cells):
        for cell, value in zip(row.cells, values):
            cell.text = value
    path = tmp_path / name
    document.save(path)
    return str(path)


def test_docx_tables_and_line_spacing(tmp_path):
    result = docx_with_table(tmp_path, "r.docx", [["Pens", "2.5"], ["Ink", "10"]], spacing=1.5)
    assert score("compare_docx_tables", result, docx_with_table(tmp_path, "e.docx", [["Pens", "2.5"], ["Ink", "10"]])) == 1.0
    assert score("compare_docx_tables", result, docx_with_table(tmp_path, "o.docx", [["Pens", "3"], ["Ink", "10"]])) == 0.0
    assert score("compare_line_spacing", result, docx_with_table(tmp_path, "s.docx", [["x"]], spacing=1.5)) == 1.0
    assert score("compare_line_spacing", result, docx_with_table(tmp_path, "d.docx", [["x"]], spacing=2.0)) == 0.0


def test_text_and_settings_files(tmp_path):
    result = write(tmp_path, "a.py", "print( 'Hi' )\n")
    assert score("compare_text_file", result, write(tmp_path, "b.py", "print( 'Hi' )\n")) == 1.0
    assert score("compare_text_file", result, write(tmp_path, "c.py", "print(  'hi' ) ")) == 0.0
    assert score("compare_text_file", result, write(tmp_path, "d.py", "print(  'hi' ) "), ignore_blanks=True,
                 ignore_case=True) == 1.0
    settings = write(tmp_path, "settings.json", json.dumps({"editor.fontSize": 16, "files.autoSave": "off"}))
    assert score("check_json_settings", settings, {"expected": {"editor.fontSize": 16}}) == 1.0
    assert score("check_json_settings", settings, {"expected": {"editor.fontSize": 12}}) == 0.0
    assert score("compare_config", result, {"expected": "print( 'Hi' )\n"}) == 1.0
    assert score("compare_config", result, {"expected": "print('Hi')\n"}) == 0.0


def test_compare_table_validations_and_hidden_rows(tmp_path):
    import openpyxl
    from openpyxl.worksheet.datavalidation import DataValidation

    def book(name: str, hide: bool, validate: bool) -> str:
        workbook = openpyxl.Workbook()
        sheet = workbook.active
        sheet.append(["a"]), sheet.append(["b"])
        sheet.row_dimensions[2].hidden = hide
        if validate:
            validation = DataValidation(type="list", formula1='"Yes,No"')
            validation.add("B1:B10")
            sheet.add_data_validation(validation)
        path = tmp_path / name
        workbook.save(path)
        return str(path)

    result, plain = book("r.xlsx", True, True), book("p.xlsx", False, False)
    rows = [{"type": "row_props", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["hidden"]}]
    assert score("compare_table", result, book("e.xlsx", True, False), rules=rows) == 1.0
    assert score("compare_table", result, plain, rules=rows) == 0.0
    valid = [{"type": "data_validation", "sheet_idx": 0,
              "dv_props": [{"type": {"method": "eq", "ref": "list"}, "formula1": {"method": "eq", "ref": '"Yes,No"'},
                            "ranges": {"method": "eq", "ref": "B1:B10"}}]}]
    assert score("compare_table", result, None, rules=valid) == 1.0
    assert score("compare_table", plain, None, rules=valid) == 0.0


@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"),
                        max_size=12), max_size=6))
def test_a_text_file_matches_itself_and_a_changed_one_does_not(tmp_path_factory, lines):
    folder = tmp_path_factory.mktemp("same")
    text = "\n".join(lines) + "\n"
    one, two = folder / "one.csv", folder / "two.csv"
    one.write_text(text, encoding="utf-8")
    two.write_text(text, encoding="utf-8")
    assert score("compare_csv", str(one), str(two)) == 1.0
    assert score("diff_text_file", str(one), str(two)) == 1.0
    assert score("compare_text_file", str(one), str(two)) == 1.0
    two.write_text(text + "extra\n", encoding="utf-8")
    assert score("compare_csv", str(one), str(two)) == 0.0
    assert score("compare_text_file", str(one), str(two)) == 0.0


@given(st.floats(min_value=-1e6, max_value=1e6, width=32), st.floats(min_value=0, max_value=10, width=32))
def test_approx_rules_accept_values_within_their_tolerance(value, tolerance):
    from vdesk.osworld.metrics.general import match_value

    assert match_value(value, {"method": f"approx:{tolerance}", "ref": value})
    assert not match_value(value, {"method": f"approx:{tolerance}", "ref": value + tolerance * 2 + 1})
