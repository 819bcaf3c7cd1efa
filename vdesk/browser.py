"""The browser of an apps desktop, read and driven over the Chrome DevTools Protocol.

    with Desktop.up(image="apps") as desktop:
        desktop.browser.open("http://127.0.0.1:8000/form.html")
        print(desktop.browser.title, desktop.browser.evaluate("document.forms.length"))

Chromium runs inside the desktop with its debugging port on the container's own loopback
(``127.0.0.1:9222``), never published: this process reaches it through a private tunnel
(:mod:`vdesk.tunnel`, an exec'd ``socat``), so it works with no network and on a remote engine.
The client is Playwright's ``connect_over_cdp``, which needs no browser of its own. Playwright
runs on an event loop in a thread this handle owns, so the handle may be used from any thread;
:meth:`Browser.close` (called when the desktop is closed) disconnects, stops Playwright and
that thread, and closes the tunnel. Chromium itself keeps running: it is a program of the desktop.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar
from urllib.parse import urlsplit, urlunsplit

from vdesk.errors import BrowserError, DesktopTimeout, InvalidArgument, VdeskError
from vdesk.tunnel import Tunnel

if TYPE_CHECKING:
    from vdesk.programs import DesktopPrograms
    from playwright.async_api import Browser as CdpBrowser, Page, Playwright

T = TypeVar("T")
DEBUG_PORT = 9222                # on the container's loopback only
START_TIMEOUT = 30.0
CALL_TIMEOUT = 30.0
PROBE_TIMEOUT = 2.0              # one look at the debugging port's /json/version
# A browser whose port answered near the caller's deadline still gets this long to accept the
# connection: Playwright's handshake takes seconds while a loaded machine starts Chromium.
ATTACH_MINIMUM = 10.0
FIRST_WINDOW_TIMEOUT = 15.0      # a starting browser's first window, before a tab is opened beside it
# Chromium's own sandbox cannot start under the desktop's seccomp profile and no-new-privileges:
# the container is the sandbox. The rest keeps a fresh profile quiet and the screen the same
# from run to run (no first-run page, no default-browser bar, no translation bubble).
CHROMIUM_FLAGS = (
    "--no-sandbox", "--test-type", "--no-first-run", "--no-default-browser-check",
    "--disable-default-apps", "--disable-sync", "--disable-background-networking",
    "--disable-component-update", "--disable-features=Translate,MediaRouter",
    "--password-store=basic", "--force-renderer-accessibility", "--start-maximized",
    f"--remote-debugging-port={DEBUG_PORT}", "--remote-debugging-address=127.0.0.1",
)


class BrowserHost(Protocol):
    """What the browser needs of its desktop (a :class:`vdesk.desktop.Desktop`)."""

    name: str
    id: str

    @property
    def client(self) -> Any: ...

    @property
    def programs(self) -> DesktopPrograms: ...


@dataclass(frozen=True)
class Tab:
    """One open tab: its address and title."""

    url: str
    title: str


@dataclass(frozen=True)
class Visit:
    """What :meth:`Browser.visit` read of a page: where it ended (after redirects), its title,
    its HTML as the browser holds it now, and its print as a PDF when one was asked for."""

    url: str
    title: str
    html: str
    pdf: bytes | None = None


def chromium_argv(url: str = "about:blank") -> list[str]:
    """The command that starts the desktop's Chromium with its debugging port on loopback."""
    return ["env", "ACCESSIBILITY_ENABLED=1", "chromium", *CHROMIUM_FLAGS, url]


class Browser:
    """The Chromium of one desktop. Get it as ``desktop.browser``; it starts Chromium when none
    listens on the debugging port yet, and connects. Every call has a timeout."""

    def __init__(self, desktop: BrowserHost, *, timeout: float = START_TIMEOUT) -> None:
        self._desktop = desktop
        self._lock = threading.Lock()
        self._closed = False
        self._tunnel = Tunnel(desktop.client.api, desktop.id, f"TCP:127.0.0.1:{DEBUG_PORT}", tcp_port=0)
        self._loop = _LoopThread(f"vdesk-browser-{desktop.name}")
        self._playwright: Playwright | None = None
        self._cdp: CdpBrowser | None = None
        try:
            self._connect(timeout)
        except BaseException:
            self.close()
            raise

    # -- what tasks need ----------------------------------------------------------------------
    def open(self, url: str, *, timeout: float = CALL_TIMEOUT) -> None:
        """Show ``url`` in the current tab and wait until it has loaded."""
        if not isinstance(url, str) or not url:
            raise InvalidArgument(f"a browser address must be a non-empty string, got {url!r}")
        self._call(lambda: self._goto(url, timeout), timeout)

    @property
    def url(self) -> str:
        """The address of the current tab."""
        return self._call(lambda: self._current_url(), CALL_TIMEOUT)

    @property
    def title(self) -> str:
        """The title of the current tab."""
        return self._call(lambda: self._current_title(), CALL_TIMEOUT)

    @property
    def tabs(self) -> list[Tab]:
        """Every open tab, in the order Chromium opened them."""
        return self._call(self._tabs, CALL_TIMEOUT)

    def new_tab(self, url: str, *, timeout: float = CALL_TIMEOUT) -> None:
        """Open ``url`` in a new tab and show it. An address that does not load (the desktop
        has no network) still leaves its tab, showing the browser's error page."""
        if not isinstance(url, str) or not url:
            raise InvalidArgument(f"a browser address must be a non-empty string, got {url!r}")
        self._call(lambda: self._new_tab(url, timeout), timeout + 5)

    def close_tabs(self, url: str) -> int:
        """Close every tab showing ``url`` (a trailing ``/`` aside); how many were closed."""
        return self._call(lambda: self._close_tabs(url), CALL_TIMEOUT)

    def evaluate(self, script: str, arg: Any = None, *, timeout: float = CALL_TIMEOUT) -> Any:
        """The value of a JavaScript expression (or function, called with ``arg``, a JSON value)
        in the current tab."""
        if not isinstance(script, str) or not script.strip():
            raise InvalidArgument("a script to evaluate must be a non-empty string")
        return self._call(lambda: self._evaluate(script, arg), timeout)

    def visit(self, url: str, *, pdf: bool = False, timeout: float = CALL_TIMEOUT) -> Visit:
        """Load ``url`` in a tab of its own, wait until it has loaded and its network has been
        quiet for a moment (at most ``timeout``), read it (and print it to PDF), close the tab.
        The tab shown before stays the current one. A page that never goes quiet is read as it is."""
        if not isinstance(url, str) or not url:
            raise InvalidArgument(f"a browser address must be a non-empty string, got {url!r}")
        return self._call(lambda: self._visit(url, pdf, timeout), timeout * 2 + 30)

    def text(self, selector: str, *, timeout: float = CALL_TIMEOUT) -> str | None:
        """The text of the first element matching a CSS selector in the current tab (None if none)."""
        if not isinstance(selector, str) or not selector.strip():
            raise InvalidArgument("a CSS selector must be a non-empty string")
        return self._call(lambda: self._text(selector), timeout)

    def wait_for_load(self, *, timeout: float = CALL_TIMEOUT) -> None:
        """Return once the current tab has loaded (its ``load`` event has fired)."""
        self._call(lambda: self._wait_for_load(timeout), timeout)

    def close(self) -> None:
        """Disconnect, stop Playwright and its thread, close the tunnel (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            if self._loop.running:
                self._loop.run(self._disconnect, timeout=10.0)
        except VdeskError:
            pass  # a hung driver must not keep the desktop from closing
        finally:
            self._loop.close()
            self._tunnel.close()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- connecting ---------------------------------------------------------------------------
    def _connect(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        endpoint = self._probe()
        if endpoint is None:
            if not self._starting():
                self._desktop.programs.run(chromium_argv())
            while (endpoint := self._probe()) is None:
                if time.monotonic() > deadline:
                    raise DesktopTimeout(f"desktop {self._desktop.name}: Chromium's debugging port did not "
                                         f"answer within {timeout:g} s")
                time.sleep(0.1)
        remaining = max(ATTACH_MINIMUM, deadline - time.monotonic())
        self._loop.run(lambda: self._attach(endpoint, remaining), timeout=remaining + 5)

    def _starting(self) -> bool:
        """Whether a browser is already running in the desktop, its port not answering yet: one
        a task started (OSWorld's ``google-chrome`` on a port ``socat`` forwards), waited for
        rather than joined by a second browser — a second window, whose address bar the
        reference's getter may read first, and a second profile. One ``pgrep``."""
        try:
            found = self._desktop.programs.run(["pgrep", "-x", "chrome|chromium"], wait=True, timeout=10.0)
        except VdeskError:
            return False
        return getattr(found, "returncode", 1) == 0

    def _probe(self) -> str | None:
        """The browser's WebSocket address as this process reaches it, or None when nothing answers."""
        try:
            with urllib.request.urlopen(f"http://{self._tunnel.address}/json/version", timeout=PROBE_TIMEOUT) as answer:
                version = json.loads(answer.read(65536))
        except (OSError, urllib.error.URLError, ValueError):
            return None
        address = version.get("webSocketDebuggerUrl") if isinstance(version, dict) else None
        if not isinstance(address, str) or not address.startswith("ws://"):
            return None
        # Chromium names its own loopback port; this process reaches it through the tunnel.
        return urlunsplit(urlsplit(address)._replace(netloc=self._tunnel.address))

    async def _attach(self, endpoint: str, timeout: float) -> None:
        from playwright.async_api import Error as PlaywrightError, async_playwright

        self._playwright = await async_playwright().start()
        try:
            self._cdp = await self._playwright.chromium.connect_over_cdp(endpoint, timeout=timeout * 1000)
        except PlaywrightError as error:
            raise BrowserError(f"desktop {self._desktop.name}: connecting to Chromium failed: {_first_line(error)}") from None

    async def _disconnect(self) -> None:
        # For a browser reached over CDP, close() only disconnects: Chromium keeps running.
        if self._cdp is not None:
            await self._cdp.close()
        if self._playwright is not None:
            await self._playwright.stop()

    # -- on the loop --------------------------------------------------------------------------
    def _call(self, make: Callable[[], Awaitable[T]], timeout: float) -> T:
        if self._closed:
            raise BrowserError(f"the browser handle of desktop {self._desktop.name} is closed")
        from playwright.async_api import Error as PlaywrightError

        try:
            return self._loop.run(make, timeout=timeout + 1)
        except PlaywrightError as error:
            raise BrowserError(f"desktop {self._desktop.name}: {_first_line(error)}") from None

    def _pages(self) -> list[Page]:
        assert self._cdp is not None
        return [page for context in self._cdp.contexts for page in context.pages]

    async def _page(self) -> Page:
        """The tab shown in Chromium's window: the visible one (the last opened if several are)."""
        pages = self._pages()
        if not pages:
            raise BrowserError(f"desktop {self._desktop.name}: Chromium has no open tab")
        shown = await asyncio.get_running_loop().run_in_executor(None, self._last_activated)
        for page in reversed(pages):
            if shown is not None and await _address(page) == shown:
                return page
        visible = []
        for page in reversed(pages):
            try:
                state = await page.evaluate("[document.visibilityState, document.hasFocus()]")
            except Exception:  # a tab that is navigating or closing is not the one shown
                continue
            if state[0] == "visible":
                if state[1]:
                    return page
                visible.append(page)  # a browser's own new-tab page may say visible while hidden
        return visible[0] if visible else pages[-1]

    def _last_activated(self) -> str | None:
        """The address of the tab activated last: Chromium's target list puts it first (its
        pages' visibility is not always updated when a tab is switched with the keyboard)."""
        try:
            with urllib.request.urlopen(f"http://{self._tunnel.address}/json/list", timeout=PROBE_TIMEOUT) as answer:
                targets = json.loads(answer.read(1 << 20))
        except (OSError, urllib.error.URLError, ValueError):
            return None
        pages = [t for t in targets if isinstance(t, dict) and t.get("type") == "page"] if isinstance(targets, list) else []
        return str(pages[0].get("url")) if pages else None

    async def _goto(self, url: str, timeout: float) -> None:
        page = await self._page()
        await page.goto(url, wait_until="load", timeout=timeout * 1000)
        await page.bring_to_front()

    async def _new_tab(self, url: str, timeout: float) -> None:
        from playwright.async_api import Error as PlaywrightError

        assert self._cdp is not None
        await self._first_window()
        context = self._cdp.contexts[0] if self._cdp.contexts else await self._cdp.new_context()
        page = await context.new_page()
        try:
            await page.goto(url, wait_until="load", timeout=timeout * 1000)
        except PlaywrightError:
            pass  # not reachable: the tab stays, as it does in a browser
        await page.bring_to_front()

    async def _first_window(self) -> None:
        """Wait (up to :data:`FIRST_WINDOW_TIMEOUT`) for the browser's own first tab: its
        debugging port answers before its first window exists, and a tab opened then gets a
        window of its own, beside which the first window appears later and takes the focus —
        two windows where the user's browser has one, and what the agent types goes to the
        other one. A browser that never opens a window (headless) is used after the wait."""
        deadline = time.monotonic() + FIRST_WINDOW_TIMEOUT
        while not self._pages() and time.monotonic() < deadline:
            await asyncio.sleep(0.1)

    async def _close_tabs(self, url: str) -> int:
        closing = [page for page in self._pages() if (await _address(page)).rstrip("/") == url.rstrip("/")]
        for page in closing:
            await page.close()
        return len(closing)

    async def _current_url(self) -> str:
        return await _address(await self._page())

    async def _current_title(self) -> str:
        return await (await self._page()).title()

    async def _tabs(self) -> list[Tab]:
        return [Tab(await _address(page), await page.title()) for page in self._pages()]

    async def _evaluate(self, script: str, arg: Any) -> Any:
        return await (await self._page()).evaluate(script, arg)

    async def _visit(self, url: str, pdf: bool, timeout: float) -> Visit:
        from playwright.async_api import Error as PlaywrightError

        assert self._cdp is not None
        context = self._cdp.contexts[0] if self._cdp.contexts else await self._cdp.new_context()
        page = await context.new_page()
        try:
            await page.goto(url, wait_until="load", timeout=timeout * 1000)
            try:  # the reference waits for the network to go quiet; a busy page is read anyway
                await page.wait_for_load_state("networkidle", timeout=timeout * 1000)
            except PlaywrightError:
                pass
            printed = await page.pdf() if pdf else None
            return Visit(page.url, await page.title(), await page.content(), printed)
        finally:
            await page.close()

    async def _text(self, selector: str) -> str | None:
        element = await (await self._page()).query_selector(selector)
        return None if element is None else await element.text_content()

    async def _wait_for_load(self, timeout: float) -> None:
        await (await self._page()).wait_for_load_state("load", timeout=timeout * 1000)


class _LoopThread:
    """An asyncio event loop in a thread of its own, for Playwright's async API; callers on
    any thread submit coroutines and wait for them with a timeout."""

    def __init__(self, name: str) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and not self._loop.is_closed()

    def run(self, make: Callable[[], Awaitable[T]], *, timeout: float) -> T:
        async def call() -> T:
            return await make()

        future = asyncio.run_coroutine_threadsafe(call(), self._loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise DesktopTimeout(f"the browser gave no answer within {timeout:g} s") from None

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self._loop.close()


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


ERROR_PAGE = "chrome-error://"


async def _address(page: Page) -> str:
    """The address a tab shows in its address bar: the page's own, except on the browser's error
    page (an address that did not load: the desktop has no network), whose page is
    ``chrome-error://chromewebdata/`` while the bar, the tab list and history keep the address
    typed. That one is the current entry of the tab's history, asked over one CDP session only
    for error pages (a round trip each)."""
    if not page.url.startswith(ERROR_PAGE):
        return page.url
    session = await page.context.new_cdp_session(page)
    try:
        history = await session.send("Page.getNavigationHistory")
    finally:
        await session.detach()
    entries, current = history.get("entries") or [], history.get("currentIndex", -1)
    return str(entries[current]["url"]) if 0 <= current < len(entries) else page.url
