"""Reading the documents programs leave behind, for checks: spreadsheets, text documents,
presentations and PDFs, with the libraries of the field (openpyxl, python-docx, python-pptx,
odfpy, pypdf).

What comes out of a desktop is untrusted: the bytes are bounded before they get here, and an
archive (every office format is a zip) is refused when it would unpack past
:data:`UNPACKED_LIMIT` or hold too many members, before any library opens it. Every reader
raises :class:`DocumentError` with one line saying what is wrong.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from vdesk.errors import DocumentError

UNPACKED_LIMIT = 256 * 1024 * 1024  # bytes an office archive may unpack to
MEMBER_LIMIT = 10_000
SPREADSHEETS = (".xlsx", ".ods")
TEXT_DOCUMENTS = (".docx", ".odt")
PRESENTATIONS = (".pptx", ".odp")
FORMATS = SPREADSHEETS + TEXT_DOCUMENTS + PRESENTATIONS + (".pdf",)
CellValue = str | float | bool | None


@dataclass(frozen=True)
class Cell:
    value: CellValue          # the value shown (a formula's last computed result)
    formula: str | None       # normalised: ``=SUM(B1:B3)``


@dataclass
class Spreadsheet:
    """Cells by reference, ``Sheet!A1``; :meth:`cell` also takes ``A1`` for the first sheet."""

    sheets: list[str]
    cells: dict[str, Cell] = field(default_factory=dict)

    def cell(self, reference: str) -> Cell:
        sheet, _, name = reference.rpartition("!")
        key = f"{sheet or self.sheets[0]}!{name.upper()}" if self.sheets else reference
        return self.cells.get(key, Cell(None, None))


@dataclass(frozen=True)
class Paragraph:
    text: str
    bold: tuple[str, ...] = ()     # the text of each stretch set in bold
    italic: tuple[str, ...] = ()


@dataclass(frozen=True)
class Slide:
    title: str
    texts: tuple[str, ...]         # every text on the slide, the title included


def kind_of(path: str) -> str:
    """The document format from a path's suffix: ``.xlsx``, ``.odt``, …"""
    suffix = PurePosixPath(path).suffix.lower()
    if suffix not in FORMATS:
        raise DocumentError(f"{path}: not a document format the checks read ({', '.join(FORMATS)})")
    return suffix


# -- archives -------------------------------------------------------------------------------
def _archive(data: bytes) -> zipfile.ZipFile:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise DocumentError("not a zip archive (every office format is one): damaged or of another format") from None
    members = archive.infolist()
    if len(members) > MEMBER_LIMIT:
        raise DocumentError(f"the archive holds {len(members)} members, over the limit of {MEMBER_LIMIT}")
    unpacked = sum(member.file_size for member in members)
    if unpacked > UNPACKED_LIMIT:
        raise DocumentError(f"the archive would unpack to {unpacked} bytes, over the limit of {UNPACKED_LIMIT}")
    return archive


def check_archive(data: bytes) -> None:
    """Refuse an office archive past the member or unpacked-size limits (a zip bomb)."""
    _archive(data).close()


def _guarded(data: bytes, what: str, read):  # type: ignore[no-untyped-def]
    """``read(data)`` after the archive check; a library's failure becomes a DocumentError."""
    _archive(data).close()
    try:
        return read(data)
    except DocumentError:
        raise
    except Exception as error:  # each library raises its own kinds for a damaged file
        raise DocumentError(f"not a readable {what}: {type(error).__name__}: {str(error)[:160]}") from None


# -- spreadsheets ---------------------------------------------------------------------------
def read_spreadsheet(data: bytes, kind: str) -> Spreadsheet:
    if kind == ".xlsx":
        return _guarded(data, "xlsx workbook", _read_xlsx)
    return _guarded(data, "ods spreadsheet", _read_ods)


def _read_xlsx(data: bytes) -> Spreadsheet:
    import openpyxl

    formulas = openpyxl.load_workbook(io.BytesIO(data), data_only=False, read_only=True)
    values = openpyxl.load_workbook(io.BytesIO(data), data_only=True, read_only=True)
    sheet = Spreadsheet(sheets=list(formulas.sheetnames))
    for name in sheet.sheets:
        for formula_row, value_row in zip(formulas[name].iter_rows(), values[name].iter_rows()):
            for formula_cell, value_cell in zip(formula_row, value_row):
                if formula_cell.value is None or not hasattr(formula_cell, "coordinate"):
                    continue
                text = formula_cell.value
                formula = _xlsx_formula(text) if isinstance(text, str) and text.startswith("=") else None
                shown = value_cell.value if formula else text
                sheet.cells[f"{name}!{formula_cell.coordinate}"] = Cell(_plain(shown), formula)
    formulas.close()
    values.close()
    return sheet


def _read_ods(data: bytes) -> Spreadsheet:
    from odf import opendocument, table
    from odf.namespaces import OFFICENS, TABLENS

    document = opendocument.load(io.BytesIO(data))
    sheets = document.spreadsheet.getElementsByType(table.Table)
    result = Spreadsheet(sheets=[s.getAttrNS(TABLENS, "name") for s in sheets])
    for sheet_element, sheet_name in zip(sheets, result.sheets):
        row_number = 0
        for row in sheet_element.getElementsByType(table.TableRow):
            rows = min(int(row.getAttrNS(TABLENS, "number-rows-repeated") or 1), 1_048_576)
            column = 0
            for cell in row.childNodes:
                if cell.qname[1] not in ("table-cell", "covered-table-cell"):
                    continue
                repeat = min(int(cell.getAttrNS(TABLENS, "number-columns-repeated") or 1), 16_384)
                parsed = _ods_cell(cell, OFFICENS, TABLENS)
                if parsed is not None and rows * repeat <= 10_000:  # repeats of a value are few; of empties, many
                    for r in range(rows):
                        for c in range(repeat):
                            result.cells[f"{sheet_name}!{_column_name(column + c)}{row_number + r + 1}"] = parsed
                column += repeat
            row_number += rows
    return result


def _ods_cell(cell, officens: str, tablens: str) -> Cell | None:  # type: ignore[no-untyped-def]
    from odf import teletype

    kind = cell.getAttrNS(officens, "value-type")
    formula = cell.getAttrNS(tablens, "formula")
    if not kind and not formula:
        return None
    if kind in ("float", "percentage", "currency"):
        value: CellValue = float(cell.getAttrNS(officens, "value"))
    elif kind == "boolean":
        value = cell.getAttrNS(officens, "boolean-value") == "true"
    else:
        value = "\n".join(teletype.extractText(p) for p in cell.childNodes if p.qname[1] == "p")
    return Cell(_plain(value), _ods_formula(formula) if formula else None)


def _xlsx_formula(text: str) -> str:
    return "=" + re.sub(r"\s+", "", text[1:]).upper()


def _ods_formula(text: str) -> str:
    """ODF's ``of:=SUM([.B1:.B3])`` in the notation people type: ``=SUM(B1:B3)``."""
    body = text.split(":", 1)[1] if text.startswith(("of:", "oooc:")) else text
    body = re.sub(r"\[\$?([^\]]*)\]", lambda m: m.group(1), body)     # [.B1:.B3] -> .B1:.B3
    body = re.sub(r"(^|[^A-Za-z0-9_])\.([A-Z]+[0-9]+)", r"\1\2", body)  # .B1 -> B1
    body = body.replace(":.", ":").replace(";", ",")
    return "=" + re.sub(r"\s+", "", body.lstrip("=")).upper()


def _plain(value: object) -> CellValue:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    return str(value)  # dates and times, as text


def _column_name(index: int) -> str:
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(65 + rest) + name
    return name


# -- text documents -------------------------------------------------------------------------
def read_text_document(data: bytes, kind: str) -> list[Paragraph]:
    if kind == ".docx":
        return _guarded(data, "docx document", _read_docx)
    return _guarded(data, "odt document", _read_odt)


def _read_docx(data: bytes) -> list[Paragraph]:
    import docx

    document = docx.Document(io.BytesIO(data))
    paragraphs = []
    for paragraph in document.paragraphs:
        style_font = paragraph.style.font if paragraph.style is not None else None
        marks = [(run.text, _on(run.bold, run.style, "bold", style_font), _on(run.italic, run.style, "italic", style_font))
                 for run in paragraph.runs]
        paragraphs.append(_paragraph(paragraph.text, marks))
    return paragraphs


def _on(direct: bool | None, style, attribute: str, paragraph_font) -> bool:  # type: ignore[no-untyped-def]
    """Whether a run is bold (or italic): set on it, else by its character style, else its paragraph's."""
    for value in (direct, getattr(getattr(style, "font", None), attribute, None),
                  getattr(paragraph_font, attribute, None)):
        if value is not None:
            return bool(value)
    return False


def _read_odt(data: bytes) -> list[Paragraph]:
    from odf import opendocument

    document = opendocument.load(io.BytesIO(data))
    styles = _odf_styles(document)
    paragraphs = []
    for element in _odf_paragraphs(document.text):
        base = _odf_marks(styles, element.getAttribute("stylename"))
        marks: list[tuple[str, bool, bool]] = []
        _odf_runs(element, base, styles, marks)
        paragraphs.append(_paragraph("".join(m[0] for m in marks), marks))
    return paragraphs


def _odf_paragraphs(element):  # type: ignore[no-untyped-def]
    """The paragraphs and headings under ``element`` in document order (in lists, sections, tables too)."""
    for node in element.childNodes:
        if node.nodeType != node.ELEMENT_NODE:
            continue
        if node.qname[1] in ("p", "h"):
            yield node
        else:
            yield from _odf_paragraphs(node)


def _odf_styles(document) -> dict[str, tuple[bool | None, bool | None, str | None]]:  # type: ignore[no-untyped-def]
    """Each style's own bold and italic (None: not set) and its parent, by name."""
    from odf import style

    found = {}
    for holder in (document.styles, document.automaticstyles):
        for element in holder.getElementsByType(style.Style):
            bold = italic = None
            for properties in element.getElementsByType(style.TextProperties):
                weight = properties.getAttribute("fontweight")
                slant = properties.getAttribute("fontstyle")
                bold = None if weight is None else weight in ("bold", "600", "700", "800", "900")
                italic = None if slant is None else slant in ("italic", "oblique")
            found[element.getAttribute("name")] = (bold, italic, element.getAttribute("parentstylename"))
    return found


def _odf_marks(styles, name, inherited=(False, False)) -> tuple[bool, bool]:  # type: ignore[no-untyped-def]
    chain = []
    while name and name in styles and len(chain) < 32:
        chain.append(styles[name])
        name = styles[name][2]
    bold, italic = inherited
    for own_bold, own_italic, _ in reversed(chain):
        bold = own_bold if own_bold is not None else bold
        italic = own_italic if own_italic is not None else italic
    return bold, italic


def _odf_runs(element, marks_here, styles, out) -> None:  # type: ignore[no-untyped-def]
    for node in element.childNodes:
        if node.nodeType == node.TEXT_NODE:
            out.append((str(node.data), *marks_here))
        elif node.qname[1] == "span":
            _odf_runs(node, _odf_marks(styles, node.getAttribute("stylename"), marks_here), styles, out)
        elif node.qname[1] == "s":
            out.append((" " * int(node.getAttribute("c") or 1), *marks_here))
        elif node.qname[1] == "tab":
            out.append(("\t", *marks_here))
        elif node.qname[1] in ("a", "text-input"):
            _odf_runs(node, marks_here, styles, out)


def _paragraph(text: str, marks: list[tuple[str, bool, bool]]) -> Paragraph:
    return Paragraph(text, tuple(_stretches(marks, 1)), tuple(_stretches(marks, 2)))


def _stretches(marks: list[tuple[str, bool, bool]], which: int) -> list[str]:
    """Consecutive runs with the mark joined: ``bold`` lists each bold stretch's text."""
    stretches, current = [], ""
    for mark in marks:
        if mark[which]:
            current += mark[0]
        elif current:
            stretches.append(current)
            current = ""
    if current:
        stretches.append(current)
    return [s for s in stretches if s.strip()]


# -- presentations --------------------------------------------------------------------------
def read_presentation(data: bytes, kind: str) -> list[Slide]:
    if kind == ".pptx":
        return _guarded(data, "pptx presentation", _read_pptx)
    return _guarded(data, "odp presentation", _read_odp)


def _read_pptx(data: bytes) -> list[Slide]:
    import pptx

    slides = []
    for slide in pptx.Presentation(io.BytesIO(data)).slides:
        title_shape = slide.shapes.title
        texts = tuple(shape.text_frame.text for shape in slide.shapes if shape.has_text_frame and shape.text_frame.text)
        slides.append(Slide(title_shape.text_frame.text if title_shape is not None else "", texts))
    return slides


def _read_odp(data: bytes) -> list[Slide]:
    from odf import draw, opendocument, teletype
    from odf.namespaces import PRESENTATIONNS

    slides = []
    for page in opendocument.load(io.BytesIO(data)).presentation.getElementsByType(draw.Page):
        title, texts = "", []
        for frame in page.getElementsByType(draw.Frame):
            paragraphs = [teletype.extractText(p) for p in frame.childNodes[0].childNodes
                          if p.qname[1] in ("p", "h")] if frame.childNodes and frame.childNodes[0].qname[1] == "text-box" else []
            content = "\n".join(paragraphs)
            if frame.getAttrNS(PRESENTATIONNS, "class") == "title" and not title:
                title = content
            if content:
                texts.append(content)
        slides.append(Slide(title, tuple(texts)))
    return slides


# -- PDF ------------------------------------------------------------------------------------
PDF_PAGE_LIMIT = 500


def read_pdf_text(data: bytes) -> str:
    """The text of every page, pages separated by a newline."""
    return "\n".join(read_pdf_pages(data))


def read_pdf_pages(data: bytes) -> list[str]:
    """The text of each page (refused past :data:`PDF_PAGE_LIMIT` pages)."""
    reader = _pdf(data)
    try:
        if len(reader.pages) > PDF_PAGE_LIMIT:
            raise DocumentError(f"the PDF has {len(reader.pages)} pages, over the limit of {PDF_PAGE_LIMIT}")
        return [page.extract_text() or "" for page in reader.pages]
    except DocumentError:
        raise
    except Exception as error:  # pypdf's errors for a damaged file are of several kinds
        raise DocumentError(f"not a readable PDF: {type(error).__name__}: {str(error)[:160]}") from None


PDF_IMAGE_PIXELS = 50_000_000   # pixels of one picture inside a PDF, checked before it is decoded


def read_pdf_images(data: bytes) -> list[Any]:
    """The pictures placed on each page, in page order and, within a page, in the order of its
    resources (Form XObjects followed), as Pillow images: the picture itself, a soft mask left
    aside. Inline images are not listed (PyMuPDF's ``get_images``, which OSWorld uses, lists
    XObjects only); a picture that cannot be decoded is left out. Refused past
    :data:`PDF_PAGE_LIMIT` pages or a picture over :data:`PDF_IMAGE_PIXELS`."""
    reader = _pdf(data)
    images = []
    try:
        if len(reader.pages) > PDF_PAGE_LIMIT:
            raise DocumentError(f"the PDF has {len(reader.pages)} pages, over the limit of {PDF_PAGE_LIMIT}")
        for page in reader.pages:
            for found in page.images:
                if found.name.startswith("~"):   # an inline image
                    continue
                xobject = found.indirect_reference.get_object() if found.indirect_reference else {}
                pixels = int(xobject.get("/Width", 0)) * int(xobject.get("/Height", 0))
                if pixels > PDF_IMAGE_PIXELS:
                    raise DocumentError(f"a picture of {pixels} pixels, over the limit of {PDF_IMAGE_PIXELS}")
                try:
                    images.append(_indexed_picture(xobject) or found.image)
                except Exception:  # noqa: BLE001 - a picture Pillow cannot decode is skipped, as OSWorld skips it
                    continue
    except DocumentError:
        raise
    except Exception as error:  # pypdf's errors for a damaged file are of several kinds
        raise DocumentError(f"not a readable PDF: {type(error).__name__}: {str(error)[:160]}") from None
    return images


_COMPONENTS = {"/DeviceRGB": 3, "/DeviceGray": 1, "/CalRGB": 3, "/CalGray": 1}


def _indexed_picture(xobject: Any) -> Any:
    """An 8-bit picture in an ``/Indexed`` colour space, decoded here (None for any other kind):
    pypdf reads a palette written as a hex string as UTF-16 text (Pillow writes PDFs so) and
    then draws the picture black."""
    from PIL import Image

    space = xobject.get("/ColorSpace")
    if not isinstance(space, list) or len(space) != 4 or space[0] != "/Indexed" or xobject.get("/BitsPerComponent") != 8:
        return None
    base, lookup = space[1].get_object(), space[3].get_object()
    components = _COMPONENTS.get(base) if isinstance(base, str) else None
    if components is None:
        return None
    if hasattr(lookup, "get_data"):
        palette = lookup.get_data()
    elif hasattr(lookup, "original_bytes"):
        palette = lookup.original_bytes
    else:
        palette = bytes(lookup)
    width, height = int(xobject["/Width"]), int(xobject["/Height"])
    picture = Image.frombytes("P", (width, height), xobject.get_data()[:width * height])
    colours = palette if components == 3 else bytes(b for grey in palette for b in (grey, grey, grey))
    picture.putpalette(colours[:768])
    return picture


def count_pdf_pages(data: bytes) -> int:
    """How many pages a PDF has (no page is read)."""
    reader = _pdf(data)
    try:
        return len(reader.pages)
    except Exception as error:  # a damaged page tree
        raise DocumentError(f"not a readable PDF: {type(error).__name__}: {str(error)[:160]}") from None


def _pdf(data: bytes):  # type: ignore[no-untyped-def]
    import pypdf

    try:
        return pypdf.PdfReader(io.BytesIO(data))
    except Exception as error:  # pypdf's errors for a damaged file are of several kinds
        raise DocumentError(f"not a readable PDF: {type(error).__name__}: {str(error)[:160]}") from None


# -- a spreadsheet's last row, as pandas reads it --------------------------------------------
NA_TEXT = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                     "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})   # pandas' missing values
_NUMBER_TEXT = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*")
_MISSING = object()


def last_row_text(data: bytes) -> list[str]:
    """The first sheet's last row as OSWorld's ``content_from_vm_file`` gives it: read as
    ``pandas.read_excel`` reads a sheet (the first non-empty row is the header, empty rows are
    skipped, each column typed by all its values), then each value as text as pandas' ``str``
    writes it: ``nan`` for a missing one, ``5.0`` for a whole number in a column of decimals, or
    in a row whose columns are all numbers of which one holds decimals. :class:`DocumentError`
    for a sheet with no row under its header (the reference fails there)."""
    import openpyxl

    check_archive(data)
    try:
        sheet = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True).worksheets[0]
        rows = [_trimmed_row([_pandas_cell(cell) for cell in row]) for row in sheet.rows]
    except Exception as error:  # openpyxl raises many kinds for a damaged workbook
        raise DocumentError(f"not a readable workbook: {type(error).__name__}: {str(error)[:160]}") from None
    rows = [row for row in rows if any(value != "" for value in row)]
    if len(rows) < 2:
        raise DocumentError("the sheet has no row under its header")
    width = max(len(row) for row in rows)
    body = [row + [""] * (width - len(row)) for row in rows[1:]]
    columns = [_column([row[i] for row in body]) for i in range(width)]
    kinds = {kind for kind, _ in columns}
    row_kind = "int" if kinds == {"int"} else "float" if kinds <= {"int", "float"} else \
        "bool" if kinds == {"bool"} else "object"
    return [_text(values[-1], kind, row_kind) for kind, values in columns]


def _pandas_cell(cell: Any) -> Any:
    """A cell as pandas' openpyxl reader converts it: empty as "", an error as missing, a whole
    number as int."""
    value = cell.value
    if value is None:
        return ""
    if cell.data_type == "e":
        return _MISSING
    if cell.data_type == "n" and not isinstance(value, bool):
        return int(value) if int(value) == value else float(value)
    return value


def _trimmed_row(row: list[Any]) -> list[Any]:
    while row and row[-1] == "":
        row.pop()
    return row


def _column(values: list[Any]) -> tuple[str, list[Any]]:
    """A column's pandas type (int, float, bool, object) and its values (missing ones as None)."""
    values = [None if v is _MISSING or (isinstance(v, str) and v in NA_TEXT) else v for v in values]
    present = [v for v in values if v is not None]
    if all(isinstance(v, bool) for v in present) and present:
        return ("bool" if len(present) == len(values) else "object"), values
    numbers = []
    for value in present:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            numbers.append(value)
        elif isinstance(value, str) and _NUMBER_TEXT.fullmatch(value):
            number = float(value)
            numbers.append(int(number) if number.is_integer() and not re.search(r"[.eE]", value) else number)
        else:
            return "object", values
    if len(present) == len(values) and all(isinstance(n, int) for n in numbers):
        return "int", numbers
    converted = iter(numbers)
    return "float", [float(next(converted)) if v is not None else None for v in values]


def _text(value: Any, kind: str, row_kind: str) -> str:
    if value is None:
        return "nan"
    if row_kind == "float" and kind in ("int", "float"):
        return str(float(value))
    return str(value)
