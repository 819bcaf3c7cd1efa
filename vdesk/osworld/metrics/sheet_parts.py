"""What ``compare_table``'s object rules compare in a worksheet: its charts, its pivot tables and
its cells' styles (conditional formatting applied), each read into a value two sheets are
compared by, as the reference reads them with openpyxl.

Each reader returns ``{}`` for a sheet the workbook lacks (the reference does, so two missing
sheets compare equal). A reader that meets what the reference would crash on raises
:class:`~vdesk.errors.DocumentError`; the rule then fails (the reference's crash scores the task
0, and the rules run in order, so the verdict is the same).
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable, Iterable
from typing import Any

from vdesk.errors import DocumentError, UnsupportedMetric

CELL_STYLES = ("number_format", "font_name", "font_family", "font_color", "font_bold", "font_italic",
               "font_underline", "font_size", "fill_type", "bgcolor", "fgcolor", "hyperlink", "merge")
CONTIGUOUS_EMPTY = 50    # empty cells in a row after which the reference stops testing a formatted range


# -- charts ----------------------------------------------------------------------------------
def _formula(data: Any) -> str:
    """A series' reference (numbers before strings), or '' when it has none."""
    for ref in (getattr(data, "numRef", None), getattr(data, "strRef", None)):
        if ref is not None:
            return ref.f
    return ""


def _title(title: Any) -> str | None:
    try:
        return title.tx.rich.p[0].r[0].t
    except (AttributeError, IndexError, TypeError):
        return None


def _chart_props(chart: Any, props: set[str]) -> dict[str, Any]:
    info: dict[str, Any] = {}
    if "title" in props:
        info["title"] = _title(chart.title)
    if "legend" in props:
        info["legend"] = chart.legend.position if chart.legend is not None else None
    if "anchor" in props:  # the reference's five numbers, the start row left out as it leaves it
        anchor = chart.anchor
        info["anchor"] = [anchor.editAs, anchor._from.col, anchor.to.row, anchor.to.col, anchor.to.row]
    for prop, attribute in (("width", "width"), ("height", "height"), ("type", "tagname"), ("direction", "barDir")):
        if prop in props:
            info[prop] = getattr(chart, attribute)
    for prop, axis in (("xtitle", "x_axis"), ("ytitle", "y_axis"), ("ztitle", "z_axis")):
        if prop in props:
            info[prop] = _title(getattr(getattr(chart, axis, None), "title", None))
    return info


def charts(sheet: Any, props: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The sheet's charts by their series (``values,categories;...``), each with the asked
    properties; a later chart with the same series replaces an earlier one, as in the reference."""
    wanted = set(props)
    try:
        found = {}
        for chart in sheet._charts:
            series = ";".join(f"{_formula(s.val)},{_formula(s.cat)}" for s in chart.series)
            found[series] = _chart_props(chart, wanted)
        return found
    except AttributeError as error:  # a chart kind without barDir, an anchor without its corner
        raise DocumentError(f"chart: {error}") from None


# -- pivot tables ----------------------------------------------------------------------------
def _trimmed(fields: list[list[tuple[Any, int]]]) -> tuple[int, list[list[tuple[Any, int]]]]:
    """The fields' item selections without the empty ones at both ends, and how many were
    dropped at the start (the reference counts fields from the first one with items)."""
    start = 0
    while start < len(fields) and not fields[start]:
        start += 1
    end = len(fields)
    while end > start and not fields[end - 1]:
        end -= 1
    return start, fields[start:end]


def _pivot(pivot: Any, props: set[str]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    from openpyxl.utils.cell import coordinate_to_tuple

    fields = [[(item.h, item.x) for item in field.items if item.x is not None] for field in pivot.pivotFields]
    left, selection = _trimmed(fields)
    right = len(fields) - left - len(selection)
    source = pivot.cache.cacheSource
    sheet_source = source.worksheetSource
    try:
        first, last = (coordinate_to_tuple(c) for c in sheet_source.ref.split(":"))
    except (AttributeError, ValueError, TypeError) as error:  # a named source: no "A1:B2" range
        raise DocumentError(f"pivot source {getattr(sheet_source, 'ref', None)!r}: {error}") from None
    key = (source.type, first[0], first[1] + left, last[0], last[1] - right, sheet_source.sheet)
    info: dict[str, Any] = {}
    for prop, attribute in (("name", "name"), ("show_total", "visualTotals"), ("show_empty_row", "showEmptyRow"),
                            ("show_empty_col", "showEmptyCol"), ("show_headers", "showHeaders"),
                            ("location", "location")):
        if prop in props:
            info[prop] = getattr(pivot, attribute)
    if "filter" in props or "selection" in props:
        info["selection"] = selection if "ordered" in props else [set(items) for items in selection]
    if "filter" in props:
        info["filter_fields"] = {f.fld for f in pivot.pageFields}
    if "col_fields" in props:
        info["col_fields"] = [f.x - left for f in pivot.colFields]
    if "row_fields" in props:
        info["row_fields"] = [f.x - left for f in pivot.rowFields]
    if "data_fields" in props:
        info["data_fields"] = [(f.fld - left, str(f.name) if "data_fields_name" in props else "",
                                str(f.subtotal), str(f.showDataAs)) for f in pivot.dataFields]
    return key, info


def pivots(sheet: Any, props: Iterable[str]) -> dict[tuple[Any, ...], dict[str, Any]]:
    """The sheet's pivot tables by their source range (``type``, the range narrowed to the
    fields with items, the source sheet), each with the asked properties."""
    wanted = set(props)
    return dict(_pivot(pivot, wanted) for pivot in sheet._pivots)


# -- cell styles -----------------------------------------------------------------------------
def cell_style(prop: str, cell: Any, differential: Any = None) -> Any:
    """One style property of a cell as the reference reads it (``differential``: a conditional
    format's style, which then stands for the cell's). Most read None for an empty cell; ``bgcolor``
    is the fill's foreground colour (the one a solid fill shows); ``merge`` is True for a cell
    covered by a merged range (not its first cell)."""
    style = differential or cell
    empty = cell.value is None
    if prop == "number_format":
        if empty or cell.data_type != "n":
            return None
        return cell.number_format if differential is None else differential.numFmt.formatCode
    if prop in ("font_name", "font_family", "font_color", "font_bold", "font_italic", "font_underline", "font_size"):
        if empty:
            return None
        font = style.font
        return {"font_name": lambda: font.name, "font_family": lambda: font.family, "font_color": lambda: font.color.rgb,
                "font_bold": lambda: font.bold, "font_italic": lambda: font.italic,
                "font_underline": lambda: font.underline, "font_size": lambda: font.size}[prop]()
    if prop == "fill_type":
        return getattr(style.fill, "tagname", None)
    if prop in ("bgcolor", "fgcolor"):
        try:
            return differential.fill.bgColor.rgb if differential is not None else cell.fill.fgColor.rgb
        except AttributeError:
            return None
    if prop == "hyperlink":
        return cell.hyperlink or ("" if not empty else None)
    if prop == "merge":
        from openpyxl.cell.cell import MergedCell
        return isinstance(cell, MergedCell)
    raise UnsupportedMetric(f"compare_table: cell style {prop!r} is not supported (supported: {', '.join(CELL_STYLES)})")


def styles(sheet: Any, raw: RawSheet, props: list[str]) -> dict[str, list[Any]]:
    """Every cell's asked styles, then, for each cell a conditional format's rule makes active,
    that rule's style instead."""
    try:
        found = {cell.coordinate: [cell_style(p, cell) for p in props] for column in sheet.iter_cols() for cell in column}
        previous: Condition | None = None
        for formatting in sheet.conditional_formatting:
            for rule in formatting.rules:
                active = _condition(rule, previous)
                if active is None:
                    continue
                previous = active
                for cell in _active_cells(sheet, raw, formatting.cells.ranges, active):
                    found[cell.coordinate] = [cell_style(p, cell, rule.dxf) for p in props]
        return found
    except AttributeError as error:  # a font without a colour, a rule without its style
        raise DocumentError(f"style: {error}") from None


_REFERENCE = re.compile(r"\$?[A-Za-z]{1,3}\$?\d+")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_OPERATORS: dict[str, Callable[[Any, list[Any]], bool]] = {
    "lessThan": lambda v, r: v < r[0], "lessThanOrEqual": lambda v, r: v <= r[0], "equal": lambda v, r: v == r[0],
    "notEqual": lambda v, r: v != r[0], "greaterThan": lambda v, r: v > r[0],
    "greaterThanOrEqual": lambda v, r: v >= r[0],
    "between": lambda v, r: min(r) <= v <= max(r), "notBetween": lambda v, r: v < min(r) or v > max(r),
}


def _constant(formula: str) -> Any:
    """A conditional format's constant operand; :class:`LookupError` for one that reads cells
    (the reference computes its operands without the sheet, fails, and skips the rule)."""
    text = formula.strip()
    if _NUMBER.fullmatch(text):
        number = float(text)
        return int(number) if number.is_integer() and not re.search(r"[.eE]", text) else number
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1].replace('""', '"')
    if text.upper() in ("TRUE", "FALSE"):
        return text.upper() == "TRUE"
    if _REFERENCE.search(text):
        raise LookupError(text)
    raise UnsupportedMetric(f"compare_table: a conditional format's operand {text!r} is not evaluated by vdesk")


Condition = Callable[[Any], bool]


def _condition(rule: Any, previous: Condition | None) -> Condition | None:
    """When a conditional format's rule is active for a cell value. A ``cellIs`` rule with
    constant operands is evaluated; one whose operands read cells is skipped (None), as the
    reference skips it. A rule of a kind the reference does not evaluate (top10, duplicates …)
    applies the last evaluated rule's condition, as the reference's does (a stale variable there).
    Rules that are formulas over the cells (``expression``, ``containsText`` …) the reference
    evaluates with a spreadsheet formula engine; vdesk has none, so they raise
    :class:`UnsupportedMetric` (the evaluation then scores 0, saying why)."""
    if rule.type == "cellIs":
        try:
            operands = [_constant(f) for f in rule.formula]
        except LookupError:
            return None
        test = _OPERATORS.get(rule.operator, lambda v, r: False)  # the reference's other operators match nothing

        def holds(value: Any) -> bool:
            try:
                return bool(test(value, operands))
            except (TypeError, IndexError):
                return False
        return holds
    if rule.type in ("expression", "containsText", "notContainsText", "endsWith", "beginsWith", "containsErrors",
                     "notContainsErrors"):
        raise UnsupportedMetric(f"compare_table: a conditional format of type {rule.type!r} (a formula over the "
                                "cells) is not evaluated by vdesk")
    return previous


def _active_cells(sheet: Any, raw: RawSheet, ranges: Iterable[Any], active: Condition) -> list[Any]:
    cells, empty = [], 0
    for cell_range in ranges:
        for row, column in cell_range.cells:
            cell = sheet.cell(row=row, column=column)  # made if missing, as the reference makes it (a later rule sees it)
            value = raw.value(row, column)
            if value is None:
                empty += 1
                if empty > CONTIGUOUS_EMPTY:
                    break
                continue
            if active(value):
                cells.append(cell)
    return cells


class RawSheet:
    """A sheet's cell values as stored in the file, typed as the reference's ``read_cell_value``
    types them: numbers as float, strings (shared, inline, formula results, errors) as text, and
    None for booleans and empty cells. It finds the sheet's part as the reference does, by the
    sheet's ``sheetId`` (``xl/worksheets/sheet<id>.xml``)."""

    NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"

    def __init__(self, data: bytes, name: str) -> None:
        self._values: dict[tuple[int, int], Any] = {}
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                shared = self._shared(archive)
                workbook = _xml(archive.read("xl/workbook.xml"))
                ids = {s.get("name"): s.get("sheetId") for s in workbook.iter(f"{self.NS}sheet")}
                sheet = _xml(archive.read(f"xl/worksheets/sheet{ids[name]}.xml"))
        except (KeyError, zipfile.BadZipFile, ValueError):
            return
        from openpyxl.utils.cell import coordinate_to_tuple
        for cell in sheet.iter(f"{self.NS}c"):
            if cell.get("r"):
                self._values[coordinate_to_tuple(cell.get("r"))] = self._typed(cell, shared)

    def value(self, row: int, column: int) -> Any:
        return self._values.get((row, column))

    def _shared(self, archive: zipfile.ZipFile) -> list[str]:
        try:
            root = _xml(archive.read("xl/sharedStrings.xml"))
        except (KeyError, ValueError):
            return []
        return ["".join(t.text or "" for t in item.iter(f"{self.NS}t")) for item in root.iter(f"{self.NS}si")]

    def _typed(self, cell: Any, shared: list[str]) -> Any:
        kind, value = cell.get("t", "n"), cell.findtext(f"{self.NS}v")
        try:
            if kind == "n":
                return float(value) if value is not None else None
            if kind == "s":
                return shared[int(value)] if value is not None else None
            if kind in ("str", "e"):
                return value
            if kind == "inlineStr":
                return cell.findtext(f"{self.NS}is/{self.NS}t")
        except (ValueError, IndexError):
            return None
        return None


def _xml(data: bytes) -> Any:
    from lxml import etree

    try:
        return etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False))
    except etree.XMLSyntaxError as error:
        raise ValueError(str(error)) from None
