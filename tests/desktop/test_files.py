"""Files in and out of a real desktop: byte for byte, docker cp's shape, hostile trees refused."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from vdesk.desktop import Desktop
from vdesk.errors import CommandFailed, InvalidArgument, TooLarge
from vdesk.files import _Outgoing, _unpack

VDESK = str(Path(sys.executable).parent / "vdesk")


def test_binary_files_round_trip_byte_for_byte(shared_desktop: Desktop, tmp_path: Path) -> None:
    data = os.urandom(3_000_000) + bytes(range(256)) + b"\r\n\0"
    shared_desktop.files.write_file("~/binary.bin", data)
    assert shared_desktop.programs.run(["stat", "-c", "%s", "/home/desk/binary.bin"], wait=True).stdout.strip() == str(len(data))
    assert shared_desktop.files.read_file("~/binary.bin") == data
    assert shared_desktop.files.download("~/binary.bin", tmp_path).read_bytes() == data
    assert shared_desktop.files.read_file("/tmp/../home/desk/binary.bin") == data


def test_folders_go_in_and_out_like_docker_cp(shared_desktop: Desktop, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "é 你好.txt").write_text("unicode name\n")
    (tree / "top.bin").write_bytes(b"\0\1\2")
    assert shared_desktop.files.upload(tree, "/tmp/") == "/tmp/tree"
    assert shared_desktop.files.read_file("/tmp/tree/sub/é 你好.txt") == b"unicode name\n"
    out = tmp_path / "out"
    out.mkdir()
    copied = shared_desktop.files.download("/tmp/tree", out)
    assert copied == out / "tree"
    assert (copied / "sub" / "é 你好.txt").read_text() == "unicode name\n"
    assert (copied / "top.bin").read_bytes() == b"\0\1\2"
    renamed = shared_desktop.files.download("/tmp/tree/top.bin", tmp_path / "renamed.bin")
    assert renamed.read_bytes() == b"\0\1\2"


def test_vdesk_cp_copies_both_ways(shared_desktop: Desktop, tmp_path: Path) -> None:
    source = tmp_path / "report.xlsx"
    source.write_bytes(os.urandom(100_000))
    up = subprocess.run([VDESK, "cp", str(source), f"{shared_desktop.name}:~/"], capture_output=True, text=True, timeout=60)
    assert up.returncode == 0, up.stderr
    assert up.stdout.strip() == f"{shared_desktop.name}:/home/desk/report.xlsx"
    back = tmp_path / "back"
    back.mkdir()
    down = subprocess.run([VDESK, "cp", f"{shared_desktop.name}:~/report.xlsx", "."], cwd=back,
                          capture_output=True, text=True, timeout=60)
    assert down.returncode == 0, down.stderr
    assert (back / "report.xlsx").read_bytes() == source.read_bytes()
    both = subprocess.run([VDESK, "cp", str(source), str(back)], capture_output=True, text=True, timeout=60)
    assert both.returncode == 2 and "exactly one of SOURCE and DESTINATION" in both.stderr


def test_the_read_only_root_is_named(shared_desktop: Desktop) -> None:
    with pytest.raises(CommandFailed, match=r"only ~ and /tmp are writable"):
        shared_desktop.files.write_file("/etc/vdesk-test", b"x")
    with pytest.raises(InvalidArgument):
        shared_desktop.files.write_file("~/x", "not bytes")  # type: ignore[arg-type]


# -- hostile files made inside the desktop -----------------------------------------------------
def test_a_symlink_to_etc_passwd_is_refused_and_nothing_is_written(shared_desktop: Desktop, tmp_path: Path) -> None:
    shared_desktop.programs.run(["sh", "-c", "rm -rf /tmp/evil && mkdir -p /tmp/evil && echo ok > /tmp/evil/a && "
                        "ln -s /etc/passwd /tmp/evil/passwd"], wait=True).check()
    with pytest.raises(CommandFailed, match=r"refused symlink 'evil/passwd' -> '/etc/passwd'"):
        shared_desktop.files.download("/tmp/evil", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_symlink_climbing_out_and_a_device_are_refused(shared_desktop: Desktop, tmp_path: Path) -> None:
    shared_desktop.programs.run(["sh", "-c", "rm -rf /tmp/climb && mkdir -p /tmp/climb/d && "
                        "ln -s ../../../../etc /tmp/climb/d/up"], wait=True).check()
    with pytest.raises(CommandFailed, match="points outside the destination"):
        shared_desktop.files.download("/tmp/climb", tmp_path)
    with pytest.raises(CommandFailed, match="character device"):
        shared_desktop.files.download("/dev/null", tmp_path)
    with pytest.raises(CommandFailed, match="not a regular file"):
        shared_desktop.files.read_file("/tmp/climb")
    assert list(tmp_path.iterdir()) == []


def test_odd_names_made_in_the_desktop_arrive_as_they_are(shared_desktop: Desktop, tmp_path: Path) -> None:
    names = ["...", "..a", "-rf", "a\\b", "new\nline", " space"]
    script = 'rm -rf /tmp/odd && mkdir /tmp/odd && for n in "$@"; do echo "$n" > "/tmp/odd/$n"; done'
    shared_desktop.programs.run(["sh", "-c", script, "sh", *names], wait=True).check()
    copied = shared_desktop.files.download("/tmp/odd", tmp_path)
    assert sorted(p.name for p in copied.iterdir()) == sorted(names)


def _hostile_archive(*members: tuple[tarfile.TarInfo, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for member, data in members:
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
    return buffer.getvalue()


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.type, member.linkname = kind, link
    return member


@pytest.mark.parametrize(("members", "refusal"), [
    ([(_member("top/../../escape"), b"x")], "leaves the destination"),
    ([(_member("/etc/escape"), b"x")], "leaves the destination"),
    ([(_member("top", tarfile.DIRTYPE), b""), (_member("top/h", tarfile.LNKTYPE, "/etc/passwd"), b"")],
     "refused hardlink"),
    ([(_member("top", tarfile.DIRTYPE), b""), (_member("top/a", tarfile.SYMTYPE, ".."), b""),
      (_member("top/a/x", tarfile.SYMTYPE, "../.."), b"")], "points outside"),
    ([(_member("top", tarfile.DIRTYPE), b""), (_member("top/dev", tarfile.CHRTYPE), b"")], "character device"),
    ([(_member("other"), b"x")], "not under 'top'"),
], ids=["dotdot", "absolute", "hardlink-out", "symlink-chain", "device", "outside-top"])
def test_hostile_archives_streamed_from_a_desktop_are_refused(shared_desktop: Desktop, tmp_path: Path,
                                                              members, refusal) -> None:  # type: ignore[no-untyped-def]
    """Archives a compromised desktop could send, made here and streamed out of a real one."""
    shared_desktop.files.write_file("/tmp/hostile.tar", _hostile_archive(*members))
    staging = tmp_path / "staging"
    staging.mkdir()
    with _Outgoing(shared_desktop.files, ["cat", "/tmp/hostile.tar"], 30) as tar, \
            pytest.raises(CommandFailed, match=refusal):
        _unpack(tar, staging, "top", 1 << 20, 100)
    assert not (tmp_path / "escape").exists() and not Path("/etc/escape").exists()
    assert not any(p.is_symlink() and not os.path.realpath(p).startswith(str(tmp_path))
                   for p in staging.rglob("*"))


def cp(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([VDESK, "cp", *args], capture_output=True, text=True, timeout=60, cwd=cwd)


def test_vdesk_cp_out_follows_docker_cps_rules_for_the_destination(shared_desktop: Desktop, tmp_path: Path) -> None:
    name = shared_desktop.name
    shared_desktop.files.write_file("~/cp-rules.txt", b"rules\n")
    missing_folder = cp(f"{name}:~/cp-rules.txt", "./out/", cwd=tmp_path)
    assert missing_folder.returncode == 2 and missing_folder.stderr == "vdesk: ./out/: no such folder\n"
    assert list(tmp_path.iterdir()) == []  # no file named out
    no_parent = cp(f"{name}:~/cp-rules.txt", "./out/x.txt", cwd=tmp_path)
    assert no_parent.returncode == 2 and no_parent.stderr == "vdesk: ./out/x.txt: no folder out\n"
    (tmp_path / "out").mkdir()
    into = cp(f"{name}:~/cp-rules.txt", "./out/", cwd=tmp_path)
    assert into.returncode == 0, into.stderr
    assert (tmp_path / "out" / "cp-rules.txt").read_text() == "rules\n"
    (tmp_path / "file").write_text("old")
    not_folder = cp(f"{name}:~/cp-rules.txt", "./file/", cwd=tmp_path)
    assert not_folder.returncode == 2 and not_folder.stderr == "vdesk: ./file/: not a folder\n"
    over = cp(f"{name}:~/cp-rules.txt", "./file", cwd=tmp_path)  # an existing file is replaced
    assert over.returncode == 0 and (tmp_path / "file").read_text() == "rules\n"
    shared_desktop.programs.run(["mkdir", "-p", "/tmp/cp-tree/sub"], wait=True).check()
    onto_file = cp(f"{name}:/tmp/cp-tree", "./file", cwd=tmp_path)
    assert onto_file.returncode == 2 and f"cannot copy the folder {name}:/tmp/cp-tree onto the file file" in onto_file.stderr
    assert (tmp_path / "file").read_text() == "rules\n" and not list(tmp_path.glob(".vdesk-cp-*"))


def test_vdesk_cp_in_follows_the_same_rules(shared_desktop: Desktop, tmp_path: Path) -> None:
    name = shared_desktop.name
    shared_desktop.programs.run(["rm", "-rf", "/tmp/cp-in"], wait=True).check()
    source = tmp_path / "data.csv"
    source.write_text("a,b\n")
    missing_folder = cp(str(source), f"{name}:/tmp/cp-in/")
    assert missing_folder.returncode == 2 and missing_folder.stderr == f"vdesk: {name}:/tmp/cp-in/: no such folder in the desktop\n"
    no_parent = cp(str(source), f"{name}:/tmp/cp-in/x.csv")
    assert no_parent.returncode == 2 and no_parent.stderr == f"vdesk: {name}:/tmp/cp-in/x.csv: no folder /tmp/cp-in in the desktop\n"
    named = cp(str(source), f"{name}:/tmp/cp-in.csv")
    assert named.returncode == 0 and shared_desktop.files.read_file("/tmp/cp-in.csv") == b"a,b\n"
    not_folder = cp(str(source), f"{name}:/tmp/cp-in.csv/")
    assert not_folder.returncode == 2 and "/tmp/cp-in.csv/: not a folder in the desktop" in not_folder.stderr
    onto_file = cp(str(tmp_path), f"{name}:/tmp/cp-in.csv")
    assert onto_file.returncode == 2 and f"cannot copy the folder {tmp_path} onto the file {name}:/tmp/cp-in.csv" in onto_file.stderr
    shared_desktop.programs.run(["mkdir", "/tmp/cp-in"], wait=True).check()
    into = cp(str(source), f"{name}:/tmp/cp-in")
    assert into.returncode == 0 and into.stdout.strip() == f"{name}:/tmp/cp-in/data.csv"


def _listing(desktop: Desktop, folder: str) -> str:
    return desktop.programs.run(["sh", "-c", 'cd "$1" && ls -A && cat */* 2>/dev/null', "sh", folder], wait=True).stdout


def test_vdesk_cp_in_never_merges_into_a_folder_of_the_same_name(shared_desktop: Desktop, tmp_path: Path) -> None:
    """As the download: a folder or file copied into a folder where a folder of its name is
    stays out, and nothing in the desktop changes; replacing it is removing it first."""
    name = shared_desktop.name
    local = tmp_path / "cp-same"
    local.mkdir()
    (local / "a.txt").write_text("from here\n")
    (local / "b.txt").write_text("only here\n")
    shared_desktop.programs.run(["sh", "-c", "rm -rf /tmp/cp-into && mkdir -p /tmp/cp-into/cp-same && "
                                 "echo edited inside > /tmp/cp-into/cp-same/a.txt && "
                                 "echo only inside > /tmp/cp-into/cp-same/c.txt"], wait=True).check()
    before = _listing(shared_desktop, "/tmp/cp-into")
    merged = cp(str(local), f"{name}:/tmp/cp-into/")
    assert merged.returncode == 2
    assert merged.stderr == (f"vdesk: {name}:/tmp/cp-into/cp-same already exists: "
                             f"cannot put the folder {local} over that folder\n")
    file_named_so = tmp_path / "file" / "cp-same"
    file_named_so.parent.mkdir()
    file_named_so.write_text("a file\n")
    over_folder = cp(str(file_named_so), f"{name}:/tmp/cp-into")
    assert over_folder.returncode == 2
    assert over_folder.stderr == (f"vdesk: {name}:/tmp/cp-into/cp-same already exists: "
                                  f"cannot put the file {file_named_so} over that folder\n")
    with pytest.raises(InvalidArgument, match="already exists: cannot put the folder"):
        shared_desktop.files.upload(local, "/tmp/cp-into")
    assert _listing(shared_desktop, "/tmp/cp-into") == before == "cp-same\nedited inside\nonly inside\n"

    shared_desktop.programs.run(["sh", "-c", "rm -r /tmp/cp-into/cp-same && echo a file > /tmp/cp-into/cp-same"],
                                wait=True).check()
    onto_file = cp(str(local), f"{name}:/tmp/cp-into/")
    assert onto_file.returncode == 2
    assert onto_file.stderr == f"vdesk: cannot copy the folder {local} onto the file {name}:/tmp/cp-into/cp-same\n"
    assert shared_desktop.files.read_file("/tmp/cp-into/cp-same") == b"a file\n"

    shared_desktop.programs.run(["rm", "/tmp/cp-into/cp-same"], wait=True).check()  # replacing on purpose
    replaced = cp(str(local), f"{name}:/tmp/cp-into/")
    assert replaced.returncode == 0, replaced.stderr
    assert _listing(shared_desktop, "/tmp/cp-into") == "cp-same\nfrom here\nonly here\n"


def _sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as out:
        out.truncate(size)  # no room taken here; the desktop's tmpfs stores every byte
    return path


def test_an_upload_past_the_room_left_is_refused_and_names_the_limit(shared_desktop: Desktop, tmp_path: Path) -> None:
    name = shared_desktop.name
    big = _sparse(tmp_path / "big.bin", 600 << 20)
    shared_desktop.programs.run(["mkdir", "-p", "/home/desk/cp-room", "/tmp/cp-room"], wait=True).check()
    for folder, place in (("~/cp-room", "home"), ("/tmp/cp-room", "/tmp")):
        refused = cp(str(big), f"{name}:{folder}")
        assert refused.returncode == 2
        assert re.fullmatch(rf"vdesk: desktop {name}: {big} needs 600 MiB, but the desktop's {place} \(512 MiB\) "
                            r"has [\d.]+ MiB free: nothing was written\n", refused.stderr), refused.stderr
        assert _listing(shared_desktop, folder) == ""
    with pytest.raises(TooLarge, match=r"needs 600 MiB, but the desktop's /tmp \(512 MiB\) has"):
        shared_desktop.files.upload(big, "/tmp/cp-room/")


# A program of the desktop that takes all but 50 MiB of $1's filesystem once something appears in
# $1: an upload there runs out of room after it was found to fit.
_FILL_WHEN_WRITTEN = """
for i in $(seq 3000); do
    if [ -n "$(ls -A "$1")" ]; then
        exec fallocate -l $(( $(stat -f -c '%a*%S' "$1") - (50 << 20) )) "$2"
    fi
    sleep 0.01
done
"""


def test_an_upload_that_runs_out_of_room_leaves_nothing_written(tmp_path: Path) -> None:
    with Desktop.up() as desktop:  # its /tmp is filled: of its own
        desktop.programs.run(["mkdir", "/tmp/race"], wait=True).check()
        desktop.programs.run(["sh", "-c", _FILL_WHEN_WRITTEN, "sh", "/tmp/race", "/tmp/filler"])
        big = _sparse(tmp_path / "big.bin", 300 << 20)
        failed = cp(str(big), f"{desktop.name}:/tmp/race/")
        assert failed.returncode == 2
        assert re.fullmatch(rf"vdesk: desktop {desktop.name}: the desktop's /tmp \(512 MiB\) filled up while {big} "
                            r"\(300 MiB\) was written, [\d.]+ MiB were free before: nothing of it was kept\n",
                            failed.stderr), failed.stderr
        assert _listing(desktop, "/tmp/race") == ""
        free = int(desktop.programs.run(["sh", "-c", "echo $(( $(stat -f -c '%a*%S' /tmp) ))"], wait=True).stdout)
        with pytest.raises(TooLarge, match=r"/tmp/race/w.bin needs [\d.]+ MiB, but the desktop's /tmp \(512 MiB\) has "
                                           r"[\d.]+ MiB free: nothing was written"):
            desktop.files.write_file("/tmp/race/w.bin", bytes(free + (1 << 20)))
        assert _listing(desktop, "/tmp/race") == ""


def test_what_is_not_in_the_desktop_is_said_in_vdesks_words(shared_desktop: Desktop, tmp_path: Path) -> None:
    name = shared_desktop.name
    missing = cp(f"{name}:~/nonexist.txt", str(tmp_path))
    assert missing.returncode == 2 and missing.stderr == f"vdesk: {name}:~/nonexist.txt: no such file in the desktop\n"
    no_folder = cp(f"{name}:~/no-such-folder/x.txt", str(tmp_path))
    assert no_folder.stderr == f"vdesk: {name}:~/no-such-folder/x.txt: no such file in the desktop\n"
    shared_desktop.programs.run(["sh", "-c", "echo x > /tmp/secret && chmod 000 /tmp/secret"], wait=True).check()
    with pytest.raises(CommandFailed, match=f"^{name}:/tmp/secret: permission denied in the desktop"):
        shared_desktop.files.read_file("/tmp/secret")
    assert list(tmp_path.iterdir()) == []
