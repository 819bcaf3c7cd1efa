"""One coordinate model: from what an agent names to the physical pixel the pointer reaches.

Three spaces are involved:

* the **physical** framebuffer of the X server (``Screen.physical_size``), where xdotool acts;
* the **logical** screen (``Screen.width`` × ``Screen.height``): physical ÷ scale, the size
  screenshots are delivered at by default and the size ``normalized`` coordinates refer to;
* the **image** an agent actually saw, which may be resized for a model (``ImageSpace``):
  ``raw`` coordinates are pixels of that image.

Every pixel index names the pixel's centre, so mapping a pixel of the image an agent saw gives
the physical pixel whose footprint contains that centre — the round trip the property tests prove.

Scaling is exact (integers and fractions, never a float product): a float cannot hold 0.575,
and 0.575 × 800 computed in floating point is 459.99…, one pixel short of 460.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Literal

from vdesk.errors import InvalidAction, InvalidArgument

# Anthropic's computer-use tool scales screenshots to one of these, chosen by aspect ratio.
ANTHROPIC_TARGETS: tuple[tuple[int, int], ...] = ((1024, 768), (1280, 800), (1366, 768))

# The largest denominator a fraction of the screen is read with: far above any grid a model
# writes in (0..1000, a smart-resized image's pixels, their half-steps for a box's centre),
# and its neighbours are still 1e-12 apart, far below a pixel of any screen.
MAX_DENOMINATOR = 10**6


@dataclass(frozen=True)
class Screen:
    """A desktop's screen: its logical size and the HiDPI scale of the framebuffer behind it."""

    width: int
    height: int
    scale: float = 1.0

    def __post_init__(self) -> None:
        if not _positive_whole(self.width) or not _positive_whole(self.height):
            raise InvalidArgument(f"screen size must be positive whole numbers, got {self.width!r}x{self.height!r}")
        if not isinstance(self.scale, (int, float)) or not 0.5 <= self.scale <= 4:
            raise InvalidArgument(f"scale must be between 0.5 and 4, got {self.scale}")

    @property
    def size(self) -> tuple[int, int]:
        return (self.width, self.height)

    @property
    def physical_size(self) -> tuple[int, int]:
        return (round(self.width * self.scale), round(self.height * self.scale))

    def image(self) -> ImageSpace:
        """The image space of a screenshot delivered at the logical size."""
        return ImageSpace(self.width, self.height)


@dataclass(frozen=True)
class ImageSpace:
    """The size of the screenshot an agent was shown; ``raw`` coordinates are its pixels."""

    width: int
    height: int

    def __post_init__(self) -> None:
        if not _positive_whole(self.width) or not _positive_whole(self.height):
            raise InvalidArgument(f"image size must be positive whole numbers, got {self.width!r}x{self.height!r}")

    @property
    def size(self) -> tuple[int, int]:
        return (self.width, self.height)


Space = Literal["logical", "physical", "image"]
"""Which pixels a :class:`Box` is in: the logical screen's, the X framebuffer's, or an image's."""


@dataclass(frozen=True, eq=False)
class Box:
    """A rectangle of pixels, ``left`` and ``top`` inside it, ``right`` and ``bottom`` just
    outside, in the pixels of ``space``. Both views: ``left, top, right, bottom`` (what OCR and
    a frame's changes give) and ``x, y, width, height`` (what an accessibility tree gives);
    iterating gives the first, as the ``(left, top, right, bottom)`` tuples it replaces."""

    left: float
    top: float
    right: float
    bottom: float
    space: Space = "logical"

    @classmethod
    def from_xywh(cls, x: float, y: float, width: float, height: float, space: Space = "logical") -> Box:
        return cls(x, y, x + width, y + height, space)

    @classmethod
    def of(cls, value: Box | Sequence[float], space: Space = "logical") -> Box:
        """``value`` as a box of ``space``: a Box of that space, or ``(left, top, right, bottom)``;
        raises :class:`InvalidArgument` naming anything else."""
        if isinstance(value, Box):
            if value.space != space:
                raise InvalidArgument(f"a box of {space} pixels is needed here, got one of {value.space} pixels")
            return value
        if not (isinstance(value, (tuple, list)) and len(value) == 4
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)
                and value[0] <= value[2] and value[1] <= value[3]):
            raise InvalidArgument(f"a region must be (left, top, right, bottom) with left <= right and top <= bottom, "
                                  f"got {value!r}")
        return cls(value[0], value[1], value[2], value[3], space)

    @property
    def x(self) -> float:
        return self.left

    @property
    def y(self) -> float:
        return self.top

    @property
    def width(self) -> float:
        return self.right - self.left

    @property
    def height(self) -> float:
        return self.bottom - self.top

    @property
    def ltrb(self) -> tuple[float, float, float, float]:
        return (self.left, self.top, self.right, self.bottom)

    @property
    def xywh(self) -> tuple[float, float, float, float]:
        return (self.left, self.top, self.width, self.height)

    # A (left, top, right, bottom) tuple's ways, which OCR's boxes and regions were until they
    # were Boxes: unpacking, indexing and comparing with such a tuple keep working.
    def __iter__(self) -> Iterator[float]:
        return iter(self.ltrb)

    def __len__(self) -> int:
        return 4

    def __getitem__(self, index: int) -> float:
        return self.ltrb[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Box):
            return (self.ltrb, self.space) == (other.ltrb, other.space)
        if isinstance(other, tuple):
            return self.ltrb == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.ltrb)

    @property
    def centre(self) -> tuple[float, float]:
        return ((self.left + self.right) / 2, (self.top + self.bottom) / 2)

    @property
    def empty(self) -> bool:
        return self.right <= self.left or self.bottom <= self.top

    def contains(self, x: float, y: float) -> bool:
        return self.left <= x < self.right and self.top <= y < self.bottom

    def inside(self, other: Box) -> bool:
        """True when this box lies wholly within ``other``."""
        return (other.left <= self.left and other.top <= self.top
                and self.right <= other.right and self.bottom <= other.bottom)

    def shifted(self, dx: float, dy: float) -> Box:
        return replace(self, left=self.left + dx, top=self.top + dy, right=self.right + dx, bottom=self.bottom + dy)

    def physical(self, scale: float) -> Box:
        """This logical box in physical pixels, each edge rounded to the nearest."""
        return Box(round(self.left * scale), round(self.top * scale), round(self.right * scale),
                   round(self.bottom * scale), "physical")

    def logical(self, scale: float) -> Box:
        """This physical box as the logical pixels that cover it."""
        return Box(math.floor(self.left / scale), math.floor(self.top / scale),
                   math.ceil(self.right / scale), math.ceil(self.bottom / scale), "logical")

    def pixels(self) -> tuple[int, int, int, int]:
        """The edges as whole pixels (what PIL crops by)."""
        return (round(self.left), round(self.top), round(self.right), round(self.bottom))


def union(boxes: Iterable[Box]) -> Box:
    """The smallest box around ``boxes`` (at least one, all of one space)."""
    each = list(boxes)
    return Box(min(b.left for b in each), min(b.top for b in each), max(b.right for b in each),
               max(b.bottom for b in each), each[0].space)


def _positive_whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


@dataclass(frozen=True)
class PhysicalPoint:
    """A pixel of the X framebuffer: what xdotool is given."""

    x: int
    y: int


def from_image(x: float, y: float, image: ImageSpace, screen: Screen) -> PhysicalPoint:
    """Map pixel ``(x, y)`` of the image an agent saw to the physical pixel under its centre.

    Raises :class:`InvalidAction` when the point lies outside the image.
    """
    if not (0 <= x < image.width and 0 <= y < image.height):
        raise InvalidAction(
            f"point ({_fmt(x)}, {_fmt(y)}) is outside the {image.width}x{image.height} screen"
        )
    pw, ph = screen.physical_size
    return PhysicalPoint(_centre_cell(math.floor(x), image.width, pw), _centre_cell(math.floor(y), image.height, ph))


def from_normalized(x: float, y: float, screen: Screen) -> PhysicalPoint:
    """Map 0..1 fractions of the screen to a physical pixel; 1.0 is the last pixel."""
    if not (0 <= x <= 1 and 0 <= y <= 1):
        raise InvalidAction(
            f"normalized point ({_fmt(x)}, {_fmt(y)}) is outside the screen (0..1)"
        )
    pw, ph = screen.physical_size
    return PhysicalPoint(min(math.floor(_fraction(x) * pw), pw - 1), min(math.floor(_fraction(y) * ph), ph - 1))


def to_image(point: PhysicalPoint, image: ImageSpace, screen: Screen) -> tuple[float, float]:
    """The position, in image pixels, of a physical pixel's centre (the inverse map)."""
    pw, ph = screen.physical_size
    return ((point.x + 0.5) * image.width / pw, (point.y + 0.5) * image.height / ph)


def image_pixel(point: PhysicalPoint, image: ImageSpace, screen: Screen) -> tuple[int, int]:
    """The image pixel a physical pixel's centre falls in (the pointer as a screenshot shows it)."""
    x, y = to_image(point, image, screen)
    return min(math.floor(x), image.width - 1), min(math.floor(y), image.height - 1)


def _centre_cell(index: int, extent: int, target_extent: int) -> int:
    """The cell of ``target_extent`` cells under the centre of cell ``index`` of ``extent``."""
    return min((2 * index + 1) * target_extent // (2 * extent), target_extent - 1)


def _fraction(value: float) -> Fraction:
    """The fraction a float stands for: 0.575 (stored as 0.57499999999999995559…) is 23/40."""
    return Fraction(value).limit_denominator(MAX_DENOMINATOR)


def _fmt(value: float) -> str:
    return f"{value:g}"


def fit_max_pixels(screen: Screen, max_pixels: int) -> ImageSpace:
    """The largest image with the screen's aspect ratio and at most ``max_pixels`` pixels."""
    if max_pixels < 1:
        raise InvalidArgument("max_pixels must be positive")
    factor = min(1.0, math.sqrt(max_pixels / (screen.width * screen.height)))
    width, height = math.floor(screen.width * factor), math.floor(screen.height * factor)
    if width < 1 or height < 1:
        raise InvalidArgument(f"max_pixels={max_pixels} is too small for a {screen.width}x{screen.height} screen")
    return ImageSpace(width, height)


def anthropic_target(screen: Screen) -> ImageSpace:
    """The XGA/WXGA/FWXGA size Anthropic's tool would scale this screen to (or the screen's own
    size when it is already no larger, or no target has a close aspect ratio)."""
    ratio = screen.width / screen.height
    for width, height in ANTHROPIC_TARGETS:
        if abs(width / height - ratio) < 0.02 and width < screen.width:
            return ImageSpace(width, height)
    return screen.image()


def smart_resize(
    width: int,
    height: int,
    factor: int = 28,
    min_pixels: int = 56 * 56,
    max_pixels: int = 16384 * 28 * 28,
    max_ratio: float = 200,
) -> ImageSpace:
    """The image size UI-TARS-1.5 (Qwen2.5-VL) sees: both sides multiples of ``factor``, the
    pixel count within bounds, the aspect ratio kept as closely as those allow."""
    if max(width, height) / min(width, height) > max_ratio:
        raise InvalidArgument(f"aspect ratio of {width}x{height} exceeds {max_ratio}")
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar = math.floor(height / beta / factor) * factor
        w_bar = math.floor(width / beta / factor) * factor
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return ImageSpace(w_bar, h_bar)
