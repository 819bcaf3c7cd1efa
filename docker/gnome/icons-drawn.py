"""Exit 0 once the desktop's icons are drawn: the Home icon's cell at the screen's bottom right
(where the desktop icons start) holds an icon's many colours, not a wallpaper facet's few. The
desktop icons' window maps a moment before they are drawn, and the first frame must show them.
Exit 1 after the bound (argument 1, seconds)."""

import sys
import time

from Xlib import X, display

CELL = (110, 110, 30, 40)  # the cell's left and top from the screen's right and bottom edges, its right and bottom


def colours(screen: display.Display) -> int:
    root = screen.screen().root
    width, height = screen.screen().width_in_pixels, screen.screen().height_in_pixels
    left, top, right, bottom = width - CELL[0], height - CELL[1], width - CELL[2], height - CELL[3]
    image = root.get_image(left, top, right - left, bottom - top, X.ZPixmap, 0xFFFFFFFF)
    data = image.data
    return len({data[i:i + 3] for i in range(0, len(data), 4)})


def main(bound: float) -> int:
    screen = display.Display()
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        if colours(screen) > 24:
            return 0
        time.sleep(0.05)
    return 1


if __name__ == "__main__":
    sys.exit(main(float(sys.argv[1])))
