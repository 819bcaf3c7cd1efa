"""Make the documents the apps suite starts from (examples/apps/files/), with the libraries the
checks read them with; the OpenDocument and PDF ones are converted from these by LibreOffice
in a desktop (see examples/apps/README.md). Run: .venv/bin/python scripts/make_apps_files.py"""

from pathlib import Path

import docx
import openpyxl
import pptx
from PIL import Image, ImageDraw

FOLDER = Path(__file__).resolve().parent.parent / "examples" / "apps" / "files"


def workbook(path: Path, rows: list[list[object]]) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Sheet1"
    for row in rows:
        sheet.append(row)
    book.save(path)


def letter(path: Path, paragraphs: list[str]) -> None:
    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    document.save(path)


def deck(path: Path, title: str, subtitle: str) -> None:
    presentation = pptx.Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[0])
    slide.shapes.title.text = title
    slide.placeholders[1].text = subtitle
    presentation.save(path)



def picture(path: Path) -> None:
    image = Image.new("RGB", (320, 200), "#f4f1e8")
    draw = ImageDraw.Draw(image)
    draw.rectangle((20, 30, 140, 170), fill="#d1495b")
    draw.ellipse((190, 50, 290, 150), fill="#00798c")
    image.save(path)


def main() -> None:
    FOLDER.mkdir(parents=True, exist_ok=True)
    workbook(FOLDER / "budget.xlsx", [["Item", "Cost"]])
    workbook(FOLDER / "prices.xlsx", [["Item", "Price", "Qty", "Total"], ["Pens", 2.5, 4], ["Paper", 6, 3]])
    letter(FOLDER / "memo.docx", ["Team memo", "This is urgent news for everyone.", "Thanks for reading."])
    letter(FOLDER / "notes.docx", ["Reading list", "Read the manual before the meeting.", "Bring a pen."])
    deck(FOLDER / "deck.pptx", "Quarterly review", "Numbers and plans")
    picture(FOLDER / "shapes.png")  # and the reference of the GIMP task: the same, flipped
    Image.open(FOLDER / "shapes.png").transpose(Image.Transpose.FLIP_LEFT_RIGHT).save(FOLDER / "shapes-flipped.png")


if __name__ == "__main__":
    main()
