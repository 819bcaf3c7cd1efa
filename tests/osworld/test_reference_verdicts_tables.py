"""vdesk's compare_table rules over a sheet's objects (pivot tables, charts, cell styles with
conditional formatting, merged cells) give OSWorld's own verdicts: each case is scored by both
(tests/osworld/reference.py) on workbooks built here with openpyxl, whose pivot tables and charts
are real parts of the file (a pivot cache and its table, a chart drawing): right answers, near
misses, wrong ones, missing sheets and files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.osworld.reference import Case, assert_same_verdicts

openpyxl = pytest.importorskip("openpyxl")

DATA = [("Region", "Product", "Month", "Sales"), ("North", "Pens", "Jan", 10), ("South", "Ink", "Jan", 20),
        ("North", "Ink", "Feb", 30), ("South", "Pens", "Feb", 40)]


def _pivot_book(path: Path, rows: list[int] = (0,), cols: list[int] = (), data: list[tuple[int, str]] = ((3, "sum"),),
                pages: list[int] = (), hidden: dict[int, list[int]] | None = None, ref: str = "A1:D5",
                sheet: str = "Sheet2") -> str:
    """A workbook with DATA on Sheet1 and one pivot table over ``ref`` on ``sheet``: row, column,
    page (filter) fields by index, data fields as (field, subtotal), items hidden per field."""
    from openpyxl.pivot.cache import CacheDefinition, CacheField, CacheSource, SharedItems, WorksheetSource
    from openpyxl.pivot.table import (DataField, FieldItem, Location, PageField, PivotField, RowColField,
                                      TableDefinition)

    book = openpyxl.Workbook()
    book.active.title = "Sheet1"
    for row in DATA:
        book.active.append(row)
    target = book.create_sheet(sheet)
    hidden = hidden or {}
    fields = []
    for index in range(4):
        axis = "axisRow" if index in rows else "axisCol" if index in cols else "axisPage" if index in pages else None
        items = [FieldItem(x=i, h=True if i in hidden.get(index, []) else None) for i in range(2)] + \
            [FieldItem(t="default")] if axis else []
        fields.append(PivotField(axis=axis, showAll=False, items=items,
                                 dataField=True if any(f == index for f, _ in data) else None))
    table = TableDefinition(
        name="Pivot", cacheId=1, dataCaption="Values",
        location=Location(ref="A3:C8", firstHeaderRow=1, firstDataRow=1, firstDataCol=1),
        pivotFields=fields, rowFields=[RowColField(x=x) for x in rows], colFields=[RowColField(x=x) for x in cols],
        pageFields=[PageField(fld=x, hier=-1) for x in pages],
        dataFields=[DataField(name=f"{subtotal} of {DATA[0][f]}", fld=f, subtotal=subtotal) for f, subtotal in data])
    table.cache = CacheDefinition(
        cacheSource=CacheSource(type="worksheet", worksheetSource=WorksheetSource(ref=ref, sheet="Sheet1")),
        cacheFields=[CacheField(name=name, sharedItems=SharedItems()) for name in DATA[0]])
    target._pivots.append(table)
    book.save(path)
    return str(path)


def test_pivot_table(tmp_path: Path) -> None:
    gold = _pivot_book(tmp_path / "gold.xlsx", rows=[0], cols=[2], data=[(3, "sum")], pages=[1])
    props = {"pivot_props": ["col_fields", "filter", "row_fields", "data_fields"]}

    def rule(**extra: Any) -> dict[str, Any]:
        return {"rules": [{"type": "pivot_table", "sheet_idx0": "RNSheet2", "sheet_idx1": "ENSheet2", **props, **extra}]}

    def case(name: str, label: str, options: dict[str, Any] | None = None, **kwargs: Any) -> Case:
        path = _pivot_book(tmp_path / name, **kwargs) if kwargs or name != "none.xlsx" else str(tmp_path / name)
        return Case("compare_table", path, gold, options or rule(), label=label)

    assert_same_verdicts([
        case("same.xlsx", "same pivot", rows=[0], cols=[2], data=[(3, "sum")], pages=[1]),
        case("rows.xlsx", "other row field", rows=[1], cols=[2], data=[(3, "sum")], pages=[0]),
        case("swap.xlsx", "rows and columns swapped", rows=[2], cols=[0], data=[(3, "sum")], pages=[1]),
        case("avg.xlsx", "average, not sum", rows=[0], cols=[2], data=[(3, "average")], pages=[1]),
        case("nofilter.xlsx", "no filter field", rows=[0], cols=[2], data=[(3, "sum")]),
        case("hidden.xlsx", "an item hidden", rows=[0], cols=[2], data=[(3, "sum")], pages=[1], hidden={0: [1]}),
        case("range.xlsx", "a wider source range", rows=[0], cols=[2], data=[(3, "sum")], pages=[1], ref="A1:D9"),
        case("other.xlsx", "on another sheet", rows=[0], cols=[2], data=[(3, "sum")], pages=[1], sheet="Pivot"),
        case("named.xlsx", "data field name asked, names differ", rule(pivot_props=["data_fields", "data_fields_name"]),
             rows=[0], cols=[2], data=[(3, "count")], pages=[1]),
        case("ordered.xlsx", "ordered selection", rule(pivot_props=["selection", "ordered", "name", "show_total"]),
             rows=[0], cols=[2], data=[(3, "sum")], pages=[1], hidden={0: [0]}),
        Case("compare_table", str(tmp_path / "none.xlsx"), gold, rule(), label="missing result"),
        Case("compare_table", gold, gold, {"rules": [{"type": "pivot_table", "sheet_idx0": "RNNope",
                                                      "sheet_idx1": "ENNope", **props}]}, label="both sheets missing"),
    ])


def _chart_book(path: Path, kind: str = "bar", title: str | None = "Sales", direction: str = "col",
                values: str = "D2:D5", sheet: str = "Sheet1", legend: str | None = "r", axis_title: str | None = None) -> str:
    from openpyxl.chart import BarChart, LineChart, PieChart, Reference

    book = openpyxl.Workbook()
    book.active.title = "Sheet1"
    for row in DATA:
        book.active.append(row)
    chart = {"bar": BarChart, "line": LineChart, "pie": PieChart}[kind]()
    if kind == "bar":
        chart.type = direction
    first, last = values.split(":")
    chart.add_data(Reference(book.active, range_string=f"Sheet1!{first}:{last}"), titles_from_data=False)
    chart.set_categories(Reference(book.active, range_string="Sheet1!A2:A5"))
    if title:
        chart.title = title
    if legend is None:
        chart.legend = None
    else:
        chart.legend.position = legend
    if axis_title and kind != "pie":
        chart.x_axis.title = axis_title
    target = book.active if sheet == "Sheet1" else book.create_sheet(sheet)
    target.add_chart(chart, "F2")
    book.save(path)
    return str(path)


def test_chart(tmp_path: Path) -> None:
    gold = _chart_book(tmp_path / "gold.xlsx")

    def case(name: str, label: str, props: list[str], index: Any = 0, gold_path: str = gold, **kwargs: Any) -> Case:
        options = {"rules": [{"type": "chart", "sheet_idx0": index, "sheet_idx1": "EI0", "chart_props": props}]}
        return Case("compare_table", _chart_book(tmp_path / name, **kwargs), gold_path, options, label=label)

    assert_same_verdicts([
        case("same.xlsx", "same chart", ["type", "title"]),
        case("line.xlsx", "a line chart", ["type"], kind="line"),
        case("pie.xlsx", "a pie chart, type and title", ["type", "title"], kind="pie"),
        case("retitled.xlsx", "another title", ["type", "title"], title="Revenue"),
        case("untitled.xlsx", "no title", ["title"], title=None),
        case("bars.xlsx", "horizontal bars", ["type", "direction"], direction="bar"),
        case("cols.xlsx", "same direction", ["type", "direction"]),
        case("series.xlsx", "other data", ["type"], values="D1:D5"),
        case("legend.xlsx", "legend at the bottom", ["legend"], legend="b"),
        case("nolegend.xlsx", "no legend", ["legend"], legend=None),
        case("axis.xlsx", "an axis title", ["xtitle", "ytitle"], axis_title="Region"),
        case("size.xlsx", "size and type", ["width", "height", "type"]),
        case("elsewhere.xlsx", "chart on a sheet not compared", ["type"], sheet="Chart"),
        case("named.xlsx", "sheet by name", ["type"], index="RNSheet1"),
        case("missing.xlsx", "result sheet missing", ["type"], index="RNNope"),
        Case("compare_table", str(tmp_path / "none.xlsx"), gold,
             {"rules": [{"type": "chart", "sheet_idx0": 0, "sheet_idx1": "EI0", "chart_props": ["type"]}]},
             label="missing file"),
    ])


def _styled_book(path: Path, fills: dict[str, str] | None = None, fonts: dict[str, str] | None = None,
                 formats: list[tuple[str, str, list[str], dict[str, str]]] | None = None,
                 values: list[Any] | None = None) -> str:
    """Numbers in A1:A8; ``fills``/``fonts``: cell → RGB set directly; ``formats``: conditional
    formats (range, cellIs operator, operands, {"fill": rgb} or {"font": rgb})."""
    from openpyxl.formatting.rule import CellIsRule
    from openpyxl.styles import Font, PatternFill

    book = openpyxl.Workbook()
    sheet = book.active
    for row, value in enumerate(values or [3, 8, 1, 9, 5, "x", 7, 2], start=1):
        sheet.cell(row=row, column=1, value=value)
    for where, rgb in (fills or {}).items():
        sheet[where].fill = PatternFill("solid", fgColor=rgb)
    for where, rgb in (fonts or {}).items():
        sheet[where].font = Font(color=rgb)
    for where, operator, operands, style in formats or []:
        extra = {"fill": PatternFill("solid", bgColor=style["fill"])} if "fill" in style else {"font": Font(color=style["font"])}
        if operator == "top10":  # a kind the reference does not evaluate
            from openpyxl.formatting.rule import Rule
            from openpyxl.styles.differential import DifferentialStyle
            sheet.conditional_formatting.add(where, Rule(type="top10", rank=int(operands[0]),
                                                         dxf=DifferentialStyle(**extra)))
            continue
        sheet.conditional_formatting.add(where, CellIsRule(operator=operator, formula=operands, **extra))
    book.save(path)
    return str(path)


def test_style(tmp_path: Path) -> None:
    red, green = "FFFF0000", "FF00FF00"
    gold_fill = _styled_book(tmp_path / "gold_fill.xlsx", fills={"A2": red, "A4": red})
    gold_font = _styled_book(tmp_path / "gold_font.xlsx", fonts={"A4": green})

    def case(name: str, gold: str, prop: str, label: str, **kwargs: Any) -> Case:
        options = {"rules": [{"type": "style", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": [prop]}]}
        return Case("compare_table", _styled_book(tmp_path / name, **kwargs), gold, options, label=label)

    assert_same_verdicts([
        case("fill_same.xlsx", gold_fill, "bgcolor", "fills set directly", fills={"A2": red, "A4": red}),
        case("fill_one.xlsx", gold_fill, "bgcolor", "one fill missing", fills={"A2": red}),
        case("fill_extra.xlsx", gold_fill, "bgcolor", "one fill too many", fills={"A2": red, "A4": red, "A6": red}),
        case("fill_other.xlsx", gold_fill, "bgcolor", "another colour", fills={"A2": "FFFF0001", "A4": red}),
        case("fill_cf.xlsx", gold_fill, "bgcolor", "conditional format over 7",
             formats=[("A1:A8", "greaterThan", ["7"], {"fill": red})]),
        case("fill_cf_between.xlsx", gold_fill, "bgcolor", "conditional format between",
             formats=[("A1:A8", "between", ["8", "9"], {"fill": red})]),
        case("fill_cf_wide.xlsx", gold_fill, "bgcolor", "conditional format too wide",
             formats=[("A1:A8", "greaterThanOrEqual", ["7"], {"fill": red})]),
        case("fill_cf_ref.xlsx", gold_fill, "bgcolor", "conditional format reading a cell",
             formats=[("A1:A8", "greaterThan", ["$A$7"], {"fill": red})]),
        case("font_same.xlsx", gold_font, "font_color", "font colour set directly", fonts={"A4": green}),
        case("font_other.xlsx", gold_font, "font_color", "font colour on another cell", fonts={"A2": green}),
        case("font_cf.xlsx", gold_font, "font_color", "font colour by an equal-to format",
             formats=[("A1:A8", "equal", ["9"], {"font": green})]),
        case("font_cf_text.xlsx", gold_font, "font_color", "text operand",
             formats=[("A1:A8", "equal", ['"x"'], {"font": green})]),
        case("font_top.xlsx", gold_font, "font_color", "top-1 format (not evaluated)",
             formats=[("A1:A8", "top10", ["1"], {"font": green})]),
        case("font_after.xlsx", gold_font, "font_color", "top-1 format after an equal-to one",
             formats=[("A1:A8", "equal", ["9"], {"font": green}), ("A1:A3", "top10", ["1"], {"font": green})]),
        Case("compare_table", str(tmp_path / "none.xlsx"), gold_fill,
             {"rules": [{"type": "style", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["bgcolor"]}]},
             label="missing file"),
        Case("compare_table", _styled_book(tmp_path / "twice.xlsx", fills={"A2": red, "A4": red},
                                           formats=[("A1:A20", "greaterThan", ["100"], {"fill": red})]), gold_fill,
             {"rules": [{"type": "style", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["bgcolor"]}] * 2},
             label="two style rules, a format over empty cells"),
    ])


def test_a_conditional_format_that_is_a_formula_is_refused_by_name(tmp_path: Path) -> None:
    """The reference evaluates such a format with a spreadsheet formula engine; vdesk has none
    and says so (the evaluation scores 0 with that reason) rather than guess."""
    from openpyxl.formatting.rule import FormulaRule
    from openpyxl.styles import PatternFill

    from vdesk.errors import UnsupportedMetric
    from vdesk.osworld.metrics import lookup

    book = openpyxl.Workbook()
    book.active["A1"] = 5
    book.active.conditional_formatting.add("A1:A5", FormulaRule(formula=["WEEKDAY(A1,2)>5"],
                                                                fill=PatternFill("solid", bgColor="FFFF0000")))
    book.save(tmp_path / "formula.xlsx")
    rule = {"type": "style", "sheet_idx0": 0, "sheet_idx1": 0, "props": ["bgcolor"]}
    with pytest.raises(UnsupportedMetric, match="type 'expression'"):
        lookup("compare_table")(str(tmp_path / "formula.xlsx"), None, rules=[rule])


def test_check_cell_merge_and_styles(tmp_path: Path) -> None:
    from openpyxl.styles import Font, PatternFill

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Sheet2"
    for row in range(1, 4):
        for column in range(1, 6):
            sheet.cell(row=row, column=column, value=row * column)
    sheet.merge_cells("A1:C1")
    sheet.merge_cells("B2:D2")
    sheet["E3"].fill = PatternFill("solid", fgColor="FFFF0000")
    sheet["E3"].font = Font(color="FF00FF00", bold=True)
    book.save(tmp_path / "merged.xlsx")
    path = str(tmp_path / "merged.xlsx")

    def case(coordinate: str, props: dict[str, Any], label: str) -> Case:
        rule = {"type": "check_cell", "sheet_idx": "RNSheet2", "coordinate": coordinate, "props": props}
        return Case("compare_table", path, None, {"rules": [rule]}, label=label)

    merged, alone = {"merge": {"method": "eq", "ref": True}}, {"merge": {"method": "eq", "ref": False}}
    assert_same_verdicts([
        case("B1", merged, "covered cell"),
        case("C1", merged, "last covered cell"),
        case("A1", merged, "first cell of the range"),
        case("A1", alone, "first cell, not merged"),
        case("D1", alone, "outside"),
        case("D2", merged, "second range"),
        case("E2", merged, "outside, said merged"),
        case("E3", {"bgcolor": {"method": "eq", "ref": "FFFF0000"}}, "solid fill's colour"),
        case("D3", {"bgcolor": {"method": "eq", "ref": "00000000"}}, "no fill"),
        case("E3", {"font_color": {"method": "eq", "ref": "FF00FF00"}}, "font colour"),
        case("E3", {"font_bold": {"method": "eq", "ref": True}}, "bold"),
        case("D3", {"font_bold": {"method": "eq", "ref": False}}, "not bold"),
        Case("compare_table", path, None, {"rules": [{"type": "check_cell", "sheet_idx": "RNNope", "coordinate": "B1",
                                                      "props": merged}]}, label="no such sheet"),
    ])
