"""vdesk's presentation metrics (LibreOffice Impress tasks) give OSWorld's own verdicts: each case
is scored by both (tests/osworld/reference.py) on decks built here with python-pptx: the same
deck, one property changed (the near misses keep the verdict: None and False bold, a 0.3% move
inside the tolerance), missing and corrupt files."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from tests.osworld.reference import Case, assert_same_verdicts

EMU_INCH = 914400

# The base deck; _deck() builds it with some of these changed.
BASE: dict[str, Any] = {
    "title": ["Quarterly ", "review"],   # slide 1's text box, one run per string
    "size": 40, "bold": None, "italic": None, "color": None, "underline": None, "strike": None,
    "align": None, "left": 1 * EMU_INCH, "width": 6 * EMU_INCH,
    "items": [("First point", 0), ("Detail", 1)],   # slide 2's body: text and level
    "bullet": None,                                  # a buChar on slide 2's first item
    "note": "", "background": None,
    "picture": (5 * EMU_INCH, 2 * EMU_INCH, 2 * EMU_INCH, 1 * EMU_INCH),   # slide 2: left, top, width, height
    "heading": "Product Comparison", "heading_top": 1 * EMU_INCH,         # slide 3's text box
    "table_top": 2 * EMU_INCH, "cell": "a", "cell_bold": None,           # slide 3's table
    "extra_slide": False, "extra_shape": False,
    "theme_colour": False, "theme_background": False,   # a theme colour (no RGB) on the runs, the background
    "group_align": None,                                # slide 1: a group holding a text box so aligned
}


def _png() -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (8, 4), (200, 30, 30)).save(buffer, "PNG")
    return buffer.getvalue()


def _deck(tmp_path: Path, name: str, **changes: Any) -> str:
    """The base deck with ``changes``, saved as ``name``; its path."""
    import pptx
    from pptx.dml.color import RGBColor
    from pptx.enum.dml import MSO_THEME_COLOR
    from pptx.oxml.ns import qn
    from pptx.util import Emu, Pt

    spec = {**BASE, **changes}
    deck = pptx.Presentation()
    blank = deck.slide_layouts[6]

    one = deck.slides.add_slide(blank)
    box = one.shapes.add_textbox(Emu(spec["left"]), Emu(EMU_INCH), Emu(spec["width"]), Emu(EMU_INCH))
    paragraph = box.text_frame.paragraphs[0]
    if spec["align"] is not None:
        paragraph.alignment = spec["align"]
    for text in spec["title"]:
        run = paragraph.add_run()
        run.text = text
        font = run.font
        font.size = Pt(spec["size"])
        font.bold, font.italic = spec["bold"], spec["italic"]
        if spec["underline"] is not None:
            font.underline = spec["underline"]
        if spec["color"] is not None:
            font.color.rgb = RGBColor.from_string(spec["color"])
        if spec["strike"] is not None:
            run._r.get_or_add_rPr().set("strike", spec["strike"])
        if spec["theme_colour"]:
            font.color.theme_color = MSO_THEME_COLOR.ACCENT_1
    if spec["note"]:
        one.notes_slide.notes_text_frame.text = spec["note"]
    if spec["background"] is not None:
        one.background.fill.solid()
        one.background.fill.fore_color.rgb = RGBColor.from_string(spec["background"])
    if spec["theme_background"]:
        one.background.fill.solid()
        one.background.fill.fore_color.theme_color = MSO_THEME_COLOR.ACCENT_2
    group = one.shapes.add_group_shape()
    grouped = group.shapes.add_textbox(Emu(EMU_INCH), Emu(6 * EMU_INCH), Emu(2 * EMU_INCH), Emu(EMU_INCH)).text_frame
    grouped.text = "Grouped"
    if spec["group_align"] is not None:
        grouped.paragraphs[0].alignment = spec["group_align"]
    if spec["extra_shape"]:
        one.shapes.add_textbox(Emu(EMU_INCH), Emu(5 * EMU_INCH), Emu(EMU_INCH), Emu(EMU_INCH)).text_frame.text = "More"

    two = deck.slides.add_slide(blank)
    body = two.shapes.add_textbox(Emu(EMU_INCH), Emu(2 * EMU_INCH), Emu(3 * EMU_INCH), Emu(2 * EMU_INCH)).text_frame
    for index, (text, level) in enumerate(spec["items"]):
        item = body.paragraphs[0] if index == 0 else body.add_paragraph()
        item.text, item.level = text, level
        if index == 0 and spec["bullet"] is not None:
            item._p.get_or_add_pPr().append(item._p.makeelement(qn("a:buChar"), {"char": spec["bullet"]}))
    image = tmp_path / "picture.png"
    image.write_bytes(_png())
    two.shapes.add_picture(str(image), *(Emu(v) for v in spec["picture"]))

    three = deck.slides.add_slide(blank)
    heading = three.shapes.add_textbox(Emu(EMU_INCH), Emu(spec["heading_top"]), Emu(6 * EMU_INCH), Emu(EMU_INCH))
    heading.text_frame.text = spec["heading"]
    table = three.shapes.add_table(2, 2, Emu(EMU_INCH), Emu(spec["table_top"]), Emu(4 * EMU_INCH), Emu(EMU_INCH)).table
    for row in range(2):
        for column in range(2):
            table.cell(row, column).text = spec["cell"] if (row, column) == (0, 0) else f"{row}{column}"
    table.cell(1, 1).text_frame.paragraphs[0].runs[0].font.bold = spec["cell_bold"]

    if spec["extra_slide"]:
        deck.slides.add_slide(blank).shapes.add_textbox(Emu(EMU_INCH), Emu(EMU_INCH), Emu(EMU_INCH), Emu(EMU_INCH))
    path = tmp_path / name
    deck.save(str(path))
    return str(path)


def test_compare_pptx_files(tmp_path: Path) -> None:
    from pptx.enum.text import MSO_UNDERLINE, PP_ALIGN

    deck = lambda name, **changes: _deck(tmp_path, name, **changes)  # noqa: E731
    gold = deck("gold.pptx")
    same = deck("same.pptx")
    inch = EMU_INCH
    picture = BASE["picture"]
    corrupt = tmp_path / "corrupt.pptx"
    corrupt.write_bytes(b"PK\x03\x04 not really a zip")
    text_file = tmp_path / "notes.txt"
    text_file.write_text("Quarterly review\n")
    cases = [
        Case("compare_pptx_files", same, gold, label="same deck"),
        Case("compare_pptx_files", gold, gold, label="the file itself"),
        Case("compare_pptx_files", None, gold, label="none"),
        Case("compare_pptx_files", str(tmp_path / "missing.pptx"), gold, label="missing"),
        Case("compare_pptx_files", str(corrupt), gold, label="corrupt"),
        Case("compare_pptx_files", str(text_file), gold, label="not a deck"),
    ]
    changed = {
        "text": {"title": ["Annual ", "review"]},
        "one run": {"title": ["Quarterly review"]},
        "size": {"size": 44},
        "bold": {"bold": True},
        "bold false": {"bold": False},
        "italic": {"italic": True},
        "italic false": {"italic": False},
        "colour": {"color": "FF0000"},
        "underline": {"underline": True},
        "underline false": {"underline": False},
        "underline double": {"underline": MSO_UNDERLINE.DOUBLE_LINE},
        "strike": {"strike": "sngStrike"},
        "strike off": {"strike": "noStrike"},
        "centred": {"align": PP_ALIGN.CENTER},
        "left aligned": {"align": PP_ALIGN.LEFT},
        "bullet": {"bullet": "•"},
        "indent": {"items": [("First point", 0), ("Detail", 2)]},
        "item text": {"items": [("First point", 0), ("Details", 1)]},
        "one item": {"items": [("First point", 0)]},
        "note": {"note": "Say hello"},
        "background": {"background": "FF0000"},
        "extra slide": {"extra_slide": True},
        "extra shape": {"extra_shape": True},
        "moved 0.3%": {"left": int(inch * 1.003)},
        "moved 1%": {"left": int(inch * 1.01)},
        "wider": {"width": 7 * inch},
        "picture wider": {"picture": (picture[0], picture[1], 3 * inch, picture[3])},
        "picture taller": {"picture": (picture[0], picture[1], picture[2], 2 * inch)},
        "picture moved": {"picture": (6 * inch, picture[1], picture[2], picture[3])},
        "theme colour": {"theme_colour": True},
        "theme background": {"theme_background": True},
        "group centred": {"group_align": PP_ALIGN.CENTER},
        "group left": {"group_align": PP_ALIGN.LEFT},
        "cell text": {"cell": "b"},
        "cell bold": {"cell_bold": True},
        "heading lower": {"heading_top": 4 * inch},
        "table lower": {"table_top": 5 * inch},
    }
    paths = {label: deck(f"{label.replace(' ', '_').replace('%', '')}.pptx", **change) for label, change in changed.items()}
    cases += [Case("compare_pptx_files", path, gold, label=label) for label, path in paths.items()]
    cases += [Case("compare_pptx_files", gold, path, label=f"expected {label}") for label, path in paths.items()
              if label in ("note", "background", "extra slide", "bold false", "theme colour")]
    cases.append(Case("compare_pptx_files", paths["theme background"], paths["theme background"],
                      {"examine_background_color": False}, label="theme background, itself"))
    off = [
        ("text", {"examine_text": False}), ("one run", {"examine_text": False}), ("size", {"examine_font_size": False}),
        ("bold", {"examine_font_bold": False}), ("italic", {"examine_font_italic": False}),
        ("colour", {"examine_color_rgb": False}), ("underline", {"examine_font_underline": False}),
        ("strike", {"examine_strike_through": False}), ("centred", {"examine_alignment": False}),
        ("bullet", {"examine_bullets": False}), ("indent", {"examine_indent": False}),
        ("indent", {"examine_indent": False, "examine_bullets": False}),
        ("item text", {"examine_text": False}), ("item text", {"examine_text": False, "examine_bullets": False}),
        ("note", {"examine_note": False}), ("background", {"examine_background_color": False}),
        ("extra slide", {"examine_number_of_slides": False}), ("moved 1%", {"examine_shape": False}),
        ("moved 1%", {"approximately_tolerance": 0.02}), ("wider", {"examine_shape": False}),
        ("cell bold", {"examine_font_bold": False}), ("group centred", {"examine_alignment": False}),
        ("one run", {"examine_run_count": False}),
        ("text", {"examine_alignment": False, "examine_font_name": False, "examine_shape": False,
                  "examine_font_size": False, "examine_run_count": False}),
        ("picture wider", {"examine_shape": False, "examine_image_size": True}),
        ("picture moved", {"examine_shape": False, "examine_image_size": True}),
        ("moved 1%", {"examine_shape": False, "examine_image_size": True}),
        ("moved 1%", {"examine_shape": False, "examine_image_size": True, "approximately_tolerance": 0.01}),
        ("picture taller", {"examine_shape": False, "examine_modify_height": True,
                            "_note": "examine_shape=False is needed for examine_modify_height"}),
        ("picture wider", {"examine_shape": False, "examine_modify_height": True}),
        ("wider", {"examine_shape": False, "examine_modify_height": True}),
        ("wider", {"examine_shape": False, "examine_shape_for_shift_size": True}),
        ("moved 0.3%", {"examine_shape": False, "examine_shape_for_shift_size": True}),
    ]
    cases += [Case("compare_pptx_files", paths[label], gold, options, label=f"{label} {options}") for label, options in off]
    cases += [Case("compare_pptx_files", same, gold, {"_note": "a comment", "enable_debug": False}, label="comment key")]
    assert_same_verdicts(cases)


def _placeholder_deck(tmp_path: Path, name: str, title: str = "Agenda", level: int = 1, left: int | None = None) -> str:
    """A deck on the default template's "Title and Content" layout: the placeholders inherit
    their positions (unless ``left`` moves the title) and bullets from the layout."""
    import pptx
    from pptx.util import Emu

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = title
    body = slide.placeholders[1].text_frame
    body.text = "Point"
    body.add_paragraph().text, body.paragraphs[1].level = "Detail", level
    if left is not None:
        slide.shapes.title.left = Emu(left)
    path = tmp_path / name
    deck.save(str(path))
    return str(path)


def test_compare_pptx_files_on_placeholders(tmp_path: Path) -> None:
    from tests.osworld.reference import REPO

    gold = _placeholder_deck(tmp_path, "gold.pptx")
    fixture = str(REPO / "examples" / "apps" / "files" / "deck.pptx")
    decks = {
        "same": _placeholder_deck(tmp_path, "same.pptx"),
        "title": _placeholder_deck(tmp_path, "title.pptx", title="Agenda!"),
        "level": _placeholder_deck(tmp_path, "level.pptx", level=2),
        "moved": _placeholder_deck(tmp_path, "moved.pptx", left=2 * EMU_INCH),
        "another deck": fixture,
    }
    cases = [Case("compare_pptx_files", path, gold, label=label) for label, path in decks.items()]
    cases += [Case("compare_pptx_files", decks["moved"], gold, {"examine_shape": False}, label="moved, shape off"),
              Case("compare_pptx_files", decks["level"], gold, {"examine_indent": False}, label="level, indent off"),
              Case("compare_pptx_files", fixture, fixture, label="fixture itself")]
    assert_same_verdicts(cases)


def test_compare_pptx_files_position_checks(tmp_path: Path) -> None:
    """The reference's task-specific checks: the heading "Product Comparison" or slide 3's table
    moved below where the original has it, slide 2's picture moved right or up."""
    inch = EMU_INCH
    picture = BASE["picture"]
    original = _deck(tmp_path, "original.pptx")
    decks = {
        "unchanged": original,
        "heading lower": _deck(tmp_path, "heading.pptx", heading_top=4 * inch),
        "heading a bit lower": _deck(tmp_path, "heading_bit.pptx", heading_top=int(1.5 * inch)),
        "heading lower, box moved": _deck(tmp_path, "heading_box.pptx", heading_top=4 * inch, left=2 * inch),
        "other heading lower": _deck(tmp_path, "other.pptx", heading="Comparison", heading_top=4 * inch),
        "table lower": _deck(tmp_path, "table.pptx", table_top=5 * inch),
        "table a bit lower": _deck(tmp_path, "table_bit.pptx", table_top=3 * inch),
        "picture right": _deck(tmp_path, "right.pptx", picture=(6 * inch, *picture[1:])),
        "picture far right": _deck(tmp_path, "far.pptx", picture=(int(4.8 * inch), *picture[1:])),
        "picture left": _deck(tmp_path, "left.pptx", picture=(4 * inch, *picture[1:])),
        "picture up": _deck(tmp_path, "up.pptx", picture=(picture[0], 1 * inch, *picture[2:])),
        "picture a bit up": _deck(tmp_path, "bit_up.pptx", picture=(picture[0], int(1.8 * inch), *picture[2:])),
        "picture down": _deck(tmp_path, "down.pptx", picture=(picture[0], 3 * inch, *picture[2:])),
    }
    checks = [{"examine_shape": False, "examine_title_bottom_position": True},
              {"examine_table_bottom_position": True, "examine_shape": False},
              {"examine_shape": False, "examine_right_position": True},
              {"examine_shape": False, "examine_top_position": True}]
    cases = [Case("compare_pptx_files", path, original, options, label=f"{label} {options}")
             for options in checks for label, path in decks.items()]
    # Moved the right way, not far enough: right of the original but left of 4320000 EMU, up
    # from the original but below 1980000 EMU.
    left_original = _deck(tmp_path, "left_original.pptx", picture=(4 * inch, *picture[1:]))
    up_original = _deck(tmp_path, "low_original.pptx", picture=(picture[0], 3 * inch, *picture[2:]))
    cases += [
        Case("compare_pptx_files", _deck(tmp_path, "bit_right.pptx", picture=(int(4.5 * inch), *picture[1:])),
             left_original, checks[2], label="right, not far enough"),
        Case("compare_pptx_files", decks["unchanged"], left_original, checks[2], label="right, far enough"),
        Case("compare_pptx_files", _deck(tmp_path, "bit_up_low.pptx", picture=(picture[0], int(2.5 * inch), *picture[2:])),
             up_original, checks[3], label="up, not far enough"),
        Case("compare_pptx_files", decks["unchanged"], up_original, checks[3], label="up, far enough"),
    ]
    assert_same_verdicts(cases)


# -- checks of one deck -----------------------------------------------------------------------
def _plain_deck(tmp_path: Path, name: str, *, size: tuple[int, int] | None = None, slides: int = 1,
                backgrounds: list[Any] | None = None, master: str | None = None,
                transition: str | None = None) -> str:
    """A deck of ``slides`` blank slides: ``size`` (width, height in EMU), each slide's background
    (an RGB hex string, "theme", or None for none of its own), the master's background, and XML
    appended to the first slide (a transition)."""
    import pptx
    from lxml import etree
    from pptx.dml.color import RGBColor
    from pptx.enum.dml import MSO_THEME_COLOR

    deck = pptx.Presentation()
    if size is not None:
        deck.slide_width, deck.slide_height = size
    if master is not None:
        deck.slide_master.background.fill.solid()
        deck.slide_master.background.fill.fore_color.rgb = RGBColor.from_string(master)
    for index in range(slides):
        slide = deck.slides.add_slide(deck.slide_layouts[6])
        colour = (backgrounds or [None] * slides)[index]
        if colour is not None:
            slide.background.fill.solid()
            if colour == "theme":
                slide.background.fill.fore_color.theme_color = MSO_THEME_COLOR.ACCENT_1
            else:
                slide.background.fill.fore_color.rgb = RGBColor.from_string(colour)
        if transition is not None and index == 0:
            slide._element.append(etree.fromstring(transition))
    path = tmp_path / name
    deck.save(str(path))
    return str(path)


NS = ('xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" '
      'xmlns:p14="http://schemas.microsoft.com/office/powerpoint/2010/main" '
      'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"')


def test_deck_checks(tmp_path: Path) -> None:
    deck = lambda name, **kw: _plain_deck(tmp_path, name, **kw)  # noqa: E731
    corrupt = tmp_path / "corrupt.pptx"
    corrupt.write_bytes(b"PK\x03\x04 not really a zip")
    missing = str(tmp_path / "missing.pptx")
    landscape, portrait = deck("landscape.pptx"), deck("portrait.pptx", size=(6858000, 9144000))
    square = deck("square.pptx", size=(6858000, 6858000))
    dissolve = deck("dissolve.pptx", transition=f'<p:transition {NS} spd="slow"><p:dissolve/></p:transition>')
    alternate = deck("alternate.pptx", transition=(
        f'<mc:AlternateContent {NS}><mc:Choice Requires="p14"><p:transition spd="slow" p14:dur="2000">'
        '<p14:prism/></p:transition></mc:Choice><mc:Fallback><p:transition spd="slow"><p:fade/></p:transition>'
        '</mc:Fallback></mc:AlternateContent>'))
    blue, white = deck("blue.pptx", slides=2, backgrounds=["0000FF", "0000FF"]), deck("white.pptx", backgrounds=["FFFFFF"])
    mixed = deck("mixed.pptx", slides=3, backgrounds=["0000FF", "FFFFFF", "3030C0"])
    themed = deck("themed.pptx", slides=2, backgrounds=["theme", "0000FF"])
    bare, master_blue = deck("bare.pptx"), deck("master.pptx", slides=2, master="0000E0")
    master_mixed = deck("master_mixed.pptx", slides=2, master="202080", backgrounds=[None, "FF0000"])
    empty = deck("empty.pptx", slides=0)
    to_blue = {"rgb": [0, 0, 255], "original_rgb": [255, 255, 255]}
    transition = lambda kind, index=0: {"slide_idx": index, "transition_type": kind}  # noqa: E731
    cases = [
        Case("check_slide_orientation_Portrait", portrait, pass_expected=False, label="portrait"),
        Case("check_slide_orientation_Portrait", landscape, pass_expected=False, label="landscape"),
        Case("check_slide_orientation_Portrait", square, pass_expected=False, label="square"),
        Case("check_slide_orientation_Portrait", None, pass_expected=False, label="none"),
        Case("check_slide_orientation_Portrait", missing, pass_expected=False, label="missing"),
        Case("check_slide_orientation_Portrait", str(corrupt), pass_expected=False, label="corrupt"),
        Case("check_transition", dissolve, transition("dissolve"), label="dissolve"),
        Case("check_transition", dissolve, transition("fade"), label="not fade"),
        Case("check_transition", dissolve, transition("dissolve", 1), label="no second slide"),
        Case("check_transition", landscape, transition("dissolve"), label="no transition"),
        Case("check_transition", alternate, transition("fade"), label="fade only in the fallback"),
        Case("check_transition", alternate, transition("prism"), label="p14 prism is not p:prism"),
        Case("check_transition", None, transition("dissolve"), label="none"),
        Case("check_transition", missing, transition("dissolve"), label="missing"),
        Case("check_transition", str(corrupt), transition("dissolve"), label="corrupt"),
    ]
    for label, path in (("blue", blue), ("white", white), ("mixed", mixed), ("themed", themed), ("bare", bare),
                        ("master blue", master_blue), ("master mixed", master_mixed), ("no slides", empty),
                        ("none", None), ("missing", missing), ("corrupt", str(corrupt))):
        cases.append(Case("evaluate_presentation_fill_to_rgb_distance", path, to_blue, label=label))
    cases += [
        Case("evaluate_presentation_fill_to_rgb_distance", white, {"rgb": [0, 0, 255]}, label="white, no original"),
        Case("evaluate_presentation_fill_to_rgb_distance", mixed, {"rgb": [255, 0, 0]}, label="mixed to red"),
        Case("evaluate_presentation_fill_to_rgb_distance", blue, {"rgb": [0, 0]}, label="a rule colour of two numbers"),
    ]
    assert_same_verdicts(cases)


def _picture_deck(tmp_path: Path, name: str, boxes: list[tuple[float, float, float, float]], colour: tuple[int, int, int] = (200, 30, 30)) -> str:
    """A one-slide deck (10 by 7.5 inches) with one picture per box (inches: left, top, width,
    height), all of one image (``colour``)."""
    import pptx
    from PIL import Image
    from pptx.util import Inches

    image = tmp_path / f"{name}.png"
    Image.new("RGB", (8, 6), colour).save(image, "PNG")
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    for left, top, width, height in boxes:
        slide.shapes.add_picture(str(image), Inches(left), Inches(top), Inches(width), Inches(height))
    path = tmp_path / name
    deck.save(str(path))
    return str(path)


def test_check_image_stretch_and_center(tmp_path: Path) -> None:
    deck = lambda name, *boxes, **kw: _picture_deck(tmp_path, name, list(boxes), **kw)  # noqa: E731
    original = deck("original.pptx", (3, 2, 4, 3))
    stretched = {
        "stretched": deck("full.pptx", (0, 0, 10, 7.5)),
        "nearly": deck("nearly.pptx", (0.2, 0.1, 9.7, 7.3)),
        "off centre": deck("off.pptx", (0.6, 0, 10, 7.5)),
        "too narrow": deck("narrow.pptx", (0.3, 0, 9.4, 7.5)),
        "unchanged": deck("same.pptx", (3, 2, 4, 3)),
        "other image": deck("other.pptx", (0, 0, 10, 7.5), colour=(0, 0, 255)),
        "last one counts": deck("two.pptx", (0, 0, 10, 7.5), (3, 2, 4, 3)),
        "first one stretched": deck("two_b.pptx", (3, 2, 4, 3), (0, 0, 10, 7.5)),
        "no picture": _plain_deck(tmp_path, "none.pptx"),
        "no slides": _plain_deck(tmp_path, "empty.pptx", slides=0),
    }
    cases = [Case("check_image_stretch_and_center", path, original, label=label) for label, path in stretched.items()]
    cases += [Case("check_image_stretch_and_center", None, original, label="none"),
              Case("check_image_stretch_and_center", str(tmp_path / "missing.pptx"), original, label="missing"),
              Case("check_image_stretch_and_center", stretched["stretched"], stretched["no picture"],
                   label="no picture in the original")]
    assert_same_verdicts(cases)


def _master_zip(tmp_path: Path, name: str, values: list[str] | None) -> str:
    """An archive whose only member is a slide master with solid fills of ``values`` (RGB hex)."""
    import zipfile

    fills = "".join(f'<a:solidFill><a:srgbClr val="{v}"><a:lumMod val="75000"/></a:srgbClr></a:solidFill>'
                    for v in values or [])
    xml = ('<p:sldMaster xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
           'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main">'
           f'<p:cSld><p:spTree>{fills}<a:schemeClr val="tx1"/></p:spTree></p:cSld></p:sldMaster>')
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        if values is not None:
            archive.writestr("ppt/slideMasters/slideMaster1.xml", xml)
    return str(path)


def test_check_page_number_colors(tmp_path: Path) -> None:
    master = lambda name, values: _master_zip(tmp_path, name, values)  # noqa: E731
    red = master("red.pptx", ["000000", "FF0000", "FFFFFF"])
    blue = master("blue.pptx", ["0000FF", "FFFFFF"])
    green = master("green.pptx", ["00FF00", "000000"])
    dark_red = master("dark_red.pptx", ["C9211E", "000000"])
    black = master("black.pptx", ["000000", "000000"])
    short = master("short.pptx", ["FFF", "000000"])
    one = master("one.pptx", ["FF0000"])
    none_of_it = master("no_master.pptx", None)
    colour = lambda name: {"color": name}  # noqa: E731
    cases = [Case("check_page_number_colors", path, colour(name), label=f"{label} as {name}")
             for label, path in (("red", red), ("blue", blue), ("green", green), ("dark red", dark_red),
                                 ("black", black), ("short", short), ("one colour", one), ("no master", none_of_it))
             for name in ("red", "blue", "green", "black", "white")]
    cases += [Case("check_page_number_colors", None, colour("red"), label="none"),
              Case("check_page_number_colors", str(tmp_path / "missing.pptx"), colour("red"), label="missing")]
    assert_same_verdicts(cases)


# -- Impress's settings and window ------------------------------------------------------------
def _xcu(tmp_path: Path, name: str, items: str) -> str:
    path = tmp_path / name
    path.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<oor:items xmlns:oor="http://openoffice.org/2001/registry" '
                    f'xmlns:xs="http://www.w3.org/2001/XMLSchema">\n{items}\n</oor:items>\n')
    return str(path)


def _item(path: str, name: str, value: str | None) -> str:
    inner = "" if value is None else f"<value>{value}</value>"
    return f'<item oor:path="{path}"><prop oor:name="{name}" oor:op="fuse">{inner}</prop></item>'


def test_impress_settings(tmp_path: Path) -> None:
    start, save = "/org.openoffice.Office.Impress/Misc/Start", "/org.openoffice.Office.Common/Save/Document"
    xcu = lambda name, *items: _xcu(tmp_path, name, "\n".join(items))  # noqa: E731
    other = _item("/org.openoffice.Office.Common/Misc", "FirstRun", "false")
    broken = tmp_path / "broken.xcu"
    broken.write_text("<oor:items><item>")
    missing = str(tmp_path / "missing.xcu")
    console = {
        "off": xcu("off.xcu", other, _item(start, "EnablePresenterScreen", "false")),
        "off, capitalised": xcu("off_cap.xcu", _item(start, "EnablePresenterScreen", "False")),
        "on": xcu("on.xcu", _item(start, "EnablePresenterScreen", "true")),
        "off then on": xcu("off_on.xcu", _item(start, "EnablePresenterScreen", "false"),
                           _item(start, "EnablePresenterScreen", "true")),
        "on then off": xcu("on_off.xcu", _item(start, "EnablePresenterScreen", "true"),
                           _item(start, "EnablePresenterScreen", "false")),
        "empty value": xcu("empty.xcu", _item(start, "EnablePresenterScreen", "")),
        "no value": xcu("no_value.xcu", _item(start, "EnablePresenterScreen", None)),
        "other setting": xcu("other.xcu", other, _item(start, "EnablePresenterConsole", "false")),
        "broken": str(broken), "missing": missing, "none": None,
    }
    cases = [Case("check_presenter_console_disable", path, pass_expected=False, label=label) for label, path in console.items()]
    autosave = {
        "3": xcu("a3.xcu", other, _item(save, "AutoSaveTimeIntervall", "3")),
        "5": xcu("a5.xcu", _item(save, "AutoSaveTimeIntervall", "5")),
        "5 then 3": xcu("a53.xcu", _item(save, "AutoSaveTimeIntervall", "5"), _item(save, "AutoSaveTimeIntervall", "3")),
        "3 then 5": xcu("a35.xcu", _item(save, "AutoSaveTimeIntervall", "3"), _item(save, "AutoSaveTimeIntervall", "5")),
        "3, then other": xcu("a3o.xcu", _item(save, "AutoSaveTimeIntervall", "3"), _item(save, "AutoSave", "true")),
        "padded": xcu("pad.xcu", _item(save, "AutoSaveTimeIntervall", " 3 ")),
        "3.0": xcu("a30.xcu", _item(save, "AutoSaveTimeIntervall", "3.0")),
        "empty value": xcu("aempty.xcu", _item(save, "AutoSaveTimeIntervall", "")),
        "no value": xcu("anone.xcu", _item(save, "AutoSaveTimeIntervall", None)),
        "elsewhere": xcu("aelse.xcu", _item("/org.openoffice.Office.Recovery/AutoSave", "TimeIntervall", "3")),
        "broken": str(broken), "missing": missing, "none": None,
    }
    cases += [Case("check_auto_saving_time", path, {"minutes": 3}, label=label) for label, path in autosave.items()]
    assert_same_verdicts(cases)


def test_check_left_panel() -> None:
    frame = '<document-frame name="{}" st:enabled="true"/>'
    tree = ('<desktop-frame xmlns:st="https://accessibility.ubuntu.example.org/ns/state" name="main">'
            '<application name="soffice"><frame name="Untitled 1 - LibreOffice Impress">{}</frame></application>'
            '</desktop-frame>')
    cases = [
        Case("check_left_panel", tree.format(frame.format("Slides View")), pass_expected=False, label="open"),
        Case("check_left_panel", tree.format(frame.format("Slide Sorter")), pass_expected=False, label="other view"),
        Case("check_left_panel", tree.format('<panel name="Slides View"/>'), pass_expected=False, label="not a document frame"),
        Case("check_left_panel", tree.format(""), pass_expected=False, label="closed"),
        Case("check_left_panel", "<desktop-frame", pass_expected=False, label="broken"),
        Case("check_left_panel", "", pass_expected=False, label="empty"),
    ]
    assert_same_verdicts(cases)


# -- the getters audio_in_slide and background_image_in_slide ---------------------------------
# Runs in .venv-osworld: each case's getter over a fake desktop (a map of its paths to files
# here); prints what the returned file holds (hex), None, or the error.
_GETTER_CHILD = r"""
import json, sys, logging
logging.disable(logging.CRITICAL)
from desktop_env.evaluators import getters

class Controller:
    def __init__(self, files): self.files = files
    def get_file(self, path):
        host = self.files.get(path)
        if host is None: return None
        with open(host, "rb") as handle: return handle.read()

class Env:
    def __init__(self, files, cache): self.controller, self.cache_dir = Controller(files), cache

out = []
for case in json.load(sys.stdin):
    try:
        path = getattr(getters, "get_" + case["getter"])(Env(case["files"], case["cache"]), case["config"])
        out.append({"data": None if path is None else open(path, "rb").read().hex()})
    except Exception as error:
        out.append({"error": f"{type(error).__name__}: {error}"[:300]})
print(json.dumps(out))
"""


class _FakeDesktop:
    """A desktop whose files are host files: ``files`` maps a desktop path to one."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def call(self, function: Any, *args: Any, timeout: float = 0.0) -> Any:
        from vdesk.osworld import inside

        assert function is inside.file_bytes, function
        host = self.files.get(args[0])
        return None if host is None else Path(host).read_bytes()


def _with_members(tmp_path: Path, name: str, source: str, changes: dict[str, Any]) -> str:
    """A copy of the archive ``source`` with ``changes``: member → new bytes, or a function of
    the old text giving the new text."""
    import zipfile

    path = tmp_path / name
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(path, "w") as new:
        for member in old.namelist():
            data = old.read(member)
            change = changes.get(member)
            if callable(change):
                data = change(data.decode()).encode()
            elif change is not None:
                data = change
            new.writestr(member, data)
        for member, data in changes.items():
            if member not in old.namelist() and not callable(data):
                new.writestr(member, data)
    return str(path)


def _relate(*relations: tuple[str, str, str]) -> Any:
    """A change adding relationships (id, type's last word, target) to a rels file."""
    base = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
    external = ' TargetMode="External"'
    added = "".join(f'<Relationship Id="{i}" Type="{base}{kind}" Target="{target}"'
                    f'{external if target.startswith("file:") else ""}/>'
                    for i, kind, target in relations)
    return lambda text: text.replace("</Relationships>", added + "</Relationships>")


def _background(image_id: str | None) -> Any:
    """A change giving a slide a picture background (``image_id``'s), or a solid one (None)."""
    fill = (f'<a:blipFill><a:blip r:embed="{image_id}"/><a:stretch><a:fillRect/></a:stretch></a:blipFill>'
            if image_id else '<a:solidFill><a:srgbClr val="FF0000"/></a:solidFill>')
    return lambda text: text.replace("<p:cSld>", f"<p:cSld><p:bg><p:bgPr>{fill}<a:effectLst/></p:bgPr></p:bg>", 1)


def test_slide_getters(tmp_path: Path) -> None:
    import json
    import subprocess

    from tests.osworld.reference import REPO, reference_python
    from vdesk.osworld.getters import getter
    from vdesk.osworld.steps import Context

    plain = _plain_deck(tmp_path, "plain.pptx", slides=2)
    rels, slide = "ppt/slides/_rels/slide1.xml.rels", "ppt/slides/slide1.xml"
    sound, song, picture = b"ID3 embedded sound", tmp_path / "song.mp3", _png()
    song.write_bytes(b"ID3 linked sound")
    wallpaper = tmp_path / "wall.png"
    wallpaper.write_bytes(picture + b"linked")
    decks = {
        "embedded audio": _with_members(tmp_path, "a1.pptx", plain, {
            rels: _relate(("rIdA", "audio", "../media/sound1.mp3")), "ppt/media/sound1.mp3": sound}),
        "linked audio": _with_members(tmp_path, "a2.pptx", plain, {
            rels: _relate(("rIdA", "audio", "file:///home/user/song.mp3"))}),
        "audio member missing": _with_members(tmp_path, "a3.pptx", plain, {
            rels: _relate(("rIdA", "audio", "../media/gone.mp3"))}),
        "embedded background": _with_members(tmp_path, "b1.pptx", plain, {
            slide: _background("rIdB"), rels: _relate(("rIdB", "image", "../media/bg.png")), "ppt/media/bg.png": picture}),
        "linked background": _with_members(tmp_path, "b2.pptx", plain, {
            slide: _background("rIdB"), rels: _relate(("rIdB", "image", "file:///home/user/wall.png"))}),
        "solid background": _with_members(tmp_path, "b3.pptx", plain, {slide: _background(None)}),
        "background of another id": _with_members(tmp_path, "b4.pptx", plain, {
            slide: _background("rIdX"), rels: _relate(("rIdB", "image", "../media/bg.png")), "ppt/media/bg.png": picture}),
        "plain": plain,
    }
    cases = []
    for label, path in decks.items():
        for kind in ("audio_in_slide", "background_image_in_slide"):
            for index in (0, 1, 5):
                cases.append((f"{label}, {kind}, slide {index}", kind, path, index))
    cases.append(("no deck", "audio_in_slide", None, 0))
    cases.append(("no deck", "background_image_in_slide", None, 0))

    def files(path: str | None) -> dict[str, str]:
        return {**({"/home/user/Desktop/deck.pptx": path} if path else {}),
                "/home/user/song.mp3": str(song), "/home/user/wall.png": str(wallpaper)}

    def config(index: int) -> dict[str, Any]:
        return {"ppt_file_path": "/home/user/Desktop/deck.pptx", "slide_index": index, "dest": "fetched.bin"}

    payload = []
    ours = []
    for number, (_, kind, path, index) in enumerate(cases):
        cache = tmp_path / f"reference-cache-{number}"
        cache.mkdir()
        payload.append({"getter": kind, "config": config(index), "files": files(path), "cache": str(cache)})
        context = Context(_FakeDesktop(files(path)), None, None, tmp_path / f"cache-{number}", home="/home/user")  # type: ignore[arg-type]
        got = getter(kind)(context, config(index))
        ours.append(None if got is None else Path(got).read_bytes().hex())
    done = subprocess.run([str(reference_python()), "-c", _GETTER_CHILD], input=json.dumps(payload),
                          capture_output=True, text=True, timeout=600, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = [answer.get("data") for answer in json.loads(done.stdout.strip().splitlines()[-1])]
    differ = [f"{case[0]}: vdesk {a and bytes.fromhex(a)[:20]!r}, reference {b and bytes.fromhex(b)[:20]!r}"
              for case, a, b in zip(cases, ours, theirs) if a != b]
    assert not differ, "getters differ from OSWorld's own code:\n" + "\n".join(differ)
    assert sum(a is not None for a in ours) == 4   # the embedded and linked sound and picture, slide 0
