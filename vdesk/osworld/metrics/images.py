"""OSWorld's image metrics: GIMP's edits (brighter, more saturated, mirrored, resized, palette
colours...) judged against the original, and pictures compared by structural similarity (SSIM).

The verdicts must be the reference's to its thresholds, so the pixels go through the same Pillow
operations in the same order (conversions, resampling filters, point tables) and SSIM is
scikit-image's ``structural_similarity`` with the reference's arguments; what the reference does
with OpenCV or pixel loops is done here with numpy, to the same result.

Images out of a desktop are untrusted: a file is read bounded (:mod:`.inputs`), and its header's
pixel count is checked against :data:`PIXEL_LIMIT` before a single pixel is decoded, and only
the raster formats Pillow decodes itself are opened (:data:`FORMATS`). An image
that cannot be read scores 0, whichever side it is on: these tasks put the desktop's file on
either side (the darker-background task passes it as ``expected``), and the reference's runner
scores any failure 0. Where the reference raises on an odd image (a mode it cannot convert, a
black picture it divides by) the metric scores 0 the same way.
"""

from __future__ import annotations

import functools
import io
import os
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np
from PIL import Image, ImageChops, ImageStat

from vdesk.errors import DocumentError
from vdesk.osworld.metrics.inputs import read_bytes
from vdesk.osworld.metrics.registry import metric

PIXEL_LIMIT = 50_000_000  # pixels one image may have (a 50-megapixel photo), checked before decoding
SSIM_WINDOW = 7           # scikit-image's default window, and the smallest side the reference compares
# The raster formats Pillow decodes itself. Not EPS or PDF: Pillow hands those to Ghostscript, a
# program the desktop's file must not get to run on the host.
FORMATS = ("PNG", "JPEG", "GIF", "BMP", "DIB", "TIFF", "WEBP", "PPM", "TGA", "ICO", "PCX", "PSD")

F = TypeVar("F", bound=Callable[..., float])

# What the reference raises on an image it cannot handle (its runner scores that 0): decoding
# errors, a conversion Pillow lacks (RGBA to HSV), a division by a zero brightness, an index past
# a picture's side.
_FAILURES = (DocumentError, OSError, ValueError, TypeError, IndexError, KeyError, ZeroDivisionError)


def _zero_on_failure(function: F) -> F:
    """Score 0 where the reference raises (see :data:`_FAILURES`)."""
    @functools.wraps(function)
    def scored(*args: Any, **kwargs: Any) -> float:
        try:
            return function(*args, **kwargs)
        except _FAILURES:
            return 0.0
    return scored  # type: ignore[return-value]


def open_image(path: Any) -> Image.Image:
    """The decoded image at ``path``; :class:`DocumentError` when it is missing, too large (in
    bytes or in pixels) or not an image Pillow can read."""
    if path is None:
        raise DocumentError("no image")
    data = read_bytes(os.fspath(path))
    try:
        image = Image.open(io.BytesIO(data), formats=FORMATS)
        width, height = image.size   # from the header: nothing decoded yet
        if width * height > PIXEL_LIMIT:
            raise DocumentError(f"{path}: {width}x{height} pixels, over the limit of {PIXEL_LIMIT}")
        image.load()
    except DocumentError:
        raise
    except Exception as error:  # Pillow's decoders raise many kinds on a damaged file
        raise DocumentError(f"{path}: not a readable image: {type(error).__name__}: {str(error)[:160]}") from None
    return image


def ssim(one: np.ndarray, two: np.ndarray, **options: Any) -> float:
    """scikit-image's structural similarity of two arrays (imported late: it is slow to import)."""
    from skimage.metrics import structural_similarity
    return float(structural_similarity(one, two, **options))


def _rgb(image: Image.Image) -> Image.Image:
    return image if image.mode == "RGB" else image.convert("RGB")


def structure_same(one: Image.Image, two: Image.Image, threshold: float = 0.9) -> bool:
    """The two pictures are alike: the same size, at least 7 pixels a side, and the SSIM of
    their RGB pixels (7-pixel window) at least ``threshold``."""
    if min(one.size + two.size) < SSIM_WINDOW:
        return False
    one, two = _rgb(one), _rgb(two)
    if one.size != two.size:
        return False
    try:
        return ssim(np.array(one), np.array(two), win_size=SSIM_WINDOW, channel_axis=2) >= threshold
    except ValueError:
        return False


def _brightness(image: Image.Image) -> float:
    """The mean of the picture's grey levels."""
    return ImageStat.Stat(image.convert("L")).mean[0]


# -- whole pictures compared -----------------------------------------------------------------
@metric("compare_images", options=("reference_base_result",))
@_zero_on_failure
def compare_images(result: Any, expected: Any, reference_base_result: float | None = None) -> float:
    """The SSIM of the two pictures in grey, both resized (Lanczos) to the smaller size, where
    "smaller" compares widths first, then heights, as the reference's ``min`` of two size tuples
    does. With ``reference_base_result`` (the SSIM an untouched desktop already gets) the score is
    the gain over that base, scaled to [0, 1], and 0 unless the gain reaches 0.01. Like the
    reference, the bare SSIM can be negative for pictures that are unlike."""
    if not result or not expected:
        return 0.0
    one, two = open_image(result).convert("L"), open_image(expected).convert("L")
    size = min(one.size, two.size)
    one, two = (image.resize(size, Image.Resampling.LANCZOS) for image in (one, two))
    similarity = ssim(np.array(one), np.array(two))
    if reference_base_result is None:
        return similarity
    base = reference_base_result
    return (similarity - base) / (1 - base) if similarity >= base + 0.01 else 0.0


@metric("compare_image_list")
@_zero_on_failure
def compare_image_list(result: Any, expected: Any) -> float:
    """Each result picture equals its expected one pixel for pixel, after it is resized (Lanczos)
    to the expected size and converted to its mode. As in the reference, the lists are paired
    as far as the shorter goes (empty lists pass), and for pictures with an alpha channel
    Pillow's bounding box of the difference looks at the alpha only, so two pictures with the
    same transparency but other colours count as equal."""
    if not isinstance(result, list):
        result, expected = [result], [expected]
    for got_path, want_path in zip(result, expected):
        if not got_path or not want_path:
            return 0.0
        got, want = open_image(got_path), open_image(want_path)
        if got.size != want.size:
            got = got.resize(want.size, Image.Resampling.LANCZOS)
        if got.mode != want.mode:
            got = got.convert(want.mode)
        if ImageChops.difference(got, want).getbbox():
            return 0.0
    return 1.0


@metric("check_structure_sim")
@_zero_on_failure
def check_structure_sim(result: Any, expected: Any) -> float:
    """The two pictures have the same size and SSIM ≥ 0.9."""
    if result is None or expected is None:
        return 0.0
    got, want = open_image(result), open_image(expected)
    return float(got.size == want.size and structure_same(got, want))


@metric("check_structure_sim_with_threshold", options=("ssim_threshold",))
@_zero_on_failure
def check_structure_sim_with_threshold(result: Any, expected: Any, ssim_threshold: float = 0.85) -> float:
    """SSIM ≥ ``ssim_threshold`` (0.85 by default) once the result is resized (Lanczos) to the
    expected size; a picture under 7 pixels a side is compared with the largest odd window it
    holds. (The pinned reference package lacks this metric; it is OSWorld's newer source's.)"""
    if result is None or expected is None:
        return 0.0
    got, want = open_image(result), open_image(expected)
    if got.size != want.size:
        got = got.resize(want.size, Image.Resampling.LANCZOS)
    one, two = np.array(_rgb(got)), np.array(_rgb(want))
    side = min(one.shape[0], one.shape[1])
    window = SSIM_WINDOW if side >= SSIM_WINDOW else side if side % 2 else side - 1
    if window < 1:
        return 0.0
    try:
        similarity = ssim(one, two, win_size=window, channel_axis=2)
    except (ValueError, ZeroDivisionError):  # a 1-pixel window has no sample variance
        return 0.0
    return float(similarity >= ssim_threshold)


@metric("check_file_exists_and_structure_sim")
@_zero_on_failure
def check_file_exists_and_structure_sim(result: Any, expected: Any) -> float:
    """The exported file exists and its picture is the expected one (SSIM ≥ 0.9)."""
    if result is None or expected is None or not os.path.isfile(result):
        return 0.0
    return float(structure_same(open_image(result), open_image(expected)))


@metric("check_structure_sim_resized")
@_zero_on_failure
def check_structure_sim_resized(result: Any, expected: Any) -> float:
    """The result, cropped to its opaque part when it has transparency and resized (Pillow's
    default filter) to the expected size, is the expected picture (SSIM ≥ 0.9); an entirely
    transparent result scores 0."""
    if result is None or expected is None:
        return 0.0
    got, want = open_image(result), open_image(expected)
    if got.mode in ("RGBA", "LA") or "transparency" in got.info:
        got = got.convert("RGBA") if got.mode != "RGBA" else got
        box = got.getchannel("A").getbbox()
        if box is None:
            return 0.0
        got = got.crop(box).convert("RGB")
    return float(structure_same(got.resize(want.size), _rgb(want)))


@metric("check_image_mirror")
@_zero_on_failure
def check_image_mirror(result: Any, expected: Any) -> float:
    """The expected picture is the result flipped left to right (SSIM ≥ 0.99, since GIMP's flip
    need not be exact)."""
    if result is None or expected is None:
        return 0.0
    flipped = open_image(result).transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    return float(structure_same(flipped, open_image(expected), 0.99))


# -- an edit judged against the original ----------------------------------------------------
def _normalized(image: Image.Image, target: float = 128) -> Image.Image:
    """The picture with every channel scaled so that its mean grey would be ``target``, clipped
    to 0..255 and truncated to integers (a black picture raises ZeroDivisionError, scoring 0)."""
    factor = target / _brightness(image)
    return image.point(lambda value: min(255, max(0, int(value * factor))))


def _mse_close(one: Image.Image, two: Image.Image, threshold: float) -> bool:
    """The mean squared difference of the RGB pixels (in 0..1, float32) is under ``threshold``,
    the first picture resized (Lanczos) to the second's size when they differ."""
    if one.size != two.size:
        one = one.resize(two.size, Image.Resampling.LANCZOS)
    first = np.array(_rgb(one), dtype=np.float32) / 255
    second = np.array(_rgb(two), dtype=np.float32) / 255
    return bool(np.mean((first - second) ** 2) < threshold)


@metric("check_brightness_decrease_and_structure_sim", options=("threshold",))
@_zero_on_failure
def check_brightness_decrease_and_structure_sim(result: Any, expected: Any, threshold: float = 0.03) -> float:
    """``result`` is darker than ``expected`` (mean grey), and once both are brought to the same
    mean grey their pixels differ by a mean squared error under ``threshold``."""
    if result is None or expected is None:
        return 0.0
    got, want = open_image(result), open_image(expected)
    darker = _brightness(want) > _brightness(got)
    return float(_mse_close(_normalized(got), _normalized(want), threshold) and darker)


def _mean_saturation(hsv: Image.Image) -> float:
    return float(np.mean(np.array(hsv.getchannel("S"))))


@metric("check_saturation_increase_and_structure_sim")
@_zero_on_failure
def check_saturation_increase_and_structure_sim(result: Any, expected: Any) -> float:
    """``result`` is more saturated than ``expected`` (mean HSV saturation) and their hue and
    value channels are alike (SSIM ≥ 0.9 each). Pillow converts only RGB pictures to HSV, so a
    picture with an alpha channel scores 0, as in the reference."""
    if result is None or expected is None:
        return 0.0
    got, want = open_image(result).convert("HSV"), open_image(expected).convert("HSV")
    more = _mean_saturation(want) < _mean_saturation(got)
    alike = all(structure_same(got.getchannel(band), want.getchannel(band)) for band in "HV")
    return float(more and alike)


def _contrast(image: Image.Image) -> float:
    """The standard deviation of every sample of the picture as stored (all its bands, an alpha
    channel included; a palette picture's indices), in float32."""
    return float(np.std(np.asarray(image, dtype=np.float32)))


@metric("check_contrast_increase_and_structure_sim")
@_zero_on_failure
def check_contrast_increase_and_structure_sim(result: Any, expected: Any) -> float:
    """``result`` has more contrast than ``expected`` and they are alike (SSIM ≥ 0.65)."""
    if result is None or expected is None:
        return 0.0
    got, want = open_image(result), open_image(expected)
    return float(_contrast(want) < _contrast(got) and structure_same(got, want, 0.65))


@metric("check_palette_and_structure_sim")
@_zero_on_failure
def check_palette_and_structure_sim(result: Any, expected: Any) -> float:
    """``result`` is stored with a colour palette (mode P) and is the expected picture (SSIM ≥
    0.9); an empty or unreadable file scores 0."""
    if result is None or expected is None:
        return 0.0
    got, want = open_image(result), open_image(expected)
    return float(got.mode == "P" and structure_same(got.convert("RGB"), want))


# -- where things are in one picture --------------------------------------------------------
def _packed(pixels: np.ndarray) -> np.ndarray:
    """Each pixel's samples as one integer, first sample most significant, so that sorting the
    integers sorts the colours as numpy's row-wise ``unique`` does."""
    packed = np.zeros(pixels.shape[:2], dtype=np.uint64)
    for band in range(pixels.shape[2]):
        packed = (packed << np.uint64(8)) | pixels[..., band].astype(np.uint64)
    return packed


@metric("check_triangle_position")
@_zero_on_failure
def check_triangle_position(result: Any, expected: Any = None) -> float:
    """The triangle's centroid is within 5% of each side from the picture's centre. The reference
    takes the triangle's colour to be the *second rarest* colour (it sorts the colours by count
    ascending and takes the second), not the second commonest its comment means; so on a
    two-colour picture it measures the background. That is reproduced; colours equally common
    are ordered as numpy's default sort orders them, as in the reference. A picture with one
    band or one colour scores 0 (the reference raises)."""
    if result is None:
        return 0.0
    pixels = np.array(open_image(result))
    if pixels.ndim != 3 or pixels.dtype != np.uint8 or pixels.shape[2] > 8:
        return 0.0
    packed = _packed(pixels)
    colours, counts = np.unique(packed, return_counts=True)
    if len(colours) < 2:
        return 0.0
    rows, columns = np.nonzero(packed == colours[np.argsort(counts)][1])
    centroid = np.array([rows.mean(), columns.mean()])
    shape = np.array(pixels.shape[:2])
    return float(np.all(np.abs(centroid - shape / 2) < 0.05 * shape))


@metric("check_textbox_on_leftside")
@_zero_on_failure
def check_textbox_on_leftside(result: Any, expected: Any = None) -> float:
    """The leftmost dark pixel (grey under 128) lies within the left 5% of the picture."""
    if result is None:
        return 0.0
    grey = np.array(open_image(result).convert("L"))
    dark_columns = np.flatnonzero((grey < 128).any(axis=0))
    leftmost = int(dark_columns[0]) if dark_columns.size else grey.shape[1]
    return float(leftmost < grey.shape[1] * 0.05)


@metric("check_green_background")
@_zero_on_failure
def check_green_background(result: Any, expected: Any) -> float:
    """Wherever the expected picture is not black, the result is green (more green than red and
    than blue). The reference walks the pixels indexing its arrays [x, y] where numpy means
    [row, column]: a picture that is not square runs off its side and scores 0, which is
    reproduced; a square one is examined whole. A pixel of fewer than three samples counts as not
    black (its 1- or 2-tuple is never (0, 0, 0)), and a one-band picture scores 0."""
    if result is None or expected is None:
        return 0.0
    got, want = np.array(open_image(result)), np.array(open_image(expected))
    if want.ndim != 3 or want.shape[0] != want.shape[1]:
        return 0.0
    background = want[..., :3].any(axis=2) if want.shape[2] >= 3 else np.ones(want.shape[:2], dtype=bool)
    if not background.any():
        return 1.0
    rows, columns = np.nonzero(background)
    if got.ndim != 3 or got.shape[2] < 3 or rows.max() >= got.shape[0] or columns.max() >= got.shape[1]:
        return 0.0
    red, green, blue = (got[rows, columns, band] for band in range(3))
    return float(np.all((green > red) & (green > blue)))


# -- files -----------------------------------------------------------------------------------
def _rule(expected: Any) -> Mapping[str, Any]:
    if not isinstance(expected, Mapping):
        raise TypeError(f"the expected value must be a rule (a dict), got {str(expected)[:120]}")
    return expected


@metric("check_image_size")
@_zero_on_failure
def check_image_size(result: Any, expected: Any) -> float:
    """The picture is ``expected["width"]`` wide and ``expected["height"]`` high (each checked
    when given). With ``ignore_transparent`` it is the size of the opaque part of a picture with
    an alpha channel. The reference's test is ``ignore_transparent and mode in (RGBA, LA) or
    'transparency' in info``: a picture with a transparent colour (a palette PNG's) is measured by
    its opaque part even without ``ignore_transparent``. That is reproduced."""
    if result is None:
        return 0.0
    rule, image = _rule(expected), open_image(result)
    width, height = image.size
    if (rule.get("ignore_transparent", False) and image.mode in ("RGBA", "LA")) or "transparency" in image.info:
        box = image.convert("RGBA").getchannel("A").getbbox()
        width, height = (box[2] - box[0], box[3] - box[1]) if box else (0, 0)
    return float((rule.get("height") is None or height == rule["height"]) and
                 (rule.get("width") is None or width == rule["width"]))


@metric("check_image_file_size")
@_zero_on_failure
def check_image_file_size(result: Any, expected: Any) -> float:
    """The file is smaller than ``expected["max_size"]`` bytes."""
    if result is None:
        return 0.0
    return float(os.path.getsize(result) < _rule(expected)["max_size"])




# -- perceptual hashes -----------------------------------------------------------------------
PHASH_SIDE = 32      # the picture is shrunk to 32x32 grey (imagehash's phash: 8 bits x 4)
PHASH_BITS = 8       # the 8x8 lowest frequencies of its DCT make the hash
PHASH_DISTANCE = 5   # hashes at most 5 bits apart are the same picture (the reference's threshold)


def phash(image: Image.Image) -> np.ndarray:
    """The perceptual hash imagehash's ``phash`` computes: the grey picture shrunk to 32x32 with
    Lanczos, its 2-D DCT (type II, unnormalised), the 8x8 lowest frequencies above their median."""
    from scipy.fftpack import dct

    pixels = np.asarray(image.convert("L").resize((PHASH_SIDE, PHASH_SIDE), Image.Resampling.LANCZOS))
    low = dct(dct(pixels, axis=0), axis=1)[:PHASH_BITS, :PHASH_BITS]
    return (low > np.median(low)).flatten()


def hash_distance(one: np.ndarray, two: np.ndarray) -> int:
    return int(np.count_nonzero(one != two))


@metric("compare_pdf_images")
def compare_pdf_images(result: Any, expected: Any) -> float:
    """Two PDFs hold the same pictures: as many, and the n-th of one within
    :data:`PHASH_DISTANCE` bits of the n-th of the other by perceptual hash; the score is the
    share that are. Two PDFs without pictures match. A missing or unreadable PDF scores 0."""
    from vdesk.documents import read_pdf_images

    if not result or not expected:
        return 0.0
    try:
        ones, twos = (read_pdf_images(read_bytes(os.fspath(path))) for path in (result, expected))
    except DocumentError:
        return 0.0
    if len(ones) != len(twos):
        return 0.0
    if not ones:
        return 1.0
    same = sum(hash_distance(phash(a), phash(b)) <= PHASH_DISTANCE for a, b in zip(ones, twos))
    return same / len(ones)
