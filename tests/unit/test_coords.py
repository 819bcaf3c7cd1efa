"""The one coordinate model: image pixel → logical screen → physical framebuffer pixel."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vdesk.actions import Coordinates
from vdesk.coords import (ImageSpace, PhysicalPoint, Screen, anthropic_target, fit_max_pixels,
                          from_image, from_normalized, smart_resize, to_image)
from vdesk.errors import InvalidAction

SCALES = [1, 1.25, 1.5, 2, 3]
screens = st.builds(Screen, st.integers(64, 3840), st.integers(64, 2160), st.sampled_from(SCALES))


@st.composite
def images_seen_on(draw: st.DrawFn, screen: Screen, no_larger_than_physical: bool = False) -> ImageSpace:
    """An image size an agent may have been shown for ``screen``: the logical size, one resized
    for a model, or an arbitrary one (smaller or larger than the screen)."""
    pw, ph = screen.physical_size
    if no_larger_than_physical:
        arbitrary = st.builds(ImageSpace, st.integers(1, pw), st.integers(1, ph))
    else:
        arbitrary = st.builds(ImageSpace, st.integers(1, 8000), st.integers(1, 8000))
    image = draw(st.one_of(
        st.just(screen.image()),
        st.integers(4096, 4_000_000).map(lambda budget: fit_max_pixels(screen, budget)),
        st.just(anthropic_target(screen)),
        st.just(smart_resize(screen.width, screen.height)),
        arbitrary,
    ))
    if no_larger_than_physical:
        image = ImageSpace(min(image.width, pw), min(image.height, ph))
    return image


def physical_centre(index: int, image_extent: int, physical_extent: int) -> Fraction:
    """Where the centre of image pixel ``index`` lies in physical space, exactly."""
    return Fraction(2 * index + 1, 2) * physical_extent / image_extent


# --- round trip ----------------------------------------------------------------------------


@given(data=st.data())
def test_an_image_pixel_maps_to_the_physical_pixel_under_its_centre(data: st.DataObject) -> None:
    screen = data.draw(screens)
    image = data.draw(images_seen_on(screen))
    i = data.draw(st.integers(0, image.width - 1))
    j = data.draw(st.integers(0, image.height - 1))
    pw, ph = screen.physical_size

    p = from_image(i, j, image, screen)

    assert 0 <= p.x < pw and 0 <= p.y < ph
    assert p.x <= physical_centre(i, image.width, pw) < p.x + 1
    assert p.y <= physical_centre(j, image.height, ph) < p.y + 1


@given(data=st.data())
def test_mapping_back_lands_in_the_same_image_pixel_when_the_image_is_no_larger(data: st.DataObject) -> None:
    screen = data.draw(screens)
    image = data.draw(images_seen_on(screen, no_larger_than_physical=True))
    i = data.draw(st.integers(0, image.width - 1))
    j = data.draw(st.integers(0, image.height - 1))

    x, y = to_image(from_image(i, j, image, screen), image, screen)

    assert (math.floor(x), math.floor(y)) == (i, j)


@given(data=st.data())
def test_a_fractional_raw_coordinate_names_the_pixel_it_falls_in(data: st.DataObject) -> None:
    screen = data.draw(screens)
    image = data.draw(images_seen_on(screen))
    i = data.draw(st.integers(0, image.width - 1))
    j = data.draw(st.integers(0, image.height - 1))
    dx, dy = data.draw(st.floats(0, 0.99)), data.draw(st.floats(0, 0.99))

    assert from_image(i + dx, j + dy, image, screen) == from_image(i, j, image, screen)


# --- normalized coordinates ----------------------------------------------------------------


@given(screen=screens)
def test_normalized_half_is_the_centre_pixel_at_every_scale(screen: Screen) -> None:
    pw, ph = screen.physical_size
    assert from_normalized(0.5, 0.5, screen) == PhysicalPoint(math.floor(0.5 * pw), math.floor(0.5 * ph))


@given(screen=screens)
def test_normalized_one_is_the_last_pixel_and_zero_the_first(screen: Screen) -> None:
    pw, ph = screen.physical_size
    assert from_normalized(1.0, 1.0, screen) == PhysicalPoint(pw - 1, ph - 1)
    assert from_normalized(0, 0, screen) == PhysicalPoint(0, 0)


@pytest.mark.parametrize("scale", SCALES)
def test_zero_coordinates_are_honoured_not_skipped_as_falsy(scale: float) -> None:
    screen = Screen(1280, 800, scale)
    far = {"x": 600, "y": 400}
    # normalized 0 still wins over raw; raw 0 still wins over the referenceBox centre.
    assert Coordinates.model_validate({"normalized": {"x": 0, "y": 0}, "raw": far}).resolve(screen) == PhysicalPoint(0, 0)
    box = {"x1": 500, "y1": 300, "x2": 700, "y2": 500}
    top_left = from_image(0, 0, screen.image(), screen)  # physical pixel under logical (0, 0)'s centre
    assert top_left.x < scale and top_left.y < scale
    assert Coordinates.model_validate({"raw": {"x": 0, "y": 0}, "referenceBox": box}).resolve(screen) == top_left
    assert Coordinates.model_validate({"raw": {"x": 0, "y": 399}}).resolve(screen).x == top_left.x
    assert Coordinates.model_validate({"normalized": {"x": 0.5, "y": 0}}).resolve(screen).y == 0


# --- out-of-range points --------------------------------------------------------------------


@pytest.mark.parametrize("x, y, shown", [(-1, 5, "(-1, 5)"), (1024, 5, "(1024, 5)"),
                                         (5, 768, "(5, 768)"), (2.5, -0.5, "(2.5, -0.5)"),
                                         (float("nan"), 5, "(nan, 5)")])
def test_a_point_outside_the_image_is_an_error_naming_it_and_the_size(x: float, y: float, shown: str) -> None:
    with pytest.raises(InvalidAction) as caught:
        from_image(x, y, ImageSpace(1024, 768), Screen(1280, 960))
    assert shown in str(caught.value) and "1024x768" in str(caught.value)


@pytest.mark.parametrize("x, y, shown", [(1.5, 0.5, "(1.5, 0.5)"), (0.5, -0.1, "(0.5, -0.1)"),
                                         (1.0001, 1, "(1.0001, 1)")])
def test_a_normalized_point_outside_0_to_1_is_an_error_naming_it(x: float, y: float, shown: str) -> None:
    with pytest.raises(InvalidAction) as caught:
        from_normalized(x, y, Screen(1280, 800))
    assert shown in str(caught.value) and "0..1" in str(caught.value)


# --- image sizes for models -----------------------------------------------------------------


@given(screen=screens, budget=st.integers(4096, 10_000_000))
def test_fit_max_pixels_stays_within_budget_and_keeps_the_aspect_ratio(screen: Screen, budget: int) -> None:
    image = fit_max_pixels(screen, budget)

    assert image.width * image.height <= budget
    assert image.width <= screen.width and image.height <= screen.height
    # The shorter side is within one pixel of what the longer side implies.
    if screen.width >= screen.height:
        assert abs(image.height - image.width * screen.height / screen.width) < 1
    else:
        assert abs(image.width - image.height * screen.width / screen.height) < 1
    # And it is (within a pixel) the largest such image: two more each way would break the budget.
    if image.size != screen.size:
        assert (image.width + 2) * (image.height + 2) > budget


@given(screen=screens)
def test_fit_max_pixels_never_enlarges(screen: Screen) -> None:
    assert fit_max_pixels(screen, screen.width * screen.height * 4).size == screen.size


def test_fit_max_pixels_never_exceeds_even_a_tiny_budget() -> None:
    try:
        image = fit_max_pixels(Screen(3840, 64), 10)
    except ValueError:
        return  # refusing is fine too
    assert image.width * image.height <= 10


@given(width=st.integers(64, 3840), height=st.integers(64, 2160),
       min_tokens=st.integers(4, 256), max_tokens=st.integers(1024, 16384))
def test_smart_resize_gives_multiples_of_28_within_the_pixel_bounds(
        width: int, height: int, min_tokens: int, max_tokens: int) -> None:
    min_pixels, max_pixels = min_tokens * 28 * 28, max_tokens * 28 * 28
    image = smart_resize(width, height, min_pixels=min_pixels, max_pixels=max_pixels)

    assert image.width % 28 == 0 and image.height % 28 == 0
    assert min_pixels <= image.width * image.height <= max_pixels


def test_smart_resize_of_full_hd_is_the_size_ui_tars_sees() -> None:
    assert smart_resize(1920, 1080).size == (1932, 1092)


@given(k=st.integers(257, 720))
def test_anthropic_target_of_a_larger_4_to_3_screen_is_xga(k: int) -> None:
    assert anthropic_target(Screen(4 * k, 3 * k)).size == (1024, 768)


@given(k=st.integers(81, 216))
def test_anthropic_target_of_a_larger_16_to_10_screen_is_wxga(k: int) -> None:
    assert anthropic_target(Screen(16 * k, 10 * k)).size == (1280, 800)


@pytest.mark.parametrize("size", [(1600, 900), (1920, 1080), (2560, 1440), (3840, 2160), (1400, 788)])
def test_anthropic_target_of_a_larger_16_to_9_screen_is_fwxga(size: tuple[int, int]) -> None:
    assert anthropic_target(Screen(*size)).size == (1366, 768)


@pytest.mark.parametrize("size", [(1024, 768), (800, 600), (1280, 800), (1366, 768), (1000, 1000)])
def test_anthropic_target_keeps_a_screen_no_larger_or_of_another_shape(size: tuple[int, int]) -> None:
    assert anthropic_target(Screen(*size)).size == size
