"""The osworld desktop's wallpaper, drawn at build time: a low-poly field from a deep aubergine at
the top left (where the dock and the top bar sit) to a warm orange at the bottom right, with a
lighter dome of facets right of the centre. Our own drawing, made to have the character of a
stock Ubuntu 22.04 desktop (its palette and its gradient's direction), not a copy of its picture.
Deterministic: the same file at every build.

    python3 wallpaper.py OUT.png
"""

import random
import sys

from PIL import Image, ImageDraw

WIDTH, HEIGHT = 1920, 1080
STOPS = [(0.0, (64, 10, 44)), (0.35, (100, 20, 70)), (0.7, (170, 40, 72)), (1.0, (233, 84, 32))]
CELL = 96  # the facets' spacing, in pixels
DOME = (1250, 520, 330)  # centre x, centre y, radius of the lighter facets


def gradient(t: float) -> tuple[int, int, int]:
    """The field's colour at ``t`` (0 top left, 1 bottom right) between the stops."""
    t = min(max(t, 0.0), 1.0)
    for (t0, c0), (t1, c1) in zip(STOPS, STOPS[1:]):
        if t <= t1:
            f = (t - t0) / (t1 - t0)
            return tuple(round(a + (b - a) * f) for a, b in zip(c0, c1))  # type: ignore[return-value]
    return STOPS[-1][1]


def facet_colour(x: float, y: float, rng: random.Random) -> tuple[int, int, int]:
    t = (x / WIDTH) * 0.55 + (y / HEIGHT) * 0.45
    base = gradient(t + rng.uniform(-0.04, 0.04))
    dx, dy, radius = x - DOME[0], y - DOME[1], DOME[2]
    inside = max(0.0, 1.0 - (dx * dx + dy * dy) ** 0.5 / radius)
    lift = 0.45 * inside + rng.uniform(0.0, 0.05)
    return tuple(round(c + (255 - c) * lift * (0.55 if i == 1 else 0.8)) for i, c in enumerate(base))  # type: ignore[return-value]


def main(out: str) -> None:
    rng = random.Random(2204)
    columns, rows = WIDTH // CELL + 2, HEIGHT // CELL + 2
    points = [[(c * CELL + rng.uniform(-0.35, 0.35) * CELL * (0 < c < columns - 1),
                r * CELL + rng.uniform(-0.35, 0.35) * CELL * (0 < r < rows - 1))
               for c in range(columns)] for r in range(rows)]
    image = Image.new("RGB", (WIDTH, HEIGHT))
    draw = ImageDraw.Draw(image)
    for r in range(rows - 1):
        for c in range(columns - 1):
            a, b, d, e = points[r][c], points[r][c + 1], points[r + 1][c], points[r + 1][c + 1]
            for triangle in ((a, b, e), (a, e, d)) if (r + c) % 2 else ((a, b, d), (b, e, d)):
                cx = sum(p[0] for p in triangle) / 3
                cy = sum(p[1] for p in triangle) / 3
                draw.polygon(triangle, fill=facet_colour(cx, cy, rng))
    image.save(out, optimize=True)


if __name__ == "__main__":
    main(sys.argv[1])
