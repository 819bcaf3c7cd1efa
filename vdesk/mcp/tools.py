"""The tools of ``vdesk mcp``, on the official ``mcp`` SDK (:class:`mcp.server.mcpserver.MCPServer`):
each tool is a typed function, so every tool has a JSON schema, and arguments that do not fit it
come back as a tool error naming each field in one line before anything reaches a desktop.

Coordinates of the pointer tools are pixels of the last screenshot the connection took (its
size, when it was scaled), else of the screen at its logical size.

The tools are registered in groups (:func:`build_server`); a new group is one more function of
the same shape. Which desktop a call drives is the transport's word (``key``): the one of stdio,
or the one of the caller's MCP session over HTTP (:mod:`vdesk.mcp.http`).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, cast

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import Icon, ToolAnnotations
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from vdesk.actions import ExecuteResult
from vdesk.channel import Completed
from vdesk.coords import ImageSpace
from vdesk.desktop import Desktop
from vdesk.mcp.pool import STDIO_KEY, Desktops, ServerOptions, Slot, have_tree
from vdesk.encoding import encode
from vdesk.errors import DesktopTimeout
from vdesk.version import __version__
from vdesk.viewer import MAX_LINK_SECONDS, Viewer

MAX_IMAGE_SIDE = 8192
COMMAND_TIMEOUT = 60.0  # seconds run_command waits for a command by default
INSTRUCTIONS = (
    "Drives one Linux desktop (X11, openbox; with the apps image also a browser and an office suite). "
    "Take a screenshot first; pointer coordinates are pixels of the last screenshot you took. "
    "Actions return at once: take a screenshot to see what they did.")



# -- what tools answer ------------------------------------------------------------------------
class Done(BaseModel):
    """What an action tool did."""

    done: str


class Position(BaseModel):
    """A point in pixels of the last screenshot (or of the logical screen before any)."""

    x: int
    y: int


class ScreenSize(BaseModel):
    """The screen at its logical size, the size of the last screenshot, and the desktop's name."""

    width: int
    height: int
    screenshot_width: int
    screenshot_height: int
    desktop: str


class FileText(BaseModel):
    path: str
    content: str
    encoding: Literal["utf-8", "base64"]
    size: int


class ClipboardText(BaseModel):
    text: str


class TreeText(BaseModel):
    """The accessibility tree in one of its forms, and the applications that did not answer."""

    format: str
    text: str
    errors: list[str]


class FoundText(BaseModel):
    """Text read on the screen, its box in pixels of the last screenshot."""

    text: str
    x: int
    y: int
    width: int
    height: int
    confidence: float


class CommandOutput(BaseModel):
    """A command's exit code and output; a program started with wait false is left running
    (running is true), and has neither (exit_code is null, the outputs are empty)."""

    running: bool
    exit_code: int | None
    stdout: str
    stderr: str
    stdout_bytes: int  # how many bytes came in all; past 1 MiB only the first are in stdout
    stderr_bytes: int
    truncated: bool    # some output was cut (see stdout_bytes and stderr_bytes)


class ViewerLinkOut(BaseModel):
    url: str
    expires_in_seconds: int
    read_only: bool


X = Annotated[float, Field(description="x in pixels of the last screenshot (0 is the left edge)")]
Y = Annotated[float, Field(description="y in pixels of the last screenshot (0 is the top edge)")]
Button = Literal["left", "right", "middle"]
Selection = Literal["clipboard", "primary"]


# -- the server -------------------------------------------------------------------------------
@dataclass
class Server:
    """The MCP server and what it owns: the desktops, and (over HTTP) the viewer links."""

    mcp: MCPServer
    desktops: Desktops
    options: ServerOptions
    key: Callable[[Context], str]  # which slot a request's connection drives
    viewer: Viewer | None = None

    def slot(self, ctx: Context) -> Slot:
        return self.desktops.slot(self.key(ctx))



def build_server(options: ServerOptions, *, key: Callable[[Context], str] = lambda ctx: STDIO_KEY,
                 middleware: Sequence[Any] = (), **auth: Any) -> Server:
    """The MCP server with every tool registered. ``key`` names the slot a request drives (the
    transport's choice), ``middleware`` runs before each request, ``auth`` goes to the SDK."""
    mcp = _Server("vdesk", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING", **auth)
    mcp.middleware.extend(middleware)
    server = Server(mcp, Desktops(options), options, key)
    # One function per group of tools, each registering its tools on the server; only those the
    # desktops can serve are listed.
    for group in (_screen_tools, _pointer_tools, _keyboard_tools, _batch_tools, _content_tools, _text_tools):
        group(server)
    if have_tree(options):
        _tree_tools(server)
    if options.allow_commands:
        _command_tools(server)
    return server


class _Server(MCPServer):
    """The SDK's server, whose tools refuse arguments they do not have (the SDK's drop them
    unread: a misspelt or guessed option would silently do the default), and whose argument
    errors are one line naming each argument and what is wrong with it (the SDK's own is
    pydantic's multi-line dump with a documentation link)."""

    def add_tool(self, fn: Callable[..., Any], name: str | None = None, title: str | None = None,
                 description: str | None = None, annotations: ToolAnnotations | None = None,
                 icons: list[Icon] | None = None, meta: dict[str, Any] | None = None,
                 structured_output: bool | None = None) -> None:
        tool = self._tool_manager.add_tool(fn, name=name, title=title, description=description, annotations=annotations,
                                           icons=icons, meta=meta, structured_output=structured_output)
        # The SDK builds each tool's argument model from its signature, with no say in its
        # config: a subclass forbids extras, in the check and in the published schema
        # ("additionalProperties": false) alike.
        loose = tool.fn_metadata.arg_model
        strict = cast(type[ArgModelBase], type(loose.__name__, (loose,), {
            "model_config": ConfigDict(extra="forbid"), "__module__": loose.__module__}))
        tool.fn_metadata.arg_model = strict
        tool.parameters = strict.model_json_schema(by_alias=True)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context | None = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            cause = error.__cause__
            if isinstance(error, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            tool = self._tool_manager.get_tool(name)
            known = list(tool.parameters.get("properties", {})) if tool is not None else []
            raise ToolError(f"Error executing tool {name}: {argument_problems(cause, known)}") from cause


def argument_problems(error: ValidationError, known: Sequence[str] = ()) -> str:
    """``argument x: Input should be a valid number (got 'abc'); argument y: required;
    argument z: unknown (the arguments are x, y)``: ``known`` names the tool's arguments."""
    parts = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"])
        if item["type"] == "missing":
            parts.append(f"argument {where}: required")
            continue
        if item["type"] == "extra_forbidden":
            takes = f"the arguments are {', '.join(known)}" if known else "the tool takes none"
            parts.append(f"argument {where}: unknown ({takes})")
            continue
        got = repr(item.get("input"))
        got = got if len(got) <= 40 else got[:37] + "..."  # the caller's own value, bounded
        parts.append(f"argument {where}: {item['msg']} (got {got})")
    return "; ".join(parts)


def _act(slot: Slot, actions: list[dict[str, Any]], what: str) -> Done:
    result: ExecuteResult = slot.use(lambda desktop: desktop.input.execute(actions, image=slot.image))
    if result.status != "success":
        raise ToolError(result.error_message or f"{what} failed")
    return Done(done=what)


def _point(x: float, y: float) -> dict[str, Any]:
    return {"raw": {"x": x, "y": y}}


READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False)


def _screen_tools(server: Server) -> None:
    mcp = server.mcp

    @mcp.tool(annotations=READ_ONLY)
    def screenshot(
        ctx: Context,
        format: Annotated[Literal["png", "jpeg"], Field(description="png (exact) or jpeg (smaller)")] = "png",
        width: Annotated[int | None, Field(ge=1, le=MAX_IMAGE_SIDE, description=(
            "Scale to this width (with height omitted the aspect ratio is kept)"))] = None,
        height: Annotated[int | None, Field(ge=1, le=MAX_IMAGE_SIDE, description=(
            "Scale to this height (with width omitted the aspect ratio is kept)"))] = None,
    ) -> Image:
        """The screen as an image, at its logical size unless scaled. Pointer coordinates of
        later calls are pixels of this image."""
        slot = server.slot(ctx)

        def shoot(desktop: Desktop) -> Image:
            size = _scaled(desktop.screen.size, width, height)
            frame = desktop.screen.shot(size)
            slot.image = ImageSpace(*frame.size)
            return Image(data=encode(frame, format), format=format)

        return slot.use(shoot)

    @mcp.tool(annotations=READ_ONLY)
    def screen_size(ctx: Context) -> ScreenSize:
        """The screen's logical size, the size of the last screenshot (the space of pointer
        coordinates) and the desktop's name."""
        slot = server.slot(ctx)

        def size(desktop: Desktop) -> ScreenSize:
            image = slot.image or desktop.screen.image()
            return ScreenSize(width=desktop.screen.width, height=desktop.screen.height,
                              screenshot_width=image.width, screenshot_height=image.height, desktop=desktop.name)

        return slot.use(size)

    @mcp.tool(annotations=READ_ONLY)
    def cursor_position(ctx: Context) -> Position:
        """Where the mouse pointer is, in pixels of the last screenshot."""
        slot = server.slot(ctx)

        def where(desktop: Desktop) -> Position:
            x, y = desktop.input.pointer(slot.image)
            return Position(x=x, y=y)

        return slot.use(where)

    @mcp.tool(annotations=READ_ONLY)
    def wait(ctx: Context, seconds: Annotated[float, Field(ge=0, le=60, description="How long, 0..60 s")] = 1.0) -> Done:
        """Wait, e.g. for a program to start or a page to load."""
        server.slot(ctx)  # a session without a desktop can wait too
        time.sleep(seconds)
        return Done(done=f"waited {seconds:g} s")



def viewer_tool(server: Server) -> None:
    @server.mcp.tool()
    def viewer_link(
        ctx: Context,
        read_only: Annotated[bool, Field(description="Watch only (true) or also send keys and clicks")] = True,
        expires_in: Annotated[int, Field(ge=10, le=MAX_LINK_SECONDS, description="Seconds the link stays valid")] = 300,
    ) -> ViewerLinkOut:
        """A link a person opens in a browser to watch this desktop live. It works once, expires,
        and carries no password."""
        slot = server.slot(ctx)
        viewer = server.viewer
        assert viewer is not None  # registered with one
        link = slot.use(lambda desktop: viewer.link(desktop, read_only=read_only, expires_in=expires_in))
        return ViewerLinkOut(url=link.url, expires_in_seconds=expires_in, read_only=read_only)


def _pointer_tools(server: Server) -> None:
    mcp = server.mcp

    @mcp.tool()
    def click(ctx: Context, x: X, y: Y, button: Annotated[Button, Field(description="Mouse button")] = "left") -> Done:
        """Move the pointer to (x, y) and click a mouse button."""
        kind = {"left": "click", "right": "right_click", "middle": "middle_click"}[button]
        return _act(server.slot(ctx), [{"type": kind, "inputs": {"point": _point(x, y)}}], f"{button} click at ({x:g}, {y:g})")

    @mcp.tool()
    def double_click(ctx: Context, x: X, y: Y) -> Done:
        """Double-click the left button at (x, y)."""
        return _act(server.slot(ctx), [{"type": "double_click", "inputs": {"point": _point(x, y)}}],
                    f"double click at ({x:g}, {y:g})")

    @mcp.tool()
    def right_click(ctx: Context, x: X, y: Y) -> Done:
        """Click the right button at (x, y), e.g. for a context menu."""
        return _act(server.slot(ctx), [{"type": "right_click", "inputs": {"point": _point(x, y)}}],
                    f"right click at ({x:g}, {y:g})")

    @mcp.tool()
    def move(ctx: Context, x: X, y: Y) -> Done:
        """Move the pointer to (x, y) without clicking (hover)."""
        return _act(server.slot(ctx), [{"type": "mouse_move", "inputs": {"point": _point(x, y)}}],
                    f"moved to ({x:g}, {y:g})")

    @mcp.tool()
    def drag(ctx: Context, start_x: X, start_y: Y, end_x: X, end_y: Y) -> Done:
        """Press the left button at the start point, move to the end point, release there."""
        inputs = {"start": _point(start_x, start_y), "end": _point(end_x, end_y)}
        return _act(server.slot(ctx), [{"type": "drag", "inputs": inputs}],
                    f"dragged from ({start_x:g}, {start_y:g}) to ({end_x:g}, {end_y:g})")

    @mcp.tool()
    def scroll(
        ctx: Context, x: X, y: Y,
        direction: Annotated[Literal["up", "down", "left", "right"], Field(description="Which way to scroll")],
        amount: Annotated[int, Field(ge=1, le=100, description="Notches of the wheel")] = 3,
    ) -> Done:
        """Scroll with the mouse wheel over (x, y)."""
        inputs = {"point": _point(x, y), "direction": direction, "amount": amount}
        return _act(server.slot(ctx), [{"type": "scroll", "inputs": inputs}],
                    f"scrolled {direction} {amount} at ({x:g}, {y:g})")


def _keyboard_tools(server: Server) -> None:
    mcp = server.mcp

    @mcp.tool(name="type")
    def type_text(
        ctx: Context,
        text: Annotated[str, Field(min_length=1, description=(
            "The text, any Unicode; a trailing newline presses Enter"))],
        method: Annotated[Literal["keys", "paste"], Field(description=(
            "keys: typed key by key (default); paste: through the clipboard, for long text"))] = "keys",
    ) -> Done:
        """Type text into the focused window."""
        return _act(server.slot(ctx), [{"type": "type", "inputs": {"content": text, "method": method}}],
                    f"typed {len(text)} characters")

    # The argument is `key`, as in the hotkey action and every other front door; `keys`, its
    # first spelling here, is still read so that clients written against it keep working.
    @mcp.tool()
    def key(ctx: Context, key: Annotated[str, Field(min_length=1, validation_alias=AliasChoices("key", "keys"),
                                                    description=(
            "A key or combination: 'Return', 'ctrl+c', 'ctrl+shift+t', 'alt+F4', 'super'"))]) -> Done:
        """Press a key or a key combination (all pressed, then released in reverse)."""
        return _act(server.slot(ctx), [{"type": "hotkey", "inputs": {"key": key}}], f"pressed {key}")


def _batch_tools(server: Server) -> None:
    @server.mcp.tool()
    def execute(ctx: Context, actions: Annotated[list[dict[str, Any]], Field(min_length=1, description=(
            "BaseAction objects: {\"type\": \"click\", \"inputs\": {\"point\": {\"raw\": {\"x\": 10, \"y\": 20}}}}; "
            "types: click, double_click, right_click, middle_click, mouse_move, mouse_down, mouse_up, drag, scroll, "
            "type, hotkey, press, release, wait"))]) -> ExecuteResult:
        """Run a batch of actions in vdesk's BaseAction schema, in order. The whole batch is
        checked before anything runs; raw points are pixels of the last screenshot."""
        slot = server.slot(ctx)
        result: ExecuteResult = slot.use(lambda desktop: desktop.input.execute(actions, image=slot.image))
        if result.status != "success":
            raise ToolError(f"{result.error_message} ({result.executed} of {len(actions)} actions ran)")
        return result


def _content_tools(server: Server) -> None:
    mcp = server.mcp

    @mcp.tool(annotations=READ_ONLY)
    def read_file(
        ctx: Context,
        path: Annotated[str, Field(min_length=1, description="A path in the desktop; ~ is the user's home")],
        encoding: Annotated[Literal["utf-8", "base64"], Field(description="utf-8 text or base64 bytes")] = "utf-8",
    ) -> FileText:
        """Read a file in the desktop."""
        data = server.slot(ctx).use(lambda desktop: desktop.files.read_file(path))
        if encoding == "utf-8":
            try:
                content = data.decode("utf-8")
            except UnicodeDecodeError:
                raise ToolError(f"{path} is not UTF-8 text: read it with encoding 'base64'") from None
        else:
            import base64

            content = base64.b64encode(data).decode()
        return FileText(path=path, content=content, encoding=encoding, size=len(data))

    @mcp.tool()
    def write_file(
        ctx: Context,
        path: Annotated[str, Field(min_length=1, description="A path in the desktop under ~ or /tmp")],
        content: Annotated[str, Field(description="The file's content")],
        encoding: Annotated[Literal["utf-8", "base64"], Field(description="utf-8 text or base64 bytes")] = "utf-8",
    ) -> Done:
        """Write a file in the desktop (replacing it)."""
        if encoding == "base64":
            import base64
            import binascii

            try:
                data = base64.b64decode(content, validate=True)
            except binascii.Error:
                raise ToolError("content: not valid base64") from None
        else:
            data = content.encode()
        server.slot(ctx).use(lambda desktop: desktop.files.write_file(path, data))
        return Done(done=f"wrote {len(data)} bytes to {path}")

    @mcp.tool()
    def clipboard(
        ctx: Context,
        text: Annotated[str | None, Field(description="Set the clipboard to this; omit to read it")] = None,
        selection: Annotated[Selection, Field(description="clipboard (Ctrl+C/V) or primary (middle click)")] = "clipboard",
    ) -> ClipboardText:
        """Read the desktop's clipboard, or set it when text is given."""

        def use(desktop: Desktop) -> ClipboardText:
            if text is not None:
                desktop.clipboard.set(text, selection)
                return ClipboardText(text=text)
            return ClipboardText(text=desktop.clipboard.get(selection))

        return server.slot(ctx).use(use)


def _tree_tools(server: Server) -> None:
    mcp = server.mcp

    @mcp.tool(annotations=READ_ONLY)
    def accessibility_tree(
        ctx: Context,
        format: Annotated[Literal["table", "xml", "json"], Field(description=(
            "table: a line per interesting element (tag, name, text, position, size); xml: OSWorld's "
            "form; json: the whole typed tree"))] = "table",
        max_chars: Annotated[int, Field(ge=1_000, le=500_000, description="Bound on the table's length")] = 40_000,
    ) -> TreeText:
        """The accessibility tree of every program on the screen (the apps desktop's programs
        expose one; xterm does not). Positions and sizes are logical pixels: those of an unscaled
        screenshot. To act on an element by its role and name, use click_element."""
        from vdesk.accessibility.osworld_xml import linearize, to_xml
        from vdesk.accessibility.tree import TreeLimits

        def read(desktop: Desktop) -> TreeText:
            tree = desktop.elements.tree(TreeLimits(details=format == "xml"))
            text = {"table": lambda: linearize(tree, max_chars=max_chars), "xml": lambda: to_xml(tree),
                    "json": lambda: json.dumps(tree.to_json(), ensure_ascii=False)}[format]()
            return TreeText(format=format, text=text, errors=[str(error) for error in tree.errors()])

        return server.slot(ctx).use(read)

    @mcp.tool(annotations=READ_ONLY)
    def marks(ctx: Context) -> list[Image | str]:
        """A screenshot with the interactive elements numbered (set-of-marks) and their table
        (index, tag, name, text, source). Act on mark N with execute, e.g.
        [{"type": "click", "inputs": {"element": N}}]; later pointer coordinates are pixels of this image."""
        slot = server.slot(ctx)

        def mark(desktop: Desktop) -> list[Image | str]:
            marked = desktop.elements.marks()
            slot.image = ImageSpace(*marked.image.size)
            return [Image(data=encode(marked.image, "png"), format="png"), marked.table()]

        return slot.use(mark)

    @mcp.tool()
    def click_element(
        ctx: Context,
        role: Annotated[str | None, Field(min_length=1, description="The element's role, e.g. 'push button'")] = None,
        name: Annotated[str | None, Field(min_length=1, description="The element's name, e.g. 'Save'")] = None,
        index: Annotated[int | None, Field(ge=0, description="Which one when several match (from 0)")] = None,
    ) -> Done:
        """Click the centre of the element of the accessibility tree with this role and name
        (at least one of them). No match, or several without an index, is an error naming the
        closest candidates; nothing is clicked then."""
        if role is None and name is None:
            raise ToolError("role, name: give at least one")
        query = {key: value for key, value in (("role", role), ("name", name), ("index", index)) if value is not None}
        return _act(server.slot(ctx), [{"type": "click", "inputs": {"element": query}}], "clicked")


def _text_tools(server: Server) -> None:
    mcp = server.mcp

    @mcp.tool(annotations=READ_ONLY)
    def find_text(
        ctx: Context,
        pattern: Annotated[str, Field(min_length=1, description="The text to find (any whitespace matches any)")],
        regex: Annotated[bool, Field(description="pattern is a regular expression")] = False,
    ) -> list[FoundText]:
        """Where text is on the screen now (read from a fresh frame), top to bottom; boxes in
        pixels of the last screenshot. An empty list when it is not there."""
        slot = server.slot(ctx)
        try:
            wanted: str | re.Pattern[str] = re.compile(pattern) if regex else pattern
        except re.error as error:
            raise ToolError(f"pattern: not a regular expression: {error}") from None

        def find(desktop: Desktop) -> list[FoundText]:
            image = slot.image or desktop.screen.image()
            sx, sy = image.width / desktop.screen.size[0], image.height / desktop.screen.size[1]
            return [FoundText(text=box.text, x=round(box.bounds.x * sx), y=round(box.bounds.y * sy),
                              width=round(box.bounds.width * sx), height=round(box.bounds.height * sy),
                              confidence=box.confidence)
                    for box in desktop.text.find(wanted)]

        return slot.use(find)


def _command_tools(server: Server) -> None:
    @server.mcp.tool()
    def run_command(
        ctx: Context,
        argv: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1, description=(
            "The program and its arguments, e.g. [\"ls\", \"-l\", \"/tmp\"] (no shell)"))],
        wait: Annotated[bool, Field(description=(
            "true: wait for it to end and return its exit code and output; false: start it and return at "
            "once, leaving it running (a program with a window, a server)"))] = True,
        timeout: Annotated[float | None, Field(gt=0, le=600, description=(
            f"Seconds to wait for it to end (default {COMMAND_TIMEOUT:g}); only with wait true"))] = None,
    ) -> CommandOutput:
        """Run a program in the desktop as its user. By default it waits for the program to end
        (up to timeout, then kills it) and returns its exit code and output, each output's first
        MiB (truncated and the byte counts say when more came). A program that keeps running, such
        as one with a window, is started with wait false: the call returns at once with running
        true, and the program runs on (its output is not kept)."""
        if not wait:
            if timeout is not None:
                raise ToolError("timeout: only with wait true (a program started with wait false runs until it ends)")
            server.slot(ctx).use(lambda desktop: desktop.programs.run(argv))
            return CommandOutput(running=True, exit_code=None, stdout="", stderr="", stdout_bytes=0, stderr_bytes=0,
                                 truncated=False)
        seconds = COMMAND_TIMEOUT if timeout is None else timeout

        def run(desktop: Desktop) -> Completed:
            try:
                return desktop.programs.run(argv, wait=True, timeout=seconds)
            except DesktopTimeout as error:
                raise ToolError(f"{error}; a program that keeps running (a window, a server) is started "
                                "with wait false") from None

        done = server.slot(ctx).use(run)
        return CommandOutput(running=False, exit_code=done.returncode, stdout=done.stdout, stderr=done.stderr,
                             stdout_bytes=done.stdout_bytes, stderr_bytes=done.stderr_bytes, truncated=done.cut)



def _scaled(screen: tuple[int, int], width: int | None, height: int | None) -> tuple[int, int] | None:
    if width is None and height is None:
        return None
    if width is None:
        assert height is not None
        width = max(1, round(screen[0] * height / screen[1]))
    elif height is None:
        height = max(1, round(screen[1] * width / screen[0]))
    return width, height
