"""The document readers and the task models of the apps checks, on files LibreOffice made."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from vdesk.errors import DocumentError
from vdesk import documents
from vdesk.harness.checks import document_problems
from vdesk.harness.tasks import TaskError, parse_task
from vdesk.harness.desktop_files import pack

FILES = Path(__file__).resolve().parents[2] / "examples" / "apps" / "files"


def read(name: str) -> bytes:
    return (FILES / name).read_bytes()


def test_ods_and_xlsx_cells_read_alike():
    for name in ("prices.ods", "prices.xlsx"):
        sheet = documents.read_spreadsheet(read(name), Path(name).suffix)
        assert sheet.cell("A2").value == "Pens" and sheet.cell("Sheet1!B2").value == 2.5 and sheet.cell("D2").value is None


def test_ods_formulas_in_the_notation_people_type():
    assert documents._ods_formula("of:=SUM([.B1:.B3])") == "=SUM(B1:B3)"
    assert documents._ods_formula("of:=[.B2]*[.C2]") == "=B2*C2"
    assert documents._ods_formula("of:=IF([.A1]>1;[.A2];0)") == "=IF(A1>1,A2,0)"


def test_text_presentation_and_pdf():
    assert [p.text for p in documents.read_text_document(read("notes.odt"), ".odt")][0] == "Reading list"
    assert documents.read_presentation(read("deck.odp"), ".odp")[0].title == "Quarterly review"
    assert "Thursday at noon" in documents.read_pdf_text(read("notice.pdf"))


def test_a_document_check_reports_each_difference():
    from vdesk.harness.tasks import DocumentCheck

    problems = document_problems(DocumentCheck(document="prices.xlsx", cells={"B2": 3, "A2": "Pens"}), read("prices.xlsx"))
    assert problems == ["prices.xlsx B2 is 2.5, expected 3.0"]


def test_archives_that_unpack_too_far_are_refused(monkeypatch):
    monkeypatch.setattr(documents, "UNPACKED_LIMIT", 10_000)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("a.xml", b"\0" * 10_001)
    with pytest.raises(DocumentError, match="would unpack to"):
        documents.read_spreadsheet(buffer.getvalue(), ".xlsx")
    with pytest.raises(DocumentError, match="not a zip archive"):
        documents.read_text_document(b"plain text", ".docx")


@pytest.mark.parametrize("check, message", [
    ({"document": "a.xlsx", "slides": ["x"]}, "a .xlsx file has no slides"),
    ({"document": "a.txt", "contains": ["x"]}, "the checks read"),
    ({"document": "a.pdf"}, "say what to check"),
    ({"browser": "text", "equals": "x"}, "needs a selector"),
    ({"browser": "url"}, "needs equals, contains or matches"),
    ({"file": "a.png", "sha256": "xyz"}, "sha256"),
])
def test_bad_checks_are_refused_naming_the_problem(check, message):
    with pytest.raises(TaskError, match=message):
        parse_task({"id": "t", "instruction": "x", "checks": [check]})


@pytest.mark.parametrize("step", [{"serve": "../outside"}, {"upload": "/etc/passwd"}, {"wait_idle": "a b"}])
def test_setup_steps_stay_inside_the_task(step):
    with pytest.raises(TaskError):
        parse_task({"id": "t", "instruction": "x", "setup": [step], "checks": [{"command": "true"}]})


def test_a_packed_folder_holds_its_files_under_its_name(tmp_path):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("hi")
    (tmp_path / "site" / "link").symlink_to("/etc/passwd")
    import tarfile

    names = tarfile.open(fileobj=io.BytesIO(pack(tmp_path / "site"))).getnames()
    assert names == ["site", "site/index.html"]
