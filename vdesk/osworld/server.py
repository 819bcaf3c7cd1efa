"""OSWorld's machine server for one vdesk desktop: the HTTP protocol its harness speaks to the
machine it drives (``desktop_env``'s ``PythonController`` and ``SetupController``, and the
getters that call the server themselves), served on this machine's loopback.

    with Desktop.up((1920, 1080), image="osworld") as desktop, serve(desktop) as served:
        requests.get(f"http://{served.host}:{served.server_port}/screenshot").content   # PNG

Every endpoint takes the reference's request and answers in its shapes and status codes
(``desktop_env/server/main.py``); what it runs, it runs INSIDE the desktop as the desktop's
user, through the desktop's channel, windows and files (:mod:`vdesk.osworld.inside`) — never on
this machine. The desktop keeps no network: Chromium's debugging port (9222 inside, where the
tasks' ``socat`` forwards ``google-chrome --remote-debugging-port=1337``), VLC's web interface
(8080 inside) and the VNC server are reached through tunnels (:mod:`vdesk.tunnel`) that listen
on the same loopback address as the server.

Differences that keep a client's view the same: commands run from the home folder, their
output bounded (the first MiB of each stream, as every vdesk command's); ``/screenshot`` is the
framebuffer with the X cursor drawn at its hotspot (:mod:`vdesk.osworld.pointer`);
``/start_recording`` records from the held VNC connection on this machine, not with ffmpeg
inside; ``/terminal`` reads GNOME Terminal's text through AT-SPI as the reference does (the
desktops have none, so it answers ``{"output": null}``); ``/setup/download_file`` answers 501,
the desktop having no network (the harness downloads on its own side and uploads). Commands go
through the desktop's one channel, so one long ``/execute`` makes the next wait for it (the
harness sends one request at a time); frames, windows and files do not wait.

Safety. The server and its tunnels listen on ONE loopback address, by default a random one in
127.0.0.0/8 (127.a.b.c, about 2^24 choices) with a random port each (20000–60999): the
reference's clients know only ``host:port`` and send no credentials, so what protects them is
that nothing on this machine can guess where the server is — a web page in a browser here
cannot reach it by trying ``localhost:5000`` (and a request whose ``Host`` header names another
host, as DNS rebinding makes, is refused with 403). It does not hide the server from local
processes, which can list sockets (``/proc/net/tcp``): against those, give a token. With a
token every request must carry ``Authorization: Bearer TOKEN`` (401 JSON without it, compared
in constant time); clients that can send headers should. The tunnels carry their protocols
as they are: VNC asks its password, VLC its own, CDP nothing (as on the reference's machine),
so the random address is all that guards Chromium's port; what reaches it acts inside the
desktop's sandbox only. Only HTTP is served (no WebSocket). JSON bodies must say
``Content-Type: application/json`` (a web page's form cannot), bodies are bounded (16 MiB,
uploads 256 MiB: 413), and a bad request is a 4xx JSON naming the problem; nothing a request
does stops the server or the desktop.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import posixpath
import secrets
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from vdesk.actions import validation_message
from vdesk.container import VNC_TARGET
from vdesk.desktop import Desktop
from vdesk.errors import CommandFailed, DesktopTimeout, InvalidArgument, TooLarge, VdeskError
from vdesk.loopback import BackgroundServer, listen
from vdesk.encoding import encode
from vdesk.osworld import inside, pointer
from vdesk.osworld.wire import (BashBody, Body, CommandBody, PathBody, PythonBody, VerifiedCommandBody,
                                WindowBody, argv_of, desktop_path, expand_home)
from vdesk.tunnel import Tunnel

B = TypeVar("B", bound=Body)
CDP_TARGET = "TCP:127.0.0.1:9222"  # inside: where the tasks' socat answers for Chromium's port 1337
VLC_TARGET = inside.VLC_TARGET  # inside: VLC's HTTP interface (osworld image's vlcrc)
COMMAND_TIMEOUT = 120.0  # the reference's bound on one /execute
PYTHON_TIMEOUT = 30.0  # ... on one /run_python
OPEN_TIMEOUT = 1800.0  # ... on the window of /setup/open_file (its client waits 1810 s)
WINDOW_TIMEOUT = 5.0  # for a window to activate
VERIFY_COMMAND_TIMEOUT = 5.0
TERMINAL_TIMEOUT = 10.0
JSON_LIMIT = 16 << 20  # bytes of a request body
UPLOAD_LIMIT = 256 << 20  # bytes of an upload (the steps' own bound)
FILE_LIMIT = 256 << 20  # bytes of a file out of the desktop
PORTS = (20000, 61000)
NOT_FOUND_MARK = "vdesk-osworld: no such program: "
# Runs argv from the home folder; a program that is not there is told apart from one that ran.
EXEC_SCRIPT = ('cd || exit 1; command -v -- "$1" >/dev/null 2>&1 || '
               '{ printf "%s%s\\n" "' + NOT_FOUND_MARK + '" "$1" >&2; exit 127; }; exec "$@"')


class Served(BaseModel):
    """Where a served desktop is reached (the line ``vdesk osworld-serve`` prints): the server,
    Chromium's debugging port, the VNC server (its password) and VLC's web interface, all on
    ``host``; ``token`` is what ``Authorization: Bearer`` must carry, None when nothing is asked."""

    name: str
    host: str
    server_port: int
    chromium_port: int
    vnc_port: int
    vlc_port: int
    token: str | None = Field(repr=False)
    vnc_password: str = Field(repr=False)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.server_port}"


def _error_body(message: str) -> dict[str, Any]:
    # Both keys: the reference answers errors with "message" or "error", and clients read either.
    return {"status": "error", "message": message, "error": message}


def error_response(status: int, message: str) -> JSONResponse:
    return JSONResponse(_error_body(message), status_code=status)


# -- the serving ----------------------------------------------------------------------------------
@contextmanager
def serve(desktop: Desktop, *, host: str | None = None, token: str | None = None,
          port: int = 0) -> Iterator[Served]:
    """Serve OSWorld's protocol for ``desktop`` while inside the ``with`` block, with the CDP,
    VNC and VLC tunnels; everything stops when it ends (the desktop stays). ``host`` is a
    loopback address (default: a random one in 127.0.0.0/8), ``port`` the server's (0: random);
    ``token`` (at least 16 characters) makes every request need ``Authorization: Bearer token``."""
    if token is not None and len(token) < 16:
        raise InvalidArgument("a token must be at least 16 characters")
    host = host or random_loopback()
    check_loopback(host)
    listener = listen(host, port, ports=PORTS)
    tunnels: list[Tunnel] = []
    app: OSWorldServer | None = None
    server: BackgroundServer | None = None
    try:
        for target in (CDP_TARGET, VNC_TARGET, VLC_TARGET):
            tunnels.append(_tunnel(desktop, target, host))
        app = OSWorldServer(desktop, inside.home(desktop))
        address = f"{host}:{listener.getsockname()[1]}"
        server = BackgroundServer(Guard(app.app, address, token), listener, "the OSWorld server", ws="none")
        yield Served(name=desktop.name, host=host, server_port=listener.getsockname()[1],
                     chromium_port=tunnels[0].port, vnc_port=tunnels[1].port, vlc_port=tunnels[2].port,
                     token=token, vnc_password=desktop.vnc.password)
    finally:
        if server is not None:
            server.close()
        listener.close()
        for tunnel in tunnels:
            tunnel.close()
        if app is not None:
            app.close()


def check_loopback(host: str) -> None:
    """:class:`InvalidArgument` unless ``host`` is an IPv4 loopback address (127.0.0.0/8)."""
    try:
        loopback = ipaddress.IPv4Address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise InvalidArgument(f"the server listens on an IPv4 loopback address (127.x.y.z) only, not {host!r}")


def random_loopback() -> str:
    """A random address in 127.0.0.0/8, none of 127.0.x.x (127.0.0.1's neighbours) nor x.y.z.0/1/255."""
    return f"127.{1 + secrets.randbelow(254)}.{secrets.randbelow(256)}.{2 + secrets.randbelow(253)}"


def _tunnel(desktop: Desktop, target: str, host: str) -> Tunnel:
    for _ in range(64):
        try:
            return Tunnel(desktop.client.api, desktop.id, target, PORTS[0] + secrets.randbelow(PORTS[1] - PORTS[0]),
                          tcp_host=host)
        except OSError:
            continue
    raise InvalidArgument(f"no free port on {host} for a tunnel to {target}")




class Guard:
    """ASGI middleware in front of every request: the ``Host`` it names, its token, its size."""

    def __init__(self, app: ASGIApp, address: str, token: str | None) -> None:
        self._app = app
        host, port = address.rsplit(":", 1)
        self._hosts = {address.encode()} | ({f"localhost:{port}".encode()} if host == "127.0.0.1" else set())
        self._token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # the protocol is plain HTTP: nothing else is served
            return
        headers = dict(scope["headers"])
        if headers.get(b"host", b"") not in self._hosts:
            await error_response(403, "this server answers requests for its own address only")(scope, receive, send)
            return
        if self._token is not None and not _authorized(headers.get(b"authorization", b""), self._token):
            await error_response(401, "a bearer token is required: Authorization: Bearer TOKEN")(scope, receive, send)
            return
        limit = UPLOAD_LIMIT + (1 << 20) if scope["path"] == "/setup/upload" else JSON_LIMIT
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > limit):
            await error_response(413, f"the request body is over {limit} bytes")(scope, receive, send)
            return
        await self._app(scope, _bounded(receive, limit), send)


def _authorized(header: bytes, token: str) -> bool:
    scheme, _, given = header.decode("latin-1").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


def _bounded(receive: Receive, limit: int) -> Receive:
    """``receive`` that raises :class:`TooLarge` once the body passed ``limit`` bytes."""
    seen = 0

    async def bounded() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                raise TooLarge(f"the request body is over {limit} bytes")
        return message
    return bounded


# -- the endpoints ----------------------------------------------------------------------------------
Handler = Callable[[Request], Awaitable[Response]]


def _guarded(handler: Handler) -> Handler:
    """A handler whose failures are JSON answers: bad input 4xx, the desktop's troubles 500."""
    async def run(request: Request) -> Response:
        try:
            return await handler(request)
        except HTTPException:
            raise  # answered as JSON by the application's handler
        except InvalidArgument as error:
            return error_response(400, str(error))
        except TooLarge as error:
            return error_response(413, str(error))
        except VdeskError as error:
            return error_response(500, str(error))
        except Exception as error:  # noqa: BLE001 - the server answers, whatever a request did
            return error_response(500, f"{type(error).__name__}: {error}")
    return run


async def _json(request: Request, model: type[B]) -> B:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise HTTPException(415, f"the body must be JSON sent as Content-Type: application/json, not {kind or 'none'!r}")
    raw = await request.body()
    try:
        data = json.loads(raw) if raw.strip() else {}
    except (ValueError, UnicodeDecodeError) as error:
        raise HTTPException(400, f"the request body is not JSON: {error}") from None
    if not isinstance(data, dict):
        raise HTTPException(400, f"the request body must be a JSON object, not {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise HTTPException(400, f"bad request body: {validation_message(error)}") from None


async def _form(request: Request) -> Any:
    try:
        return await request.form(max_files=4, max_fields=16)
    except TooLarge:
        raise
    except (HTTPException, ValueError, KeyError) as error:
        detail = getattr(error, "detail", None) or str(error)
        raise HTTPException(400, f"the request body is not a form: {detail}") from None


def _text(text: str, status: int = 200) -> PlainTextResponse:
    return PlainTextResponse(text, status_code=status)


class OSWorldServer:
    """The endpoints of one desktop (see the module); :attr:`app` is the ASGI application."""

    def __init__(self, desktop: Desktop, home: str) -> None:
        self.desktop = desktop
        self.home = home
        self._recording_lock = threading.Lock()
        self._recording: tuple[AbstractContextManager[Any], Path] | None = None
        self._recordings: tempfile.TemporaryDirectory[str] | None = None  # made by the first recording
        get, post = ["GET"], ["POST"]
        routes = [
            ("/screenshot", get, self.screenshot), ("/accessibility", get, self.accessibility),
            ("/terminal", get, self.terminal), ("/platform", get, self.platform),
            ("/cursor_position", get, self.cursor_position),
            ("/execute", post, self.execute), ("/setup/execute", post, self.execute),
            ("/execute_with_verification", post, self.execute_with_verification),
            ("/setup/execute_with_verification", post, self.execute_with_verification),
            ("/setup/launch", post, self.launch), ("/setup/open_file", post, self.open_file),
            ("/setup/activate_window", post, self.activate_window),
            ("/setup/close_window", post, self.close_window),
            ("/setup/change_wallpaper", post, self.change_wallpaper), ("/setup/upload", post, self.upload),
            ("/setup/download_file", post, self.download_file),
            ("/file", post, self.file), ("/screen_size", post, self.screen_size),
            ("/window_size", post, self.window_size), ("/wallpaper", post, self.wallpaper),
            ("/desktop_path", post, self.desktop_path), ("/list_directory", post, self.list_directory),
            ("/run_python", post, self.run_python), ("/run_bash_script", post, self.run_bash_script),
            ("/start_recording", post, self.start_recording), ("/end_recording", post, self.end_recording),
        ]
        self.app = Starlette(routes=[Route(path, _guarded(handler), methods=methods) for path, methods, handler in routes],
                             exception_handlers={HTTPException: self._http_error})

    def close(self) -> None:
        with self._recording_lock:
            recording, self._recording = self._recording, None
        if recording is not None:
            try:
                recording[0].__exit__(None, None, None)
            except VdeskError:
                pass
        if self._recordings is not None:
            self._recordings.cleanup()

    async def _http_error(self, request: Request, error: Exception) -> Response:
        assert isinstance(error, HTTPException)
        if error.status_code == 404:
            return error_response(404, f"no endpoint {request.url.path}")
        if error.status_code == 405:
            return error_response(405, f"{request.method} is not allowed on {request.url.path}")
        return error_response(error.status_code, str(error.detail))

    def _call(self, function: Callable[..., Any], *args: Any) -> Awaitable[Any]:
        return run_in_threadpool(function, self.desktop, *args)

    # -- observations ---------------------------------------------------------------------------
    async def screenshot(self, request: Request) -> Response:
        image = await self._call(pointer.screenshot)
        return Response(await run_in_threadpool(encode, image, "png"), media_type="image/png")

    async def accessibility(self, request: Request) -> Response:
        return JSONResponse({"AT": await self._call(inside.accessibility_xml)})

    async def terminal(self, request: Request) -> Response:
        return JSONResponse({"output": await self._call(inside.terminal_text, TERMINAL_TIMEOUT), "status": "success"})

    async def platform(self, request: Request) -> Response:
        return _text("Linux")

    async def cursor_position(self, request: Request) -> Response:
        x, y = await self._call(pointer.position)
        return JSONResponse([x, y])

    async def screen_size(self, request: Request) -> Response:
        width, height = self.desktop.screen.physical_size
        return JSONResponse({"width": width, "height": height})

    async def window_size(self, request: Request) -> Response:
        form = await _form(request)
        name = form.get("app_class_name")
        if not isinstance(name, str) or not name:
            return JSONResponse({"error": "app_class_name is required"}, status_code=400)
        size = await self._call(inside.window_size, name)
        return JSONResponse(size) if size else JSONResponse({"error": "Window not found"}, status_code=404)

    async def desktop_path(self, request: Request) -> Response:
        path = f"{self.home.rstrip('/')}/Desktop"
        if (await self._call(_run, ["test", "-d", path], 10)).returncode != 0:
            return JSONResponse({"error": "Unsupported operating system or desktop path not found"}, status_code=404)
        return JSONResponse({"desktop_path": path})

    async def wallpaper(self, request: Request) -> Response:
        path = await self._call(_wallpaper_path)
        if not path:
            return JSONResponse({"error": "Wallpaper file not found"}, status_code=404)
        data = await self._call(inside.file_bytes, path, FILE_LIMIT)
        if data is None:
            return JSONResponse({"error": f"Wallpaper file not found: {path}"}, status_code=404)
        return Response(data, media_type="image/png")

    async def list_directory(self, request: Request) -> Response:
        body = await _json(request, PathBody)
        if body.path is None:
            return JSONResponse({"error": "Missing 'path' parameter"}, status_code=400)
        tree = await self._call(inside.directory_tree, desktop_path(body.path, self.home))
        if tree is None:
            return JSONResponse({"error": "The provided path is not a directory"}, status_code=400)
        return JSONResponse({"directory_tree": tree})

    # -- files ----------------------------------------------------------------------------------
    async def file(self, request: Request) -> Response:
        form = await _form(request)
        given = form.get("file_path")
        if not isinstance(given, str) or not given:
            return JSONResponse({"error": "file_path is required"}, status_code=400)
        path = desktop_path(given, self.home)
        if (await self._call(_run, ["test", "-e", path], 10)).returncode != 0:
            return JSONResponse({"error": "File not found"}, status_code=404)
        try:
            data = await self._call(_read_file, path)
        except CommandFailed as error:
            return JSONResponse({"error": f"Failed to serve file: {error}"}, status_code=400)
        except TooLarge as error:
            return JSONResponse({"error": f"Failed to serve file: {error}"}, status_code=413)
        name = posixpath.basename(path).replace('"', "")
        return Response(data, media_type="application/octet-stream",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    async def upload(self, request: Request) -> Response:
        form = await _form(request)
        given, upload = form.get("file_path"), form.get("file_data")
        if not isinstance(given, str) or not given or not isinstance(upload, UploadFile):
            return JSONResponse({"error": "file_path and file_data are required"}, status_code=400)
        path = desktop_path(given, self.home)
        data = await upload.read()
        try:
            await self._call(inside.put_file, path, data)
        except VdeskError as error:
            return JSONResponse({"error": f"Failed to upload file: {error}"}, status_code=500)
        return _text(f"File Uploaded: {len(data)} bytes")

    async def download_file(self, request: Request) -> Response:
        return error_response(501, "the desktop has no network: download on the host and send the file to /setup/upload")

    # -- commands -------------------------------------------------------------------------------
    async def _command(self, body: CommandBody) -> Any:
        """``body``'s command run in the desktop: what it gave, or the reference's 500 answer."""
        try:
            return await self._call(_run_program, argv_of(body.command, body.shell, self.home), COMMAND_TIMEOUT)
        except (DesktopTimeout, CommandFailed) as error:
            return JSONResponse({"status": "error", "message": str(error)}, status_code=500)

    async def execute(self, request: Request) -> Response:
        ran = await self._command(await _json(request, CommandBody))
        if isinstance(ran, Response):
            return ran
        return JSONResponse({"status": "success", "output": ran.stdout, "error": ran.stderr,
                             "returncode": ran.returncode})

    async def execute_with_verification(self, request: Request) -> Response:
        body = await _json(request, VerifiedCommandBody)
        ran = await self._command(body)
        if isinstance(ran, Response):
            return ran
        result: dict[str, Any] = {"output": ran.stdout, "error": ran.stderr, "returncode": ran.returncode}
        check = body.verification
        if check.window_exists is None and check.command_success is None:
            return JSONResponse({"status": "success", **result})
        waited = await self._call(_verify, check.window_exists, check.command_success, body.max_wait_time,
                                  body.check_interval)
        if waited is None:
            return JSONResponse({"status": "verification_failed", **result, "verification": "failed",
                                 "wait_time": body.max_wait_time}, status_code=500)
        return JSONResponse({"status": "success", **result, "verification": "passed", "wait_time": waited})

    async def launch(self, request: Request) -> Response:
        body = await _json(request, CommandBody)
        argv = argv_of(body.command, body.shell, self.home)
        try:
            await self._call(_launch, argv, body.shell)
        except CommandFailed as error:
            return JSONResponse({"status": "error", "message": str(error)}, status_code=500)
        return _text(f"{body.command if body.shell else ' '.join(argv)} launched successfully")

    async def run_python(self, request: Request) -> Response:
        body = await _json(request, PythonBody)
        if not body.code:
            return JSONResponse(_error_body("Code not supplied!"), status_code=400)
        try:
            ran = await self._call(_run_file, ["python3"], body.code, "py", PYTHON_TIMEOUT, self.home, False)
        except DesktopTimeout:
            return JSONResponse({"status": "error", "message": "Execution timeout: Code took too long to execute",
                                 "error": "TimeoutExpired", "need_more": False, "output": None}, status_code=500)
        error = ran.stderr or ("" if ran.returncode == 0 else f"Process exited with code {ran.returncode}")
        message = "\n".join(part for part in (ran.stdout, error) if part) if ran.stdout and error else ran.stdout or error
        return JSONResponse({"status": "success" if ran.returncode == 0 else "error", "message": message,
                             "need_more": False, "output": ran.stdout, "error": error, "return_code": ran.returncode})

    async def run_bash_script(self, request: Request) -> Response:
        body = await _json(request, BashBody)
        if not body.script:
            return JSONResponse({"status": "error", "output": "Script not supplied!", "error": "", "returncode": -1},
                                status_code=400)
        folder = expand_home(body.working_dir, self.home) if body.working_dir else self.home
        if (await self._call(_run, ["test", "-d", folder], 10)).returncode != 0:
            return JSONResponse({"status": "error", "output": f"Working directory does not exist: {folder}",
                                 "error": "", "returncode": -1}, status_code=400)
        script = body.script if "#!/bin/bash" in body.script else "#!/bin/bash\n\n" + body.script
        try:
            ran = await self._call(_run_file, ["/bin/bash"], script, "sh", body.timeout, folder, True)
        except DesktopTimeout:
            return JSONResponse({"status": "error", "output": f"Script execution timed out after {body.timeout:g} seconds",
                                 "error": "", "returncode": -1}, status_code=500)
        return JSONResponse({"status": "success" if ran.returncode == 0 else "error", "output": ran.stdout,
                             "error": "", "returncode": ran.returncode})

    # -- windows --------------------------------------------------------------------------------
    async def open_file(self, request: Request) -> Response:
        body = await _json(request, PathBody)
        if not body.path:
            return _text("Path not supplied!", 400)
        path = desktop_path(body.path, self.home)
        exists = (await self._call(_run, ["test", "-e", path], 10)).returncode == 0
        if not exists and not await self._call(inside.has_command, body.path):
            return _text(f"Application/file not found: {body.path}", 404)
        opened = await self._call(inside.open_path, path if exists else body.path, OPEN_TIMEOUT)
        if opened.window is None:
            name = posixpath.basename(path) if exists else body.path
            return _text(f"Failed to find window for {name} within {OPEN_TIMEOUT:g} seconds.", 500)
        return _text("File opened and window activated successfully")

    async def activate_window(self, request: Request) -> Response:
        body = await _json(request, WindowBody)
        if not body.window_name:
            return _text("window_name required", 400)
        await self._call(inside.activate, body.window_name, body.strict, body.by_class, WINDOW_TIMEOUT)
        return _text("Window activated successfully")

    async def close_window(self, request: Request) -> Response:
        body = await _json(request, WindowBody)
        if body.window_name is None:
            return _text("window_name required", 400)
        await self._call(inside.close, body.window_name, body.strict, body.by_class)
        return _text("Window closed successfully.")

    async def change_wallpaper(self, request: Request) -> Response:
        body = await _json(request, PathBody)
        if not body.path:
            return _text("Path not supplied!", 400)
        path = desktop_path(body.path, self.home)
        if (await self._call(_run, ["test", "-e", path], 10)).returncode != 0:
            return _text(f"File not found: {path}", 404)
        ran = await self._call(_run, ["gsettings", "set", "org.gnome.desktop.background", "picture-uri",
                                      f"file://{path}"], 30)
        if ran.returncode != 0:
            return _text(f"Failed to change wallpaper. Error: {ran.stderr.strip()[:2000]}", 500)
        return _text("Wallpaper changed successfully")

    # -- recording ------------------------------------------------------------------------------
    async def start_recording(self, request: Request) -> Response:
        return await run_in_threadpool(self._start_recording)

    def _start_recording(self) -> Response:
        with self._recording_lock:
            if self._recording is not None:
                return error_response(400, "Recording is already in progress.")
            if self._recordings is None:
                self._recordings = tempfile.TemporaryDirectory(prefix="vdesk-osworld-recording-")
            path = Path(self._recordings.name) / f"recording-{secrets.token_hex(4)}.mp4"
            recording = self.desktop.screen.record(path)
            recording.__enter__()
            self._recording = (recording, path)
        return JSONResponse({"status": "success", "message": "Started recording successfully."})

    async def end_recording(self, request: Request) -> Response:
        return await run_in_threadpool(self._end_recording)

    def _end_recording(self) -> Response:
        with self._recording_lock:
            recording, self._recording = self._recording, None
        if recording is None:
            return error_response(400, "No recording in progress to stop.")
        context, path = recording
        context.__exit__(None, None, None)
        if not path.is_file() or path.stat().st_size == 0:
            return error_response(500, "Recording failed. The output file is missing or empty.")
        return FileResponse(path, media_type="video/mp4", filename="recording.mp4",
                            background=BackgroundTask(path.unlink, missing_ok=True))


# -- what the endpoints do in the desktop ------------------------------------------------------------
def _run(desktop: Desktop, argv: list[str], timeout: float) -> inside.Ran:
    return inside.run(desktop, argv, timeout)


def _run_program(desktop: Desktop, argv: list[str], timeout: float) -> inside.Ran:
    """``argv`` run from the home folder and waited for; :class:`CommandFailed` when its program
    is not there (the reference's ``FileNotFoundError``)."""
    try:
        done = desktop.programs.run(["sh", "-c", EXEC_SCRIPT, "sh", *argv], wait=True, timeout=timeout)
    except DesktopTimeout:
        raise DesktopTimeout(f"Command {argv!r} timed out after {timeout:g} seconds") from None
    if done.returncode == 127 and done.stderr.startswith(NOT_FOUND_MARK):
        raise CommandFailed(f"[Errno 2] No such file or directory: {argv[0]!r}")
    return inside.Ran(done.returncode, done.stdout, done.stderr)


def _launch(desktop: Desktop, argv: list[str], shell: bool) -> None:
    if not shell and argv[0] == "google-chrome" and not inside.has_command(desktop, "google-chrome"):
        argv = ["chromium", *argv[1:]]  # the apps image's browser, as the reference does on ARM
    if not inside.has_command(desktop, argv[0]):
        raise CommandFailed(f"[Errno 2] No such file or directory: {argv[0]!r}")
    inside.start(desktop, argv)


def _run_file(desktop: Desktop, interpreter: list[str], code: str, suffix: str, timeout: float,
              folder: str, merge: bool) -> inside.Ran:
    """``code`` written to a file in the desktop's /tmp and run by ``interpreter`` in ``folder``
    (stderr into stdout with ``merge``); the file is removed after."""
    path = f"/tmp/vdesk-osworld-{secrets.token_hex(8)}.{suffix}"
    desktop.files.write_file(path, code.encode())
    script = 'cd -- "$1" || exit 1; shift; ' + ('exec "$@" 2>&1' if merge else 'exec "$@"')
    try:
        done = desktop.programs.run(["sh", "-c", script, "sh", folder, *interpreter, path], wait=True, timeout=timeout)
    finally:
        desktop.programs.run(["rm", "-f", path], wait=True, timeout=10)
    return inside.Ran(done.returncode, done.stdout, done.stderr)


def _verify(desktop: Desktop, window: str | None, command: str | None, wait: float, every: float) -> float | None:
    """Seconds until the window shows and the command succeeds, or None after ``wait``."""
    started = time.monotonic()
    while True:
        shown = window is None or bool(inside.find_windows(desktop, window, False, False))
        passed = command is None or _succeeds(desktop, command)
        if shown and passed:
            return time.monotonic() - started
        if time.monotonic() - started + every > wait:
            return None
        time.sleep(every)


def _succeeds(desktop: Desktop, command: str) -> bool:
    try:
        return inside.run(desktop, ["sh", "-c", command], VERIFY_COMMAND_TIMEOUT).returncode == 0
    except DesktopTimeout:
        return False


def _read_file(desktop: Desktop, path: str) -> bytes:
    return desktop.files.read_file(path, limit=FILE_LIMIT)


def _wallpaper_path(desktop: Desktop) -> str | None:
    ran = inside.run(desktop, ["gsettings", "get", "org.gnome.desktop.background", "picture-uri"], 30)
    path = ran.stdout.strip().replace("file://", "").replace("'", "")
    return path if ran.returncode == 0 and path else None

