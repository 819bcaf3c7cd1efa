"""Frames: the right size, the real screen, and waits that watch it instead of sleeping."""

from __future__ import annotations

import base64
import io
import time

import pytest
from PIL import Image

from tests.desktop.helpers import close_window, xterm
from tests.desktop.probe import EventProbe, buttons
from vdesk.coords import ImageSpace
from vdesk.desktop import Desktop
from vdesk.errors import DesktopTimeout, InvalidArgument
from vdesk.frames import LiveFramebuffer
from vdesk.integrations.operator import Operator

WHITE = (255, 255, 255)


def test_a_screenshot_has_the_screen_size_and_shows_the_probe_window(shared_desktop, probe):
    frame = shared_desktop.screen.shot()
    assert frame.size == (1280, 800) and frame.mode == "RGB"
    assert {frame.getpixel((x, y)) for x in (0, 640, 1279) for y in (0, 400, 799)} == {WHITE}


def test_a_screenshot_can_be_resized_for_a_model(shared_desktop, probe):
    assert shared_desktop.screen.shot((1024, 640)).size == (1024, 640)


def test_unchanged_and_fresh_frames_agree_on_a_static_screen(shared_desktop, probe):
    assert shared_desktop.screen.shot(fresh=True).tobytes() == shared_desktop.screen.shot(fresh=False).tobytes()


@pytest.mark.parametrize(("format", "magic"), [("png", b"\x89PNG"), ("jpeg", b"\xff\xd8")])
def test_screenshot_output_for_agents_is_base64_of_the_format(shared_desktop, format, magic):
    output = Operator(shared_desktop).screenshot(format=format)
    data = base64.b64decode(output.base64)
    assert output.status == "success" and output.content_type == f"image/{format}" and data.startswith(magic)
    assert Image.open(io.BytesIO(data)).size == (1280, 800)


def test_screenshot_output_never_raises_it_reports_failure():
    desktop = Desktop.up(size=(640, 480))
    operator = Operator(desktop)
    assert operator.screenshot().status == "success"
    desktop.down()  # the container is gone under the operator, as when a desktop dies
    output = operator.screenshot()
    assert output.status == "failed" and output.base64 == ""
    assert output.error_message == f"DesktopGone: desktop {desktop.name} is closed"


def test_settle_after_an_animation_returns_once_it_stops(shared_desktop):
    script = "for i in $(seq 1 25); do echo line $i; sleep 0.04; done; sleep 30"
    with xterm(shared_desktop, "animation", "-e", "sh", "-c", script):
        started = time.monotonic()
        shared_desktop.screen.settle(quiet=0.3, timeout=10)
        animating_for = time.monotonic() - started
        assert animating_for >= 0.5  # it waited for the lines to stop, not a fixed sleep
        assert shared_desktop.screen.shot().tobytes() == shared_desktop.screen.shot().tobytes()


def test_settle_on_a_screen_that_never_stops_raises_with_what_it_saw(shared_desktop):
    with xterm(shared_desktop, "ticker-never-settles", "-e", "sh", "-c", "while :; do date +%N; sleep 0.02; done"):
        with pytest.raises(DesktopTimeout, match="kept changing for 1 s"):
            shared_desktop.screen.settle(quiet=0.5, timeout=1, strict=True)
        # Not strict: the screen as it is once the time is up (a video is no error).
        assert shared_desktop.screen.settle(quiet=0.5, timeout=1).size == shared_desktop.screen.size


def test_wait_for_change_sees_a_new_window_and_times_out_on_a_quiet_region(shared_desktop):
    with pytest.raises(DesktopTimeout, match="nothing changed in region"):
        shared_desktop.screen.wait_for_change(region=(1200, 0, 1280, 30), timeout=0.3)
    where = (600, 300, 840, 430)  # where the newcomer's window goes
    before_screen = shared_desktop.screen.shot()
    before = before_screen.crop(where)
    shared_desktop.programs.run(["xterm", "-title", "newcomer", "-geometry", "40x10+600+300"])
    try:
        # Against the shot from before: a window drawn before the wait began is seen too.
        frame = shared_desktop.screen.wait_for_change(region=where, timeout=10, since=before_screen)
        assert frame.size == (1280, 800)
        assert frame.crop(where).tobytes() != before.tobytes(), "the frame does not show the new window"
        # The window is there before this wait begins: against `since` it returns at once.
        assert shared_desktop.screen.wait_for_change(region=where, timeout=0.3, since=before_screen).crop(
            where).tobytes() != before.tobytes()
        with pytest.raises(InvalidArgument, match="since is 640x400, the screen 1280x800"):
            shared_desktop.screen.wait_for_change(since=before_screen.resize((640, 400)))
    finally:
        close_window(shared_desktop, "newcomer")


def test_hidpi_desktop_has_a_scaled_framebuffer_and_logical_screenshots():
    with Desktop.up(size=(640, 400), scale=2) as desktop, EventProbe(desktop) as probe:
        assert probe.display.screen().width_in_pixels == 1280
        assert desktop.screen.shot().size == (640, 400)
        assert Operator(desktop).screen_context().model_dump() == {
            "screen_width": 640, "screen_height": 400, "scale_x": 2.0, "scale_y": 2.0}
        desktop.input.execute([{"type": "click", "inputs": {"point": {"normalized": {"x": 0.5, "y": 0.5}}}},
                         {"type": "click", "inputs": {"point": {"raw": {"x": 10, "y": 20}}}}])
        assert buttons(probe.events())[::2] == [("button_press", 1, 640, 400), ("button_press", 1, 21, 41)]


def test_model_sized_screenshots_map_clicks_back_to_the_right_pixel(shared_desktop, probe):
    operator = Operator(shared_desktop, image=ImageSpace(1024, 640))
    shot = operator.screenshot()
    assert (shot.width, shot.height) == (1024, 640)
    operator.execute({"actions": [{"type": "click", "inputs": {"point": {"raw": {"x": 512, "y": 320}}}}]})
    assert buttons(probe.events())[0] == ("button_press", 1, 640, 400)


# -- frames on demand: a busy screen costs nothing until someone looks --------------------------
# Scrolls a screenful of text about 50 times a second.
TICKER = "while :; do date +%N; ls /usr/bin | head -30; sleep 0.02; done"
BACKGROUND = (5, 20)  # a root-window pixel the ticker's window never covers (physical = logical)


@pytest.fixture(scope="module")
def busy_desktop():
    """A desktop whose terminal scrolls at about 50 Hz, in the lower right corner."""
    with Desktop.up(size=(1280, 800)) as desktop:
        with xterm(desktop, "busy-ticker", "-geometry", "100x40-0-0", "-e", "sh", "-c", TICKER):
            desktop.screen.wait_for_change(timeout=10)  # it is ticking
            yield desktop


def test_a_busy_desktop_pulls_no_frames_while_nobody_looks(busy_desktop):
    busy_desktop.screen.shot()
    # The screen really is busy: a settle wait (which pulls every change) never sees it calm (on
    # a loaded machine its last request for a frame may be the one the deadline ends).
    with pytest.raises(DesktopTimeout, match="kept changing|no fresh frame"):
        busy_desktop.screen.settle(quiet=0.3, timeout=1, strict=True)
    before = busy_desktop.screen.frames.latest().version
    cpu, wall = time.process_time(), time.monotonic()
    time.sleep(3)  # the ticker paints about 150 times meanwhile
    share = (time.process_time() - cpu) / (time.monotonic() - wall)
    pulled = busy_desktop.screen.frames.latest().version - before
    # Nothing is pulled while nobody looks: at most the answers to the requests outstanding as
    # the quiet began (a fresh frame's, a wait's). What that costs is the bench's figure
    # (busy_idle_cpu); a share of a core measured here would be the machine's load as much.
    print(f"while nobody looked: {pulled} updates, {share:.1%} of a core")
    assert pulled <= 2, f"{pulled} updates were pulled while nobody looked"
    assert busy_desktop.screen.shot(fresh=True) and busy_desktop.screen.frames.latest().version > before + pulled  # still busy


def test_a_fresh_screenshot_of_a_busy_screen_shows_a_change_made_just_before(busy_desktop):
    for colour in ((200, 30, 30), (30, 200, 30), (30, 30, 200)):
        busy_desktop.programs.run(["xsetroot", "-solid", "#%02x%02x%02x" % colour], wait=True).check()
        # Nobody looked since the change, so nothing was pulled: the last frame is older.
        assert busy_desktop.screen.shot(fresh=False).getpixel(BACKGROUND) != colour
        # One fresh frame; on a loaded machine the VNC server's frame clock (it moves what X drew
        # into its clients' updates about 60 times a second) may tick late, and the change then
        # comes with the next one.
        fresh = [busy_desktop.screen.shot().getpixel(BACKGROUND) for _ in range(2)]
        assert colour in fresh, fresh
        assert busy_desktop.screen.shot(fresh=False).getpixel(BACKGROUND) == colour  # and it is kept


def test_a_process_forked_after_frames_ran_gets_a_clear_error_not_a_hang(shared_desktop):
    import os

    from vdesk.errors import ForkedProcess
    from vdesk.frames import LiveFramebuffer

    shared_desktop.screen.shot(fresh=True)  # this process's frame connection runs
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: its inherited event loop has no thread; connecting must say so at once
        try:
            LiveFramebuffer("127.0.0.1:1", "secret", "forked").connect(timeout=30)
            answer = "connected"
        except ForkedProcess as error:
            answer = "ForkedProcess: spawn" if "'spawn'" in str(error) else f"ForkedProcess: {error}"
        except BaseException as error:  # noqa: BLE001 - anything else is the failure this test names
            answer = f"{type(error).__name__}: {error}"
        os.write(write, answer.encode())
        os._exit(0)
    os.close(write)
    started = time.monotonic()
    _, status = os.waitpid(child, 0)
    answer = os.read(read, 1000).decode()
    os.close(read)
    assert answer == "ForkedProcess: spawn" and status == 0, answer
    assert time.monotonic() - started < 25, "the child waited for a connection that could never come"


def test_a_desktop_without_a_network_gives_viewers_a_private_socket_that_shows_its_screen(shared_desktop):
    """The held frames read their relay in the event loop; a viewer gets a tunnel of its own."""
    address = shared_desktop.vnc.address
    assert address.startswith("/") and address == shared_desktop.vnc.address  # one tunnel, kept
    viewer = LiveFramebuffer(address, shared_desktop.vnc.password, "viewer")
    try:
        viewer.connect(timeout=20)
        shared_desktop.screen.frames.wait_until_settled()
        assert viewer.fresh().image.tobytes() == shared_desktop.screen.frames.fresh().image.tobytes()
    finally:
        viewer.close()
