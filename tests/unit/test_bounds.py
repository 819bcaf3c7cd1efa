"""Bounds on what comes out of a desktop, in pure logic: the channel's reply framing, paths,
hostile archives, and a VNC server announcing a framebuffer larger than the desktop."""

from __future__ import annotations

import io
import json
import queue
import socket
import struct
import tarfile
import tempfile
import threading
from pathlib import Path

import pytest

from vdesk.channel import OUTPUT_LIMIT, Completed, ReplyLines
from vdesk.errors import CommandFailed, TooLarge, VdeskError
from vdesk.files import _Room, _unpack, remote_path, split_desktop_path
from vdesk.frames import LiveFramebuffer


class _Stream:
    closed = False

    def close(self) -> None:
        self.closed = True


def _lines(cap: int = 1 << 20) -> tuple[ReplyLines, queue.Queue[object], _Stream]:
    replies: queue.Queue[object] = queue.Queue()
    lines = ReplyLines(replies, "test")
    lines.cap, lines.stream = cap, _Stream()  # type: ignore[assignment]
    return lines, replies, lines.stream  # type: ignore[return-value]


def test_replies_split_across_chunks_are_put_back_together() -> None:
    lines, replies, _ = _lines()
    data = (json.dumps({"id": 1, "stdout": "a" * 100_000}) + "\n" + json.dumps({"id": 2}) + "\n").encode()
    for start in range(0, len(data), 777):
        lines.feed(data[start:start + 777])
    assert replies.get_nowait()["stdout"] == "a" * 100_000  # type: ignore[index]
    assert replies.get_nowait() == {"id": 2}


def test_a_reply_past_its_bound_drops_the_channel_without_holding_it() -> None:
    lines, replies, stream = _lines(cap=10_000)
    for _ in range(100):
        lines.feed(b"x" * 1000)
    why = replies.get_nowait()
    assert isinstance(why, str) and "over 10000 bytes" in why and stream.closed
    assert replies.empty()


def test_a_reply_that_is_not_json_drops_the_channel() -> None:
    lines, replies, stream = _lines()
    lines.feed(b"garbage\n")
    assert "not JSON" in str(replies.get_nowait()) and stream.closed


def test_a_cut_output_says_how_much_came() -> None:
    done = Completed(("yes",), 0, "y", "", stdout_bytes=5 * OUTPUT_LIMIT)
    assert done.cut and done.cut_note == f"output cut: kept the first {OUTPUT_LIMIT} of {5 * OUTPUT_LIMIT} bytes of stdout"
    assert not Completed(("true",), 0, "", "").cut


@pytest.mark.parametrize(("argument", "parsed"), [
    ("NAME:~/", ("NAME", "~/")), ("vdesk-1a2b:/tmp/x", ("vdesk-1a2b", "/tmp/x")), ("NAME:", ("NAME", "~")),
    ("./a:b", None), ("/abs/a:b", None), ("file.xlsx", None), ("dir/a:b", None),
])
def test_desktop_paths_are_read_as_docker_cp_reads_them(argument: str, parsed) -> None:  # type: ignore[no-untyped-def]
    assert split_desktop_path(argument) == parsed


def test_remote_paths_are_made_absolute_in_the_home() -> None:
    assert remote_path("~") == "/home/desk"
    assert remote_path("~/a/../b") == "/home/desk/b"
    assert remote_path("out.pdf") == "/home/desk/out.pdf"
    assert remote_path("/tmp/x/") == "/tmp/x"


def _archive(*members: tuple[str, bytes, bytes, str]) -> tarfile.TarFile:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, kind, data, link in members:
            member = tarfile.TarInfo(name)
            member.type, member.linkname, member.size = kind, link, len(data)
            archive.addfile(member, io.BytesIO(data))
    buffer.seek(0)
    return tarfile.open(fileobj=buffer, mode="r|")


def _unpacks(archive: tarfile.TarFile, limit: int = 1 << 20, entries: int = 100) -> Path:
    root = Path(tempfile.mkdtemp())
    _unpack(archive, root, "top", limit, entries)  # type: ignore[arg-type]
    return root


def test_a_safe_tree_unpacks_with_its_links() -> None:
    root = _unpacks(_archive(("top", tarfile.DIRTYPE, b"", ""), ("top/a", tarfile.REGTYPE, b"data", ""),
                             ("top/l", tarfile.SYMTYPE, b"", "a"), ("top/h", tarfile.LNKTYPE, b"", "top/a")))
    assert (root / "top" / "l").read_bytes() == b"data" and (root / "top" / "h").read_bytes() == b"data"


@pytest.mark.parametrize(("members", "refusal"), [
    ([("top/../x", tarfile.REGTYPE, b"x", "")], "leaves the destination"),
    ([("/x", tarfile.REGTYPE, b"x", "")], "leaves the destination"),
    ([("top", tarfile.SYMTYPE, b"", "/etc")], "points outside"),
    ([("top", tarfile.DIRTYPE, b"", ""), ("top/a", tarfile.SYMTYPE, b"", ".."),
      ("top/a/x", tarfile.SYMTYPE, b"", "../..")], "points outside"),
    ([("top", tarfile.DIRTYPE, b"", ""), ("top/a", tarfile.SYMTYPE, b"", "."),
      ("top/a", tarfile.REGTYPE, b"x", "")], "File exists|symlink"),
    ([("top", tarfile.DIRTYPE, b"", ""), ("top/h", tarfile.LNKTYPE, b"", "/etc/passwd")], "hardlink"),
    ([("top", tarfile.FIFOTYPE, b"", "")], "fifo"),
    ([("top", tarfile.BLKTYPE, b"", "")], "block device"),
])
def test_hostile_members_are_refused(members, refusal) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises((CommandFailed, FileExistsError), match=refusal):
        _unpacks(_archive(*members))


def test_size_and_count_bounds() -> None:
    with pytest.raises(TooLarge, match="limit of 10 bytes"):
        _unpacks(_archive(("top", tarfile.REGTYPE, b"x" * 11, "")), limit=10)
    with pytest.raises(TooLarge, match="more than 2 entries"):
        _unpacks(_archive(("top", tarfile.DIRTYPE, b"", ""), ("top/a", tarfile.REGTYPE, b"", ""),
                          ("top/b", tarfile.REGTYPE, b"", "")), entries=2)


@pytest.mark.parametrize("answer", ["", "4096 131072\n", "0 131072 5\n", "4096 131072 -5\n", "4096 1e9 5\n",
                                    "4096 131072 5\n0 0 0\n", "9" * 40 + " 1 1\n", "4096\t131072\t5\n", "٤٠٩٦ 131072 5\n"])
def test_a_filesystems_room_is_read_only_from_three_plain_numbers(answer: str) -> None:
    assert _Room.read("/tmp", answer, [1]) is None


def test_the_room_a_write_needs_is_its_files_in_whole_blocks() -> None:
    room = _Room.read("/home/desk/x", "4096 131072 100\n", [0, 1, 4096, 4097])
    assert room == _Room("the desktop's home", 512 << 20, 409_600, 4096 * 4)


def test_a_framebuffer_larger_than_the_desktop_is_refused(tmp_path: Path) -> None:
    """A VNC server (one a hostile desktop could start) announcing 65535x65535 pixels."""
    path = str(tmp_path / "vnc")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(1)

    def serve() -> None:
        conn, _ = listener.accept()
        conn.sendall(b"RFB 003.008\n")
        conn.recv(12)
        conn.sendall(bytes([1, 1]))  # one security type: none
        conn.recv(1)
        conn.sendall(struct.pack("!I", 0))
        conn.recv(1)  # ClientInit
        pixel_format = struct.pack("!BBBBHHHBBBxxx", 32, 24, 0, 1, 255, 255, 255, 16, 8, 0)
        conn.sendall(struct.pack("!HH", 65535, 65535) + pixel_format + struct.pack("!I", 4) + b"evil")
        conn.recv(1024)
        conn.close()

    threading.Thread(target=serve, daemon=True).start()
    frames = LiveFramebuffer(path, "password", "hostile", max_size=(1280, 800))
    with pytest.raises(VdeskError, match="refused a framebuffer 65535x65535, larger than the desktop's 1280x800"):
        frames.connect(timeout=10)
    frames.close()
    listener.close()


def test_the_command_lines_output_bounds_are_the_channels() -> None:
    """`vdesk run --max-output` spells the channel's bounds itself (its help loads no Docker library)."""
    from vdesk.channel import MAX_OUTPUT_LIMIT
    from vdesk.cli.drive import DEFAULT_OUTPUT, MAX_OUTPUT, MAX_OUTPUT_BYTES, _output_limit

    assert MAX_OUTPUT_BYTES == MAX_OUTPUT_LIMIT == _output_limit(MAX_OUTPUT)
    assert _output_limit(DEFAULT_OUTPUT) == OUTPUT_LIMIT and _output_limit("5MB") == 5_000_000
