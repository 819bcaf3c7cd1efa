#!/usr/bin/python3
"""vdesk-channel: the in-container end of vdesk's persistent exec session.

Modes:
  vdesk-channel          serve requests: one JSON object per line on stdin, one reply per
                         line on stdout. Requests carry argument lists, never shell strings.
  vdesk-channel lease    hold the desktop's lease: block on stdin; when it closes (the host
                         process that opened it went away, however it died) stop the desktop.

Request:  {"id": 1, "argv": ["xdotool", "click", "1"], "stdin": null, "timeout": 10,
           "mode": "wait", "limit": 1048576}
Reply:    {"id": 1, "rc": 0, "stdout": "...", "stderr": "...", "stdout_bytes": 3,
           "stderr_bytes": 0, "timed_out": false}

Modes of a request:
  wait     run it, answer with its exit code and the first ``limit`` bytes of each output
           (``*_bytes`` say how much came; the rest is read and thrown away, so a flood
           neither fills memory nor blocks the program).
  detach   start it in its own session and answer at once; it outlives the channel.
  outlive  like wait, but in its own session with its output discarded: for programs that
           fork a server that must outlive the controller (xclip owning the clipboard).

Commands of the wait mode belong to the channel while they run: each runs in its own process
group, and when the channel's stdin closes (its controller went away, however it died) or the
channel is told to stop, every such group still running is killed, and so is a group whose
command timed out. A command that ended by itself leaves what it started in the background
running, as a shell does (``echo hi | xclip`` leaves xclip's server owning the clipboard). A
command that fails does not harm the channel.

Input batches: the controller sends pointer and key input over X, not through here, but it
brackets each batch with notes that get no reply, ``{"input": "begin"}`` and, once every event
of the batch went, ``{"input": "end"}``; a batch that stopped short asks
``{"id": 2, "input": "release"}`` instead, answered once every key and button held in the
desktop is up. When the channel's stdin closes with a batch begun and not ended (its controller
died in the middle of one, SIGKILL included), the channel lets go of them itself: a key held
down would otherwise stay down for every later program and controller.
"""
import json
import os
import signal
import shutil
import subprocess
import sys
import threading

CHUNK = 65536
DEFAULT_LIMIT = 1 << 20
LEFTOVER_WAIT = 0.2  # how long to wait for children that keep a finished command's pipes open

_groups = set()  # process groups of running wait-mode commands
_batches = 0  # input batches begun and not ended: keys or buttons may be held down for them
_groups_lock = threading.Lock()
_write_lock = threading.Lock()


class Capped:
    """Reads a pipe to its end, keeping the first ``limit`` bytes and counting all of them."""

    def __init__(self, pipe, limit):
        self.kept = bytearray()
        self.total = 0
        self._pipe, self._limit = pipe, limit
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        try:
            while chunk := os.read(self._pipe.fileno(), CHUNK):
                self.total += len(chunk)
                room = self._limit - len(self.kept)
                if room > 0:
                    self.kept += chunk[:room]
        except (OSError, ValueError):
            pass

    def text(self):
        return self.kept.decode("utf-8", errors="replace")


def _kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _group_alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _feed(pipe, data):
    try:
        pipe.write(data)
    except (BrokenPipeError, OSError):
        pass  # the program exited without reading all of it
    finally:
        try:
            pipe.close()
        except OSError:
            pass


def run_waited(argv, stdin, timeout, limit):
    data = stdin.encode() if stdin is not None else None  # before starting: it may not encode
    # The kernel kills the command if this channel itself is killed (setpriv --pdeathsig);
    # the process group catches what it started.
    process = subprocess.Popen(["setpriv", "--pdeathsig", "KILL", "--", *argv],
                               stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    with _groups_lock:
        _groups.add(process.pid)
    out, err = Capped(process.stdout, limit), Capped(process.stderr, limit)
    if data is not None:
        threading.Thread(target=_feed, args=(process.stdin, data), daemon=True).start()
    timed_out = False
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(process.pid)
        process.wait()
        try:
            release_input()
        except Exception:
            pass
    for reader in (out, err):
        reader.thread.join(LEFTOVER_WAIT)  # children that outlive it may hold the pipes: stop reading
    with _groups_lock:
        # Ended by itself, what it left running in the background is not the channel's to end
        # (a shell's `cmd &`, xclip's server); timed out, its whole group was killed above.
        _groups.discard(process.pid)
    for reader, pipe in ((out, process.stdout), (err, process.stderr)):
        if not reader.thread.is_alive():  # else its reader still uses it, until the children end
            pipe.close()
    rc = 124 if timed_out else process.returncode
    stderr = f"timed out after {timeout} s" if timed_out and not err.total else err.text()
    return {"rc": rc, "stdout": out.text(), "stderr": stderr, "stdout_bytes": out.total,
            "stderr_bytes": err.total, "timed_out": timed_out}


def run_outliving(argv, stdin, timeout):
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    _feed(process.stdin, (stdin or "").encode())
    try:
        rc = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process.pid)
        return {"rc": 124, "stdout": "", "stderr": f"timed out after {timeout} s", "timed_out": True}
    return {"rc": rc, "stdout": "", "stderr": ""}


def run(request):
    argv = request["argv"]
    if not argv or not all(isinstance(arg, str) for arg in argv):
        return {"rc": 2, "stdout": "", "stderr": "argv must be a non-empty list of strings"}
    if shutil.which(argv[0]) is None:
        return {"rc": 127, "stdout": "", "stderr": f"{argv[0]}: command not found"}
    mode = request.get("mode") or ("detach" if request.get("detach") else "wait")
    if mode == "detach":
        # setsid -f forks, so the program is reaped by the container's init, not by us.
        subprocess.run(["setsid", "-f", *argv], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        return {"rc": 0, "stdout": "", "stderr": ""}
    if mode == "outlive":
        return run_outliving(argv, request.get("stdin"), request.get("timeout"))
    return run_waited(argv, request.get("stdin"), request.get("timeout"),
                      int(request.get("limit") or DEFAULT_LIMIT))


def answer(request):
    try:
        reply = run(request)
    except Exception as error:  # a bad request must not end the channel
        reply = {"rc": 2, "stdout": "", "stderr": f"bad request: {error}"}
    write_reply(reply, request.get("id"))


def write_reply(reply, request_id):
    reply["id"] = request_id
    line = json.dumps(reply, ensure_ascii=False) + "\n"
    with _write_lock:
        try:
            sys.stdout.write(line)
            sys.stdout.flush()
        except (BrokenPipeError, OSError):
            pass


def take_input_note(request):
    """An input batch's note (see the module's docstring), handled in the order it came: before
    the end of stdin that may follow it."""
    global _batches
    kind = request.get("input")
    if kind == "begin":
        _batches += 1
        return
    _batches = max(0, _batches - 1)
    if kind == "end":
        return
    if kind != "release":
        reply = {"rc": 2, "stdout": "", "stderr": f"bad request: unknown input note {kind!r}"}
    else:
        try:
            release_input()
            reply = {"rc": 0, "stdout": "", "stderr": ""}
        except Exception as error:  # the X server may be gone
            reply = {"rc": 1, "stdout": "", "stderr": f"releasing the input failed: {error}"}
    if "id" in request:
        write_reply(reply, request["id"])


def release_input():
    """Let go of every key and button still held: an xdotool killed between a key's press and
    its release would leave it down, and the X server would repeat it into the focused window."""
    import ctypes  # only here: a channel that never kills a command never loads libX11
    try:
        x11, xtst = ctypes.CDLL("libX11.so.6"), ctypes.CDLL("libXtst.so.6")
    except OSError:
        return
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    display = x11.XOpenDisplay(None)
    if not display:
        return
    x11.XQueryKeymap.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    xtst.XTestFakeKeyEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]
    xtst.XTestFakeButtonEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]
    x11.XFlush.argtypes = x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    keys = ctypes.create_string_buffer(32)
    x11.XQueryKeymap(display, keys)
    for keycode in range(8, 256):
        if keys.raw[keycode // 8] & (1 << (keycode % 8)):
            xtst.XTestFakeKeyEvent(display, keycode, 0, 0)
    x11.XDefaultRootWindow.restype = ctypes.c_ulong
    x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
    window, number, mask = ctypes.c_ulong(), ctypes.c_int(), ctypes.c_uint()
    x11.XQueryPointer(ctypes.c_void_p(display), ctypes.c_ulong(x11.XDefaultRootWindow(display)),
                      ctypes.byref(window), ctypes.byref(window), *(ctypes.byref(number) for _ in range(4)),
                      ctypes.byref(mask))
    for button in range(1, 6):
        if mask.value & (1 << (7 + button)):  # Button1Mask is 1 << 8
            xtst.XTestFakeButtonEvent(display, button, 0, 0)
    x11.XFlush(display)
    x11.XCloseDisplay(display)


def stop_everything(*_):
    # From here on no reply goes out: the commands below are killed, not finished, and the
    # controller must see the channel close under them (a reply written while the keys are
    # released would report a killed command as done, and its next request would be lost).
    # Not waited on for ever: a reply being written now finishes first.
    _write_lock.acquire(timeout=1)
    with _groups_lock:
        groups = [pgid for pgid in _groups if _group_alive(pgid)]
    for pgid in groups:
        _kill_group(pgid)
    if groups or _batches:  # a killed xdotool, or a controller gone in the middle of a batch
        try:
            release_input()
        except Exception:
            pass  # the X server may be gone too
    os._exit(0)


def serve():
    signal.signal(signal.SIGTERM, stop_everything)
    signal.signal(signal.SIGHUP, stop_everything)
    for line in sys.stdin:
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError("a request is a JSON object")
        except ValueError as error:
            answer({"argv": None, "bad": str(error)})
            continue
        if "input" in request:
            take_input_note(request)
            continue
        threading.Thread(target=answer, args=(request,), daemon=True).start()
    stop_everything()  # stdin closed: the controller is gone


def hold_lease():
    sys.stdout.write("leased\n")
    sys.stdout.flush()
    while sys.stdin.buffer.read(4096):
        pass
    os.kill(1, signal.SIGTERM)


if __name__ == "__main__":
    hold_lease() if sys.argv[1:] == ["lease"] else serve()
