"""Files in and out of a desktop: upload, download, read_file, write_file (``vdesk cp``).

Bulk data travels on an exec session of its own (``tar`` inside the desktop, its archive
streamed through the engine), never on the command channel: it works with no network, on a
remote engine, and moves ~100 MB/s here. The engine's archive API cannot be used: it sees neither
the desktop's tmpfs home nor /tmp, and refuses to write to a read-only root. Only the home
folder (``~``) and ``/tmp`` are writable.

What comes out of a desktop is untrusted. Every archive member is checked before anything is
written: an absolute name, a ``..``, a symlink or hardlink pointing outside the destination,
a device or fifo, more than ``max_entries`` members or more than ``limit`` bytes in all is
refused with :class:`~vdesk.errors.TooLarge` or :class:`~vdesk.errors.CommandFailed` naming
it. A download is unpacked into a hidden folder beside the destination and moved into place
only when all of it passed, so a refused one leaves nothing behind.

Going in, the same: an upload or ``write_file`` is unpacked into a hidden folder beside its
destination and renamed into place, so one that fails part-way leaves nothing. Its size is
first compared with the room the desktop's filesystem has left there (both are 512 MiB
tmpfs), and what does not fit is refused with :class:`~vdesk.errors.TooLarge` naming both.
Neither direction merges into or replaces a folder.

Bounds (raise them with the arguments of the same names): ``read_file`` keeps at most
:data:`READ_LIMIT` bytes; ``download`` at most :data:`DOWNLOAD_LIMIT` bytes in
:data:`MAX_ENTRIES` members; each call ends within ``timeout``.
"""

from __future__ import annotations

import contextlib
import io
import os
import posixpath
import queue
import re
import secrets
import shutil
import stat
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import docker

from vdesk.channel import Channel
from vdesk.errors import CommandFailed, DesktopTimeout, InvalidArgument, TooLarge, VdeskError
from vdesk.execstream import ExecStream
from vdesk.guard import Guard, guarded

HOME = "/home/desk"
READ_LIMIT = 256 << 20
DOWNLOAD_LIMIT = 1 << 30
MAX_ENTRIES = 100_000
TRANSFER_TIMEOUT = 120.0
CHUNKS_HELD = 64  # chunks of a download waiting to be unpacked: bounds memory, slows the sender
STDERR_KEPT = 4096


def remote_path(path: str) -> str:
    """A desktop path made absolute: ``~`` and relative paths are in the desktop user's home."""
    if not isinstance(path, str) or not path or "\0" in path:
        raise InvalidArgument(f"invalid desktop path {path!r}")
    if path == "~" or path.startswith("~/"):
        path = HOME + path[1:]
    elif not path.startswith("/"):
        path = f"{HOME}/{path}"
    normal = posixpath.normpath(path)
    return "/" if normal == "//" else normal


def split_desktop_path(argument: str) -> tuple[str, str] | None:
    """``"NAME:~/out.pdf"`` → ``("NAME", "~/out.pdf")``; ``None`` for a local path (one that
    starts with ``/`` or ``.``, or has no ``:`` before its first ``/``), as ``docker cp`` reads them."""
    if argument.startswith(("/", ".")) or ":" not in argument.split("/", 1)[0]:
        return None
    name, path = argument.split(":", 1)
    return name, path or "~"


class Files:
    """File transfers of one desktop. Each call runs its own ``tar`` in the desktop, through the
    desktop's guard (a stopped desktop raises DesktopGone)."""

    def __init__(self, api: docker.APIClient, container_id: str, name: str, channel: Channel, guard: Guard) -> None:
        self._guard = guard
        self._api = api
        self._container_id = container_id
        self._name = name
        self._channel = channel

    # -- out ----------------------------------------------------------------------------------
    @guarded
    def read_file(self, path: str, *, limit: int = READ_LIMIT, timeout: float = TRANSFER_TIMEOUT) -> bytes:
        """The bytes of one regular file in the desktop (symlinks followed inside the desktop);
        :class:`TooLarge` past ``limit`` bytes."""
        source = remote_path(path)
        parent, base = posixpath.split(source)
        with self._outgoing(path, ["tar", "--dereference", "-C", parent or "/", "-cf", "-", "--", base], timeout) as tar:
            first = tar.next()
            if first is None:
                raise self._not_read(path, tar.error())
            if not first.isreg():
                raise CommandFailed(f"desktop {self._name}: {source} is not a regular file ({_kind(first)})")
            if first.size > limit:
                raise TooLarge(f"{source} in desktop {self._name} is {first.size} bytes, over the limit of "
                               f"{limit}: pass limit= to read more, or download() it")
            reader = tar.extractfile(first)
            assert reader is not None
            return reader.read()

    @guarded
    def download(self, remote: str, local: str | os.PathLike[str], *, limit: int = DOWNLOAD_LIMIT,
                 max_entries: int = MAX_ENTRIES, timeout: float = TRANSFER_TIMEOUT) -> Path:
        """Copy a file or folder out of the desktop, as ``docker cp`` does: into ``local`` when
        it is a folder, else to that name. Returns the path written."""
        source = remote_path(remote)
        parent, base = posixpath.split(source)
        if not base:
            raise InvalidArgument("cannot download the desktop's root folder")
        target = _local_target(os.fspath(local), base)
        staging = Path(tempfile.mkdtemp(prefix=".vdesk-cp-", dir=target.parent))
        try:
            with self._outgoing(remote, ["tar", "-C", parent or "/", "-cf", "-", "--", base], timeout) as tar:
                if not _unpack(tar, staging, base, limit, max_entries):
                    raise self._not_read(remote, tar.error())
            unpacked = staging / base
            if target.is_dir() and not target.is_symlink():
                what = "folder" if unpacked.is_dir() else "file"
                raise InvalidArgument(f"{target} already exists: cannot put the {what} {self._name}:{remote} over that folder")
            if unpacked.is_dir() and target.exists():
                raise InvalidArgument(f"cannot copy the folder {self._name}:{remote} onto the file {target}")
            try:
                os.replace(unpacked, target)
            except OSError as error:
                raise InvalidArgument(f"cannot put {source} at {target}: {error.strerror}") from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return target

    # -- in -----------------------------------------------------------------------------------
    @guarded
    def write_file(self, path: str, data: bytes, *, timeout: float = TRANSFER_TIMEOUT) -> None:
        """Write ``data`` to a file in the desktop (made or replaced, mode 0644)."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise InvalidArgument(f"data must be bytes, got {type(data).__name__}")
        target = remote_path(path)

        def add(archive: tarfile.TarFile) -> None:
            member = tarfile.TarInfo(posixpath.basename(target))
            member.size, member.mode, member.mtime = len(data), 0o644, int(time.time())
            archive.addfile(member, _BytesReader(bytes(data)))
        self._put(target, target, [len(data)], add, timeout)

    @guarded
    def upload(self, local: str | os.PathLike[str], remote: str, *, timeout: float = TRANSFER_TIMEOUT) -> str:
        """Copy a local file or folder into the desktop, as ``docker cp`` does: into ``remote``
        when it is a folder there (or ends with ``/``), else to that name. Returns the path written."""
        local = Path(local)
        if not local.exists():
            raise InvalidArgument(f"no local file {local}")
        target = remote_path(remote)
        shown = f"{self._name}:{remote}"
        kind = self._kind(target)
        if kind == "folder":
            target = posixpath.join(target, local.name)
            shown = f"{self._name}:{target}"
            kind = self._kind(target)
        elif remote.endswith("/"):  # as docker cp: a folder named so must exist
            raise InvalidArgument(f"{shown}: {'not a folder' if kind == 'file' else 'no such folder'} in the desktop")
        elif kind == "no parent":
            raise InvalidArgument(f"{shown}: no folder {posixpath.dirname(target)} in the desktop")
        if kind == "folder":  # as the download: never merged into, never replaced
            what = "folder" if local.is_dir() else "file"
            raise InvalidArgument(f"{shown} already exists: cannot put the {what} {local} over that folder")
        if kind == "file" and local.is_dir():
            raise InvalidArgument(f"cannot copy the folder {local} onto the file {shown}")
        base = posixpath.basename(target)
        self._put(target, str(local), _sizes(local),
                  lambda archive: archive.add(str(local), arcname=base), timeout)
        return target

    @guarded
    def unpack(self, archive: bytes, folder: str, *, timeout: float = TRANSFER_TIMEOUT) -> None:
        """Unpack a tar ``archive`` made on this side into ``folder`` of the desktop (made if
        missing): its regular files and folders, never links or devices."""
        target = remote_path(folder)
        self._channel.run(["mkdir", "-p", "--", target], timeout=10).check()
        with tarfile.open(fileobj=io.BytesIO(archive)) as source:
            sizes = [member.size for member in source if member.isreg()]
        room = self._room(target, f"the archive for {target}", sizes)

        def add(out: tarfile.TarFile) -> None:
            with tarfile.open(fileobj=io.BytesIO(archive)) as source:
                for member in source:
                    if member.isreg():
                        out.addfile(member, source.extractfile(member))
                    elif member.isdir():
                        out.addfile(member)
        self._send(target, add, timeout, room, f"the archive for {target}", left="what fitted is left there")

    def _kind(self, path: str) -> str:
        """``folder``, ``file`` (anything else there), ``missing`` or ``no parent``: one
        request, the path passed as an argument (never into the script)."""
        done = self._channel.run(["sh", "-c", _KIND_SCRIPT, "sh", path, posixpath.dirname(path) or "/"], timeout=10)
        return done.stdout.strip() or "missing"

    def _outgoing(self, remote: str, argv: list[str], timeout: float) -> _Outgoing:
        return _Outgoing(self, argv, timeout, nothing=lambda tar_error: self._not_read(remote, tar_error))

    def _not_read(self, remote: str, tar_error: str) -> VdeskError:
        """Why nothing came out of ``remote``, in vdesk's words when the desktop can say."""
        shown = f"{self._name}:{remote}"
        kind = self._kind(remote_path(remote))
        if kind in ("missing", "no parent"):
            return CommandFailed(f"{shown}: no such file in the desktop")
        if "Permission denied" in tar_error:
            return CommandFailed(f"{shown}: permission denied in the desktop (it runs as user desk)")
        return CommandFailed(f"{shown}: cannot read it in the desktop: {tar_error.removeprefix('tar: ')}")

    def _put(self, target: str, what: str, sizes: list[int], fill: Callable[[tarfile.TarFile], None],
             timeout: float) -> None:
        """Write ``what`` (the files of ``sizes``, archived by ``fill`` under ``target``'s name) to
        ``target``: into a hidden folder beside it first, then renamed into place, so that a write
        that fails or is interrupted leaves nothing, and a file it replaces is replaced whole."""
        parent, base = posixpath.split(target)
        room = self._room(parent, what, sizes)
        staging = posixpath.join(parent, f".vdesk-cp-{secrets.token_hex(6)}")
        self._in_folder(parent, ["mkdir", "-m", "700", "--", staging])
        try:
            self._send(staging, fill, timeout, room, what, left="nothing of it was kept")
            self._in_folder(parent, ["mv", "-T", "--", posixpath.join(staging, base), target])
        finally:
            with contextlib.suppress(VdeskError):  # a desktop gone took the folder with it
                self._channel.run(["rm", "-rf", "--", staging], timeout=TRANSFER_TIMEOUT)

    def _room(self, folder: str, what: str, sizes: list[int]) -> _Room | None:
        """The room a write of the files of ``sizes`` has in ``folder``'s filesystem, when the
        desktop says it; :class:`TooLarge`, before anything is written, when they do not fit."""
        done = self._channel.run(["stat", "-f", "-c", "%S %b %a", "--", folder], timeout=10)
        room = _Room.read(folder, done.stdout, sizes) if done.returncode == 0 else None
        if room is not None and room.needed > room.free:
            raise TooLarge(f"desktop {self._name}: {what} needs {_size(room.needed)}, but {room.place} "
                           f"({_size(room.size)}) has {_size(room.free)} free: nothing was written")
        return room

    def _in_folder(self, folder: str, argv: list[str]) -> None:
        done = self._channel.run(argv, timeout=30)
        if done.returncode != 0:
            raise self._not_written(folder, done.stderr.strip() or f"{argv[0]} exited with {done.returncode}")

    def _not_written(self, folder: str, reason: str) -> CommandFailed:
        hint = " (only ~ and /tmp are writable)" if "Read-only" in reason else ""
        return CommandFailed(f"desktop {self._name}: writing into {folder} failed{hint}: {reason}")

    def _send(self, folder: str, fill: Callable[[tarfile.TarFile], None], timeout: float,
              room: _Room | None, what: str, *, left: str) -> None:
        """Unpack what ``fill`` archives (``what``) into ``folder``: :class:`TooLarge` when
        ``room``'s filesystem fills up meanwhile, saying what is ``left`` of it then."""
        errors = _Kept()
        done = threading.Event()
        stream = ExecStream(self._api, self._container_id, ["tar", "-C", folder, "-xf", "-"],
                            on_data=lambda _: None, on_stderr=errors.add, on_close=done.set,
                            label=self._name)
        try:
            with tarfile.open(fileobj=_StreamWriter(stream), mode="w|", format=tarfile.PAX_FORMAT) as archive:
                fill(archive)
            stream.finish_input()
            if not done.wait(timeout):
                raise DesktopTimeout(f"desktop {self._name}: writing into {folder} did not end within {timeout:g} s")
        finally:
            stream.close()
        code = stream.exit_code()
        if code == 0:
            return
        if room is not None and _NO_SPACE.search(errors.text()):
            raise TooLarge(f"desktop {self._name}: {room.place} ({_size(room.size)}) filled up while {what} "
                           f"({_size(room.needed)}) was written, {_size(room.free)} were free before: {left}")
        raise self._not_written(folder, errors.text().strip() or f"tar exited with {code}")


# -- unpacking untrusted archives --------------------------------------------------------------
def _unpack(tar: _Outgoing, root: Path, top: str, limit: int, max_entries: int) -> int:
    """Unpack members one by one into ``root``, refusing anything that could leave it; returns
    how many there were (0: nothing came out)."""
    total = count = 0
    seen_files: set[str] = set()
    while (member := tar.next()) is not None:
        count += 1
        if count > max_entries:
            raise TooLarge(f"the archive has more than {max_entries} entries: pass max_entries= to allow more")
        name = _safe_name(member.name, top)
        if member.isreg():
            total += member.size
            if total > limit:
                raise TooLarge(f"{member.name} takes the download past its limit of {limit} bytes "
                               f"({member.size} bytes): pass limit= to allow more")
        _write_member(tar, member, root, name, seen_files)
    return count


def _safe_name(name: str, top: str) -> str:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts:
        raise CommandFailed(f"refused archive member {name!r}: its name leaves the destination")
    if not path.parts or path.parts[0] != top:
        raise CommandFailed(f"refused archive member {name!r}: it is not under {top!r}")
    return str(path)


def _within(root: Path, path: Path) -> bool:
    """Whether ``path``, with every symlink already written resolved, stays inside ``root``."""
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top + os.sep)


def _write_member(tar: _Outgoing, member: tarfile.TarInfo, root: Path, name: str, seen_files: set[str]) -> None:
    destination = root / name
    if not _within(root, destination.parent):
        raise CommandFailed(f"refused archive member {member.name!r}: it would be written through a "
                            "symlink outside the destination")
    if member.isdir():
        if destination.is_symlink():
            raise CommandFailed(f"refused archive member {member.name!r}: a folder over a symlink")
        destination.mkdir(mode=0o755, exist_ok=True)
    elif member.isreg():
        source = tar.extractfile(member)
        assert source is not None
        with open(destination, "xb") as out:  # never through or over something already there
            shutil.copyfileobj(source, out, 1 << 20)
        os.chmod(destination, member.mode & 0o755)
        seen_files.add(name)
    elif member.issym():
        if member.linkname.startswith("/") or not _within(root, destination.parent / member.linkname):
            raise CommandFailed(f"refused symlink {member.name!r} -> {member.linkname!r}: it points outside the destination")
        os.symlink(member.linkname, destination)
    elif member.islnk():
        target = posixpath.normpath(member.linkname)
        if target not in seen_files:
            raise CommandFailed(f"refused hardlink {member.name!r} -> {member.linkname!r}: "
                                "it points outside what was copied")
        os.link(root / target, destination, follow_symlinks=False)
        seen_files.add(name)
    else:
        raise CommandFailed(f"refused archive member {member.name!r}: it is a {_kind(member)}")


def _kind(member: tarfile.TarInfo) -> str:
    for test, kind in ((member.isdir, "folder"), (member.issym, "symlink"), (member.islnk, "hardlink"),
                       (member.ischr, "character device"), (member.isblk, "block device"), (member.isfifo, "fifo")):
        if test():
            return kind
    return "special file"


def _local_target(text: str, base: str) -> Path:
    """Where a download of ``base`` goes for the destination ``text``, as ``docker cp`` has it:
    into an existing folder; a name ending in ``/`` must be one; else that name, in a folder
    that exists."""
    local = Path(text)
    if local.is_dir():
        return local / base
    if text.endswith(("/", os.sep)):
        raise InvalidArgument(f"{text}: {'not a folder' if local.exists() else 'no such folder'}")
    if not local.parent.is_dir():
        raise InvalidArgument(f"{text}: no folder {local.parent}")
    return local


@dataclass(frozen=True)
class _Room:
    """The room a write has in a desktop's filesystem: its size and free bytes, as the desktop
    says them, and what the write needs there (tmpfs gives each file whole blocks)."""

    place: str
    size: int
    free: int
    needed: int

    @classmethod
    def read(cls, folder: str, answer: str, sizes: list[int]) -> _Room | None:
        """From the desktop's ``stat -f -c '%S %b %a'`` (block size, blocks, blocks free);
        None for anything but three such numbers (what comes out of a desktop is untrusted)."""
        match = re.fullmatch(r"([0-9]{1,9}) ([0-9]{1,15}) ([0-9]{1,15})\n?", answer)
        if match is None or int(match[1]) == 0:
            return None
        block, blocks, free = (int(number) for number in match.groups())
        needed = sum(-(-size // block) * block for size in sizes)
        return cls(_place(folder), blocks * block, free * block, needed)


def _place(folder: str) -> str:
    for top, place in ((HOME, "the desktop's home"), ("/tmp", "the desktop's /tmp")):
        if folder == top or folder.startswith(top + "/"):
            return place
    return f"the filesystem of {folder} in the desktop"


def _size(count: int) -> str:
    if count < 1 << 20:
        return f"{count / 1024:.0f} KiB"
    return f"{count / (1 << 20):.1f}".removesuffix(".0") + " MiB"


def _sizes(local: Path) -> list[int]:
    """The sizes of the regular files an upload of ``local`` archives (links as links, each
    file once however many names it has)."""
    if local.is_symlink():
        return []
    if not local.is_dir():
        return [local.stat().st_size]
    seen: dict[tuple[int, int], int] = {}
    for folder, _, names in os.walk(local):
        for name in names:
            status = os.lstat(os.path.join(folder, name))
            if stat.S_ISREG(status.st_mode):
                seen[(status.st_dev, status.st_ino)] = status.st_size
    return list(seen.values())


# tar's words when the filesystem it writes to is full (a short write, or ENOSPC itself)
_NO_SPACE = re.compile(r"No space left on device|Wrote only \d+ of \d+ bytes")

# What a desktop path is, for upload's docker cp rules: $1 the path, $2 its folder.
_KIND_SCRIPT = ('if [ -d "$1" ]; then echo folder; elif [ -e "$1" ] || [ -L "$1" ]; then echo file; '
                'elif [ -d "$2" ]; then echo missing; else echo "no parent"; fi')


# -- streams -----------------------------------------------------------------------------------
def _nothing_came(tar_error: str) -> VdeskError:
    return CommandFailed(f"nothing came out of the desktop: {tar_error}")


class _Outgoing:
    """``argv`` (a tar writing to stdout) in the desktop, read as a stream of archive members."""

    def __init__(self, files: Files, argv: list[str], timeout: float,
                 nothing: Callable[[str], VdeskError] | None = None) -> None:
        """``nothing(tar's stderr)`` is the error to raise when no archive came at all."""
        self._deadline = time.monotonic() + timeout
        self._timeout = timeout
        self._name = files._name
        self._chunks: queue.Queue[bytes | None] = queue.Queue(maxsize=CHUNKS_HELD)
        self._errors = _Kept()
        self._pending = b""
        self._at_end = False
        self._abandoned = threading.Event()  # set when we stop reading: the reader must not wait
        self._stream = ExecStream(files._api, files._container_id, argv, on_data=self._put,
                                  on_stderr=self._errors.add, on_close=self._end, label=files._name, stdin=False)
        try:
            self._archive = tarfile.open(fileobj=self, mode="r|", bufsize=1 << 20)  # type: ignore[call-overload]
        except tarfile.ReadError:
            self.__exit__()
            raise (nothing or _nothing_came)(self.error()) from None

    def __enter__(self) -> _Outgoing:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._abandoned.set()
        self._stream.close()  # tar inside sees a broken pipe and stops

    def next(self) -> tarfile.TarInfo | None:
        try:
            return self._archive.next()
        except tarfile.ReadError as error:
            raise CommandFailed(f"desktop {self._name}: the archive that came out is broken ({error}): "
                                f"{self.error()}") from None

    def extractfile(self, member: tarfile.TarInfo):  # type: ignore[no-untyped-def]
        return self._archive.extractfile(member)

    def error(self) -> str:
        return self._errors.text().strip() or "tar gave no reason"

    # the file-like face tarfile reads from
    def read(self, size: int = -1) -> bytes:
        parts, have = [self._pending], len(self._pending)
        while (size < 0 or have < size) and not self._at_end:
            remaining = self._deadline - time.monotonic()
            try:
                chunk = self._chunks.get(timeout=max(0.0, remaining))
            except queue.Empty:
                raise DesktopTimeout(f"desktop {self._name}: the copy did not end within {self._timeout:g} s") from None
            if chunk is None:
                self._at_end = True
                break
            parts.append(chunk)
            have += len(chunk)
        data = b"".join(parts)
        if size < 0:
            size = len(data)
        self._pending = data[size:]
        return data[:size]

    def _put(self, data: bytes) -> None:
        while not self._abandoned.is_set():
            try:
                self._chunks.put(data, timeout=0.5)
                return
            except queue.Full:
                continue

    def _end(self) -> None:
        self._put(None)  # type: ignore[arg-type]


class _StreamWriter:
    """The file-like face of an exec session's stdin, for tarfile to write to."""

    def __init__(self, stream: ExecStream) -> None:
        self._stream = stream

    def write(self, data: bytes) -> int:
        self._stream.send(bytes(data))
        return len(data)


class _BytesReader:
    def __init__(self, data: bytes) -> None:
        self._data, self._at = memoryview(data), 0

    def read(self, size: int = -1) -> bytes:
        end = len(self._data) if size < 0 else self._at + size
        chunk = self._data[self._at:end]
        self._at += len(chunk)
        return bytes(chunk)


class _Kept:
    """The first few KiB of a program's stderr."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._size = 0

    def add(self, data: bytes) -> None:
        if self._size < STDERR_KEPT:
            self._parts.append(data[:STDERR_KEPT - self._size])
            self._size += len(self._parts[-1])

    def text(self) -> str:
        return b"".join(self._parts).decode(errors="replace")
