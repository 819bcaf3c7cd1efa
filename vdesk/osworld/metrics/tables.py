"""OSWorld's table metrics: ``compare_table`` with its common rules, and ``compare_csv``.

Workbooks are read with openpyxl (which parses through defusedxml, so entities are never
expanded) after the archive check; cells are compared by the value a spreadsheet shows (a
formula's last computed result, as saved). A sheet is named as the reference names it: an
index into the result's sheets (``0``), ``RI<n>`` / ``RN<name>`` for the result's,
``EI<n>`` / ``EN<name>`` for the expected workbook's. The rules over a sheet's objects
(``chart``, ``pivot_table``, ``style``) and the cell styles of ``check_cell`` read them as the
reference does (:mod:`.sheet_parts`).
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

from vdesk.errors import DocumentError, UnsupportedMetric
from vdesk.osworld.metrics.general import match_value
from vdesk.osworld.metrics.inputs import read_archive, read_text
from vdesk.osworld.metrics.registry import metric
from vdesk.osworld.metrics.sheet_parts import CELL_STYLES, RawSheet, cell_style, charts, pivots, styles

RULES = ("sheet_name", "sheet_data", "sheet_print", "sheet_fuzzy", "check_cell", "freeze", "zoom",
         "data_validation", "row_props", "col_props", "chart", "pivot_table", "style")
DIMENSION_PROPERTIES = ("hidden", "height", "width", "outline_level", "outlineLevel", "collapsed")
FUZZY_TYPES = ("includes", "included_by", "fuzzy_match", "exact_match")


def _check_rules(options: Mapping[str, Any]) -> None:
    rules = options.get("rules")
    if not isinstance(rules, list) or not rules:
        raise UnsupportedMetric("compare_table needs a non-empty list of 'rules'")
    for rule in rules:
        kind = rule.get("type") if isinstance(rule, Mapping) else None
        if kind not in RULES:
            raise UnsupportedMetric(f"compare_table: rule type {kind!r} is not supported (supported: {', '.join(RULES)})")
        for prop in rule.get("props", {}) if kind in ("check_cell", "style") else ():
            if prop not in CELL_STYLES and not (prop == "value" and kind == "check_cell"):
                raise UnsupportedMetric(f"compare_table: {kind} property {prop!r} is not supported")
        for prop in rule.get("props", []) if kind in ("row_props", "col_props") else ():
            if prop not in DIMENSION_PROPERTIES:
                raise UnsupportedMetric(f"compare_table: {kind} property {prop!r} is not supported")
        for fuzzy in rule.get("rules", []) if kind == "sheet_fuzzy" else ():
            if fuzzy.get("type") not in FUZZY_TYPES:
                raise UnsupportedMetric(f"compare_table: sheet_fuzzy type {fuzzy.get('type')!r} is not supported")


@dataclass
class Book:
    """One workbook, twice: cells with their styles, and the values shown."""

    path: str
    cells: Any      # openpyxl Workbook (formulas, styles, views)
    values: Any     # openpyxl Workbook, data_only

    @property
    def sheets(self) -> list[str]:
        return list(self.cells.sheetnames)


def load_book(path: str) -> Book:
    import openpyxl

    data = read_archive(path)
    try:
        return Book(path, openpyxl.load_workbook(io.BytesIO(data)),
                    openpyxl.load_workbook(io.BytesIO(data), data_only=True))
    except Exception as error:  # openpyxl raises many kinds for a damaged workbook
        raise DocumentError(f"{path}: not a readable workbook: {type(error).__name__}: {str(error)[:160]}") from None


def _sheet(index: Any, result: Book, expected: Book | None) -> tuple[Book, str] | None:
    """The workbook and sheet name an index means; None when it names no sheet."""
    book: Book | None = result
    if isinstance(index, int):
        names, position = result.sheets, index
    elif isinstance(index, str) and index[:2] in ("RI", "RN", "EI", "EN"):
        book = result if index[0] == "R" else expected
        if book is None:
            return None
        if index[1] == "N":
            return (book, index[2:]) if index[2:] in book.sheets else None
        names, position = book.sheets, int(index[2:]) if index[2:].isdigit() else -1
    else:
        raise UnsupportedMetric(f"compare_table: sheet index {index!r} is not one of 0, RI0, RNname, EI0, ENname")
    return (book, names[position]) if 0 <= position < len(names) else None


def _grid(book: Book, name: str, precision: int) -> list[list[Any]]:
    """The shown values of a sheet, numbers rounded, trailing empty rows and columns cut."""
    rows = []
    for row in book.values[name].iter_rows(values_only=True):
        cells = [round(float(v), precision) if isinstance(v, (int, float)) and not isinstance(v, bool) else v
                 for v in row]
        while cells and cells[-1] in (None, ""):
            cells.pop()
        rows.append(cells)
    while rows and not rows[-1]:
        rows.pop()
    return rows


def _printed(book: Book, name: str) -> list[str] | None:
    """The sheet as exported to ``<book>-<sheet>.csv`` beside it (the task's postconfig makes it)."""
    csv = Path(book.path).with_name(f"{Path(book.path).stem}-{name}.csv")
    if not csv.is_file():
        return None
    lines = [line.strip() for line in read_text(csv).splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _cell_style(prop: str, cell: Any) -> Any:
    """A check_cell style property; None where reading it fails (a font without a colour), as
    the reference reads it there."""
    try:
        return cell_style(prop, cell)
    except AttributeError:
        return None


def _normalised(value: str, rule: Mapping[str, Any]) -> str:
    for old, new in rule.get("normalization", []):
        value = value.replace(old, new)
    if "trim_leadings" in rule:
        value = value.lstrip(rule["trim_leadings"])
    if "trim_trailings" in rule:
        value = value.rstrip(rule["trim_trailings"])
    if "ignore_chars" in rule:
        value = "".join(c for c in value if c not in set(rule["ignore_chars"]))
    return value.lower() if rule.get("ignore_case") else value


def _fuzzy(first: tuple[Book, str], second: tuple[Book, str], rules: list[Mapping[str, Any]]) -> bool:
    from openpyxl.utils import get_column_letter
    from openpyxl.worksheet.cell_range import MultiCellRange

    for rule in rules:
        for cell_range in MultiCellRange(" ".join(rule["range"])):
            for row, column in cell_range.cells:
                where = f"{get_column_letter(column)}{row}"
                one = _normalised(str(first[0].values[first[1]][where].value), rule)
                two = _normalised(str(second[0].values[second[1]][where].value), rule)
                kind = rule["type"]
                passed = (two in one if kind == "includes" else one in two if kind == "included_by"
                          else fuzz.ratio(one, two) >= rule.get("threshold", 85.0) if kind == "fuzzy_match"
                          else one == two)
                if not passed:
                    return False
    return True


def _validations_hold(sheet: Any, wanted: list[Mapping[str, Any]]) -> bool:
    """Every data validation of the sheet matches one of ``dv_props`` (each a dict of attribute →
    ``{"method", "ref"}``), and there are at least as many validations as wanted."""
    validations = list(sheet.data_validations.dataValidation)
    if len(validations) < len(wanted):
        return False

    def attribute(validation: Any, name: str) -> Any:
        value = getattr(validation, "sqref" if name == "ranges" else name, None)
        return str(value) if name in ("ranges", "sqref") else value

    return all(any(all(match_value(attribute(v, name), check) for name, check in props.items()) for props in wanted)
               for v in validations)


def _dimensions(book: Book, name: str, kind: str, props: list[str]) -> dict[str, dict[str, Any]]:
    """The rows' (or columns') properties that are set, by index."""
    sheet = book.cells[name]
    dimensions = sheet.row_dimensions if kind == "row_props" else sheet.column_dimensions
    found = {}
    for index, dimension in dimensions.items():
        values = {prop: getattr(dimension, "outline_level" if prop == "outlineLevel" else prop, None) for prop in props}
        if any(v not in (None, False, 0) for v in values.values()):
            found[str(index)] = values
    return found


def _parts(kind: str, rule: Mapping[str, Any], index: Any, result: Book, expected: Book | None) -> dict[Any, Any]:
    """A sheet's charts, pivot tables or cell styles (:mod:`.sheet_parts`); ``{}`` when the index
    names no sheet, as the reference reads a missing one."""
    where = _sheet(index, result, expected)
    if where is None:
        return {}
    book, name = where
    sheet = book.cells[name]
    if kind == "chart":
        return charts(sheet, rule.get("chart_props", []))
    if kind == "pivot_table":
        return pivots(sheet, rule.get("pivot_props", []))
    return styles(sheet, RawSheet(read_archive(book.path), name), list(rule.get("props", [])))


def _rule_holds(rule: Mapping[str, Any], result: Book, expected: Book | None) -> bool:
    kind = rule["type"]
    if kind == "sheet_name":
        return expected is not None and result.sheets == expected.sheets
    if kind in ("zoom", "check_cell", "data_validation"):
        where = _sheet(rule["sheet_idx"], result, expected)
        if where is None:
            return False
        if kind == "data_validation":
            return _validations_hold(where[0].cells[where[1]], rule.get("dv_props", []))
        if kind == "zoom":
            return match_value(where[0].cells[where[1]].sheet_view.zoomScale or 100.0, rule)
        cell = where[0].cells[where[1]][rule["coordinate"]]
        return all(match_value(where[0].values[where[1]][rule["coordinate"]].value if prop == "value"
                               else _cell_style(prop, cell), check)
                   for prop, check in rule["props"].items())
    if kind in ("chart", "pivot_table", "style"):
        try:
            return _parts(kind, rule, rule["sheet_idx0"], result, expected) == \
                _parts(kind, rule, rule["sheet_idx1"], result, expected)
        except DocumentError:   # what the reference would crash on, or a part past the limits
            return False
    first = _sheet(rule["sheet_idx0"], result, expected)
    second = _sheet(rule["sheet_idx1"], result, expected)
    if first is None or second is None:
        return False
    if kind == "sheet_data":
        precision = int(rule.get("precision", 4))
        return _grid(*first, precision) == _grid(*second, precision)
    if kind == "sheet_print":
        one, two = _printed(*first), _printed(*second)
        if rule.get("ignore_case") and one is not None and two is not None:
            one, two = [s.lower() for s in one], [s.lower() for s in two]
        return one is not None and one == two
    if kind == "sheet_fuzzy":
        return _fuzzy(first, second, rule["rules"])
    if kind in ("row_props", "col_props"):
        return _dimensions(*first, kind, rule.get("props", [])) == _dimensions(*second, kind, rule.get("props", []))
    if kind == "freeze":
        return first[0].cells[first[1]].freeze_panes == second[0].cells[second[1]].freeze_panes
    raise UnsupportedMetric(f"compare_table: rule type {kind!r} is not supported")


@metric("compare_table", options=("rules",), check=_check_rules)
def compare_table(result: Any, expected: Any = None, rules: list[Mapping[str, Any]] | None = None) -> float:
    """1 when every rule holds, in order, for the result workbook (and the expected one)."""
    if result is None or not Path(str(result)).is_file():
        return 0.0
    try:
        result_book = load_book(str(result))
    except DocumentError:
        return 0.0
    expected_book = load_book(str(expected)) if expected is not None else None
    return float(all(_rule_holds(rule, result_book, expected_book) for rule in rules or []))


@metric("compare_csv", options=("strict", "ignore_case"))
def compare_csv(result: Any, expected: Any, strict: bool = True, ignore_case: bool = False) -> float:
    """The CSV file ``result`` has the lines of ``expected`` (or of one of a list of expected
    files); not ``strict``: each line stripped; ``ignore_case``: lowercased."""
    if result is None:
        return 0.0
    try:
        got = _csv_lines(str(result), strict, ignore_case)
    except DocumentError:
        return 0.0
    for candidate in expected if isinstance(expected, list) else [expected]:
        if candidate is not None and Path(str(candidate)).is_file() and \
                _csv_lines(str(candidate), strict, ignore_case) == got:
            return 1.0
    return 0.0


def _csv_lines(path: str, strict: bool, ignore_case: bool) -> list[str]:
    lines = read_text(path).splitlines()
    if not strict:
        lines = [line.strip() for line in lines]
    return [line.lower() for line in lines] if ignore_case else lines
