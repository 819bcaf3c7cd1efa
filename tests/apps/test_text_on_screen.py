"""Text on screen and typing receipts in the apps desktop: what is typed into a GTK editor is
read back by OCR where it shows, and the receipt finds it in the focused element's text."""

from __future__ import annotations

import re

import pytest

from vdesk.desktop import Desktop

pytestmark = pytest.mark.desktop


def test_text_typed_into_mousepad_is_found_on_screen_and_in_the_focused_element():
    with Desktop.up(size=(1280, 800), image="apps", timeout=120) as desktop:
        desktop.programs.run(["mousepad"])
        window = desktop.windows.wait_for("Mousepad", timeout=90)
        desktop.windows.focus(window)
        desktop.screen.settle(quiet=0.5, timeout=30)
        # settle=True: the careful receipt, which also reads the focused element's text
        result = desktop.input.execute([{"type": "type", "inputs": {"content": "Meeting moved to Thursday 10:30"}}], settle=True)
        assert result.status == "success", result
        receipt = result.receipt
        assert receipt is not None, result
        assert receipt.typed is True and receipt.focused and receipt.focused.startswith("text"), receipt
        [box] = desktop.text.wait_for(re.compile(r"Meeting moved to Thursday \d\d:\d\d"), timeout=30)
        left, top, right, bottom = box.bounds
        assert window.x <= left and right <= window.x + window.width and window.y <= top and bottom <= window.y + window.height
        # The receipt, read once the text is drawn, has a region that covers it.
        receipt = desktop.input.receipt()
        assert receipt.changed, receipt
        assert any(r[0] <= left + 5 and r[1] <= top + 5 and right - 5 <= r[2] and bottom - 5 <= r[3]
                   for r in receipt.regions), (receipt, box)


def test_text_on_a_chromium_page_is_found_where_it_shows():
    with Desktop.up(size=(1280, 800), image="apps", timeout=120) as desktop:
        page = ("<title>Order form</title><h1>Order form</h1><p>Total: 42.50 EUR</p>"
                "<button onclick=\"document.title='Order sent'\">Submit order</button>")
        desktop.files.write_file("/home/desk/page.html", page.encode())
        desktop.programs.run(["chromium", "/home/desk/page.html"])
        desktop.windows.wait_for("Order form", timeout=90)
        [total] = desktop.text.wait_for("Total: 42.50 EUR", timeout=60)
        [button] = desktop.text.find("Submit order")
        assert button.bounds[1] > total.bounds[1]  # below it, as laid out
        # where the page itself says the button is: the text read lies inside the button's box
        drawn = desktop.elements.tree().find("push button", "Submit order").bounds
        assert drawn is not None
        left, top, right, bottom = button.bounds
        assert drawn.x <= left and right <= drawn.x + drawn.width, (button.bounds, drawn)
        assert drawn.y <= top and bottom <= drawn.y + drawn.height, (button.bounds, drawn)
        result = desktop.input.execute([{"type": "click", "inputs": {"point": {"raw": {"x": round(button.centre[0]),
                                                                                 "y": round(button.centre[1])}}}}])
        assert result.status == "success" and result.receipt is not None, result
        desktop.windows.wait_for("Order sent", timeout=30)  # the click at the text's centre pressed the button
