"""Each check family on real files the apps desktop's programs made, read out of a real desktop."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from vdesk.desktop import Desktop
from vdesk.harness.checks import document_check, file_check, picture_file_check
from vdesk.errors import TooLarge
from vdesk.harness.desktop_files import pack, read_file, unpack_into
from vdesk.harness.tasks import DocumentCheck, FileCheck

pytestmark = pytest.mark.desktop
FILES = Path(__file__).resolve().parents[2] / "examples" / "apps" / "files"
CSV = "Item,Cost\nPens,12\nInk,18\nTotal,=SUM(B2:B3)\n"
HTML = "<html><body><p>Plain and <b>bold</b> words, one <i>tilted</i>.</p><p>Second paragraph.</p></body></html>"
PAGE = "<html><body style='margin:0;background:#fff'><div style='width:120px;height:80px;background:{}'></div></body></html>"


def soffice(desktop: Desktop, *args: str) -> None:
    desktop.programs.run(["sh", "-c", 'cd && exec soffice --headless "$@"', "sh", *args], wait=True, timeout=120).check()


@pytest.fixture(scope="module")
def desktop():
    with Desktop.up(size=(1280, 800), image="apps", timeout=120) as desktop:
        unpack_into(desktop, pack(FILES), ".")
        desktop.programs.run(["sh", "-c", "cd && cat > budget.csv"], wait=True, stdin=CSV).check()
        desktop.programs.run(["sh", "-c", "cd && cat > letter.html"], wait=True, stdin=HTML).check()
        soffice(desktop, "--convert-to", "xlsx", "budget.csv")
        soffice(desktop, "--convert-to", "ods", "budget.csv")
        soffice(desktop, "--writer", "--convert-to", "docx:MS Word 2007 XML", "letter.html")
        soffice(desktop, "--writer", "--convert-to", "odt", "letter.html")
        soffice(desktop, "--convert-to", "pptx", "files/deck.odp")
        soffice(desktop, "--convert-to", "pdf", "letter.odt")
        yield desktop


@pytest.mark.parametrize("name", ["budget.xlsx", "budget.ods"])
def test_spreadsheet_cells_and_formulas(desktop, name):
    good = DocumentCheck(document=name, cells={"A2": "Pens", "B3": 18, "B4": 30}, formulas={"B4": "=sum(B2:B3)"})
    assert document_check(desktop, good).passed, document_check(desktop, good).detail
    bad = document_check(desktop, DocumentCheck(document=name, cells={"B4": 31}, formulas={"B4": "=SUM(B2:B2)"}))
    assert not bad.passed and "B4 is 30.0, expected 31.0" in bad.detail and "=SUM(B2:B2)" in bad.detail


@pytest.mark.parametrize("name", ["letter.docx", "letter.odt"])
def test_text_document_paragraphs_bold_and_italic(desktop, name):
    good = DocumentCheck(document=name, paragraphs=["Plain and bold words, one tilted.", "Second paragraph."],
                         bold=["bold"], italic=["tilted"])
    result = document_check(desktop, good)
    assert result.passed, result.detail
    bad = document_check(desktop, DocumentCheck(document=name, bold=["Plain"]))
    assert not bad.passed and "the bold text is ['bold']" in bad.detail


@pytest.mark.parametrize("name", ["deck.pptx", "files/deck.odp"])
def test_presentation_slide_titles(desktop, name):
    assert document_check(desktop, DocumentCheck(document=name, slides=["Quarterly review"],
                                                 contains=["Numbers and plans"])).passed
    assert not document_check(desktop, DocumentCheck(document=name, slides=["Other"])).passed


def test_pdf_text(desktop):
    assert document_check(desktop, DocumentCheck(document="letter.pdf", contains=["Plain and bold words"])).passed
    missing = document_check(desktop, DocumentCheck(document="letter.pdf", contains=["not in it"]))
    assert not missing.passed and "does not contain" in missing.detail


def test_a_missing_or_damaged_document_fails_with_the_reason(desktop):
    assert "does not exist" in document_check(desktop, DocumentCheck(document="nope.xlsx", cells={"A1": 1})).detail
    desktop.programs.run(["sh", "-c", "cd && cp budget.csv budget.csv.docx"], wait=True).check()
    damaged = document_check(desktop, DocumentCheck(document="budget.csv.docx", contains=["x"]))
    assert not damaged.passed and "not a zip archive" in damaged.detail


def test_an_archive_that_would_unpack_too_far_is_refused_before_parsing(desktop, tmp_path):
    bomb = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("xl/huge.xml", "w", force_zip64=True) as member:
            for _ in range(300):
                member.write(b"\0" * (1024 * 1024))
    unpack_into(desktop, pack(bomb), ".")
    result = document_check(desktop, DocumentCheck(document="bomb.xlsx", cells={"A1": 1}))
    assert not result.passed and "would unpack to" in result.detail


def test_binary_file_hash_and_size(desktop):
    data = read_file(desktop, "budget.xlsx")
    assert data is not None and data[:2] == b"PK"
    digest = hashlib.sha256(data).hexdigest()
    assert file_check(desktop, FileCheck(file="budget.xlsx", sha256=digest, size=len(data))).passed
    wrong = file_check(desktop, FileCheck(file="budget.xlsx", sha256="0" * 64, size=(1, 10)))
    assert not wrong.passed and "sha256" in wrong.detail and "expected 1 to 10" in wrong.detail


def test_reading_out_is_bounded(desktop):
    desktop.programs.run(["sh", "-c", "cd && head -c 5000 /dev/zero > big.bin"], wait=True).check()
    with pytest.raises(TooLarge, match="over the limit of 4096"):
        read_file(desktop, "big.bin", limit=4096)
    assert read_file(desktop, "no-such-file") is None


def test_picture_likeness_of_screenshots_chromium_took(desktop, tmp_path):
    for colour in ("#d1495b", "#00798c"):
        name = colour.lstrip("#")
        desktop.programs.run(["sh", "-c", f"cd && cat > {name}.html"], wait=True, stdin=PAGE.format(colour)).check()
        for copy in ("a", "b") if colour == "#d1495b" else ("a",):
            desktop.programs.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                         "--window-size=200,120", f"--screenshot=/home/desk/{name}-{copy}.png",
                         f"file:///home/desk/{name}.html"], wait=True, timeout=60).check()
    reference = tmp_path / "red.png"
    reference.write_bytes(read_file(desktop, "d1495b-a.png") or b"")
    same = picture_file_check(read_file(desktop, "d1495b-b.png"), FileCheck(file="d1495b-b.png", image="red.png"), tmp_path)
    assert same.passed, same.detail
    other = picture_file_check(read_file(desktop, "00798c-a.png"), FileCheck(file="00798c-a.png", image="red.png"), tmp_path)
    assert not other.passed and "differ" in other.detail
    junk = picture_file_check(b"not a picture", FileCheck(file="x.png", image="red.png"), tmp_path)
    assert not junk.passed and "not a picture" in junk.detail
