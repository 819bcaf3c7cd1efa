"""The input of a desktop: the one door for actions, what they changed, and the pointer.

``desktop.input.execute(batch)`` takes a reply's actions (BaseActions, their dicts, or their JSON)
and runs them: elements named by marks or queries are resolved (:mod:`vdesk.elements`), the
whole batch is validated and planned once (:mod:`vdesk.plan`, a pure planner of frozen events),
and the planner's chained bursts are sent in order — pointer and keys over the desktop's X
connection (:mod:`vdesk.xtest`, sub-millisecond), typing as exact Unicode through the command
channel (:mod:`vdesk.keymap`), long text pasted when asked. A cancel stops a batch between two
bursts, never inside one, or cuts a wait short. A batch that does not run to its end, however it
ends, leaves no key or button down (:meth:`vdesk.channel.Channel.input_batch`). Its receipt says
which regions of the screen changed, read from the frames the screen part holds
(:mod:`vdesk.screen`), at the cost of at most one round trip when the X server says something
was drawn (:mod:`vdesk.damage`) and none when it says nothing was.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import nullcontext
from typing import TYPE_CHECKING

from Xlib import display as xdisplay

from vdesk.actions import Batch, Cancel, ExecuteResult, Receipt, parse_batch
from vdesk.channel import Channel, InputBatch
from vdesk.clipboard import Clipboard
from vdesk.coords import ImageSpace, PhysicalPoint, image_pixel
from vdesk.elements import DesktopElements
from vdesk.errors import CommandFailed, DesktopTimeout, InvalidAction, InvalidArgument, VdeskError
from vdesk.guard import Guard
from vdesk.keymap import ScratchKeymap, XKeyboardMapping
from vdesk.plan import Input, Report, Sleep, Step, TypeText, chained, plan
from vdesk.screen import DesktopScreen, image_space
from vdesk.windows import Windows
from vdesk.xtest import XTest

if TYPE_CHECKING:
    from vdesk.frames import Frame, LiveFramebuffer

XDOTOOL_TIMEOUT = 30.0  # one xdotool invocation (typing, keys XTEST does not take)
TYPING_RATE = 100  # characters a second xdotool types at least: a long text's timeout grows with it
SETTLE_QUIET = 0.03  # seconds the screen must hold still after a batch run with settle=True
SETTLE_TIMEOUT = 1.0  # seconds settle=True waits at most: a screen still changing then is taken as it is
MAX_RECEIPT_WAIT = 3600.0
CANCEL_POLL = 0.05  # seconds between two looks at a cancel during a wait


class DesktopInput:
    """Actions on one desktop: execute a batch, read its receipt, ask where the pointer is."""

    def __init__(self, channel: Channel, windows: Windows, clipboard: Clipboard, screen: DesktopScreen,
                 elements: DesktopElements, guard: Guard) -> None:
        self._channel = channel
        self._windows = windows
        self._clipboard = clipboard
        self._screen = screen
        self._elements = elements
        self._guard = guard
        self.keymap = ScratchKeymap(XKeyboardMapping(windows.connection))
        self._xtest = XTest(windows.connection, self._xdotool)
        self._before: Frame | None = None  # the frame before the last batch, for receipt()
        self._still: tuple[LiveFramebuffer | None, Frame] | None = None  # (its connection, the frame)

    def execute(self, actions: Batch, *, image: ImageSpace | None = None, settle: bool = False,
                receipt: bool = True, cancel: Cancel | None = None) -> ExecuteResult:
        """The one door for actions: validate the whole batch once (names, inputs, keys, every
        point against the screen), then run it in order as the planner chains it (pointer and
        keys over X, :mod:`vdesk.xtest`; typing through the channel), so a reply's actions go
        in one call and adjacent ones join into one burst.

        ``actions`` are BaseActions or their dicts, or the JSON of such a list; ``raw`` points
        are pixels of ``image`` (default: a screenshot at the logical size), and so are the
        receipt's regions. A malformed action fails the whole batch before anything runs. What
        goes wrong with the batch comes back as ``status="failed"``, never raised (a bad
        ``image`` is an :class:`InvalidArgument`). ``cancel``, once set, stops the batch between
        two chained bursts, or cuts a ``wait`` or a ``hold_key``'s hold short (``executed`` says
        how many actions completed; the result is failed). ``completed_ms`` says when each
        action that ran had completed.

        A batch that does not run to its end (an error, a cancel, a lost connection, Ctrl-C,
        its controller killed) lets go of every key and button held in the desktop before it
        returns; one that completes leaves held what it pressed on purpose (``press``,
        ``mouse_down``) for a later batch to release.

        With ``settle=True`` it returns once the screen held still for ``SETTLE_QUIET`` after
        the last action, or after ``SETTLE_TIMEOUT`` (and a round trip) on a screen that never
        does: ``result.settled`` says which (a video, a spinner or a printing terminal never
        settle; the batch still succeeds).

        With ``receipt=True`` (the default) ``result.receipt`` says which regions of the screen
        differ between a fresh frame before the first action and a frame after the last (see
        :class:`~vdesk.actions.Receipt`). Without ``settle`` that is a fresh frame as soon as
        the X server has processed the batch, no waiting: where the X server says nothing was
        drawn, the frame last taken (one X round trip, :mod:`vdesk.damage`), else a round trip
        on the held VNC connection and a comparison, so a program still answering shows
        as ``outcome="unknown"`` and :meth:`receipt` reads the change later. With ``settle`` it
        is the settled frame, and "nothing changed" is ``unchanged``. With ``settle``, a batch
        that typed, where the accessibility tree is readable (the apps image), also reads the
        focused element's text (0.1-1.5 s with big programs open) before its frame is taken. Not
        by default: besides its cost, reading the tree of VLC's Qt dialog while it takes typed text
        ends VLC (its accessibility bridge crashes: seen 2 of 2, never with receipt=False).
        """
        started = time.perf_counter()
        image = image_space(image) if image is not None else None
        try:
            batch = self._elements.resolve(parse_batch(actions))
            planned = plan(batch, self._screen.geometry, image)
        except (InvalidAction, CommandFailed, DesktopTimeout) as error:  # nothing ran (the tree could not be read)
            return ExecuteResult(status="failed", error_message=str(error))
        result = ExecuteResult()
        sends = any(not isinstance(step, Report) for step in planned.steps)
        try:
            before = self._frame_now() if receipt and sends else None
            if sends:
                self._before = before  # a batch without a receipt leaves nothing to read later
            bursts = list(chained(planned.steps))
            # How many actions have completed once each burst ran: those before the next burst's
            # first action; after the last, all of them (a screenshot sends nothing).
            done = [after.action for after in bursts[1:]] + [len(batch)]
            with self._channel.input_batch() if sends else nullcontext(InputBatch()) as holding:
                for number, step in enumerate(self._run(bursts, cancel)):
                    _completed(result, done[number], started)
                    if isinstance(step, Report) and step.kind == "finished":
                        result.finished, result.finished_content = True, step.content
                    elif isinstance(step, Report):
                        result.call_user = step.content or ""
                    if number + 1 == len(bursts):
                        holding.sent()
            if not bursts:
                _completed(result, len(batch), started)
            if result.executed < len(batch):
                result.status = "failed"
                result.error_message = f"cancelled after {result.executed} of {len(batch)} actions"
            typed = [step.text for step in planned.steps if isinstance(step, TypeText)]
            into_focus = (self._elements.typed_into_focus(typed[-1]) if settle and before is not None and typed
                          else (None, None))
            if settle:
                after, result.settled = self._screen.with_frames(lambda frames: frames.settle(SETTLE_QUIET,
                                                                                              SETTLE_TIMEOUT))
            elif before is not None:
                after = self._frame_now()
            if before is not None:
                result.receipt = self._receipt(before, after, result.settled)
                result.receipt.typed, result.receipt.focused = into_focus
                if image is not None:
                    result.receipt = result.receipt.in_image(self._screen.geometry, image)
        except VdeskError as error:
            result.status, result.error_message = "failed", str(error)
        result.elapsed_ms = (time.perf_counter() - started) * 1000
        return result

    def receipt(self, *, wait: float = 0.0, image: ImageSpace | None = None) -> Receipt:
        """The last batch's receipt read now: its frame from before the batch against a fresh
        frame (one round trip), for a program that answers after :meth:`execute` returned.

        With ``wait`` (seconds) it waits that long at most for the screen to differ from before
        the batch, and returns at the first difference. It never waits for the screen to calm
        (``settled`` is None: ``changed`` or ``unknown``; ``typed`` is not read again). What
        changed since the batch for any reason counts. Raises :class:`InvalidArgument` when the
        last batch that sent something took no receipt (``receipt=False``) or there was none.
        ``image``: the regions in pixels of that image, as :meth:`execute` gives them.
        """
        if not (isinstance(wait, (int, float)) and not isinstance(wait, bool) and 0 <= wait <= MAX_RECEIPT_WAIT):
            raise InvalidArgument(f"wait must be between 0 and {MAX_RECEIPT_WAIT:g} seconds, got {wait!r}")
        before = self._before
        if before is None:
            raise InvalidArgument("no receipt to read: the last batch ran with receipt=False, or none ran yet")
        after = self._screen.with_frames(lambda frames: _first_difference(frames, before, wait))
        found = self._receipt(before, after, None)
        return found.in_image(self._screen.geometry, image_space(image)) if image is not None else found

    def pointer(self, image: ImageSpace | None = None) -> tuple[int, int]:
        """Where the pointer is, as the pixel of ``image`` (default: a screenshot at the logical
        size) its hotspot falls in: one X round trip."""
        def ask(display: xdisplay.Display) -> PhysicalPoint:
            reply = display.screen().root.query_pointer()
            return PhysicalPoint(int(reply.root_x), int(reply.root_y))

        point = self._guard(lambda: self._windows.request(ask))
        return image_pixel(point, image_space(image) if image is not None else self._screen.image(),
                           self._screen.geometry)

    # -- the batch ----------------------------------------------------------------------------
    def _run(self, bursts: list[Step], cancel: Cancel | None = None) -> Iterator[Step]:
        for number, burst in enumerate(bursts):
            if cancel is not None and number and cancel.is_set():
                return  # between two bursts: nothing is left half sent
            if isinstance(burst, Input):
                self._guard(lambda: self._xtest.send(burst.events))
            elif isinstance(burst, TypeText) and burst.paste:
                self._clipboard.paste(burst.text)
            elif isinstance(burst, TypeText):
                self._guard(lambda: self._type(burst.text))
            elif isinstance(burst, Sleep) and not _wait(burst.seconds, cancel):
                return  # cancelled during the wait: it did not complete
            yield burst

    def _xdotool(self, args: tuple[str, ...]) -> None:
        self._channel.run(["xdotool", *args], timeout=XDOTOOL_TIMEOUT).check()

    def _type(self, text: str) -> None:
        # The text travels on stdin: a leading '-', quotes and shell characters are just text.
        for piece in self.keymap.segments(text):
            argv = ["xdotool", "type", "--delay", "0", "--clearmodifiers", "--file", "-"]
            self._channel.run(argv, stdin=piece, timeout=XDOTOOL_TIMEOUT + len(piece) / TYPING_RATE).check()

    # -- receipts -----------------------------------------------------------------------------
    def _frame_now(self) -> Frame:
        """The screen now, before or after a batch: the last receipt's frame when the X server
        says nothing was drawn since the question before (one X round trip, see
        :mod:`vdesk.damage`), else a fresh one. Before a batch too the server is asked, not only
        the notices the connection holds: drawing a command finished just before (its requests
        processed, its notice still on the way through the tunnel) would otherwise be blamed on
        the batch, as a whole run beside two CPU hogs saw."""
        still = self._still
        if not self._guard(self._windows.drawn) and still is not None and still[0] is self._screen.held:
            return still[1]
        return self._fresh_still()

    def _fresh_still(self) -> Frame:
        frame = self._screen.with_frames(lambda frames: frames.fresh())
        self._still = (self._screen.held, frame)  # versions count per VNC connection
        return frame

    def _receipt(self, before: Frame, after: Frame, settled: bool | None) -> Receipt:
        from vdesk.frames import changed_regions  # loaded already: the frames came through it

        # No update painted anything since `before`: nothing to compare.
        found = changed_regions(before.image, after.image) if after.version != before.version else []
        regions = [region.logical(self._screen.scale).pixels() for region in found]
        return Receipt(changed=bool(regions), regions=regions, settled=settled)


def _completed(result: ExecuteResult, actions: int, started: float) -> None:
    """The batch's first ``actions`` actions have completed by now."""
    now = round((time.perf_counter() - started) * 1000, 3)
    result.completed_ms += [now] * (actions - len(result.completed_ms))
    result.executed = actions


def _wait(seconds: float, cancel: Cancel | None) -> bool:
    """Wait ``seconds``, or less when ``cancel`` is set meanwhile: then False."""
    if cancel is None:
        time.sleep(seconds)
        return True
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if cancel.is_set():
            return False
        time.sleep(min(left, CANCEL_POLL))
    return True


def _first_difference(frames: LiveFramebuffer, before: Frame, wait: float) -> Frame:
    """A fresh frame; with ``wait``, the first one within that many seconds whose pixels
    differ from ``before`` (else the last one seen). A new version alone does not say: an
    update may repaint a pixel with its own value."""
    from vdesk.frames import image_differs  # loaded already: the frames came through it

    pixels_differ = image_differs(before.image, None)  # before's pixels read once, not per frame

    def differs(frame: Frame) -> bool:
        return frame.version != before.version and pixels_differ(frame.image)

    frame = frames.fresh()
    if wait <= 0 or differs(frame):
        return frame
    deadline = time.monotonic() + wait
    with frames.watching():
        frame = frames.fresh()  # a change between the first look and the watch started
        while not differs(frame) and (remaining := deadline - time.monotonic()) > 0:
            frame = frames.next_change(frame.version, remaining) or frame
    return frame
