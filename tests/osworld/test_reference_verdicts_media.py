"""vdesk's metrics on media, pages and the media player give OSWorld's own verdicts: each case is
scored by both (tests/osworld/reference.py) on inputs built here — MP3s with and without ID3
tags, HTML pages, PDFs holding pictures, VLC's status XML and vlcrc files, screen and window
sizes, VS Code settings — right answers, near misses, wrong ones, missing and damaged files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.osworld.reference import Case, assert_same_verdicts, vdesk_scores, write_file as _write



def _mp3(path: Path, tags: dict[str, str | list[str]] | None) -> str:
    """Ten silent MPEG-1 Layer III frames (128 kbit/s, 44.1 kHz: 417 bytes each), with ``tags``
    written as ID3 by mutagen (none: no ID3 tag at all)."""
    pytest.importorskip("mutagen")
    from mutagen.easyid3 import EasyID3

    frame = bytes([0xFF, 0xFB, 0x90, 0x64]) + bytes(413)
    path.write_bytes(frame * 10)
    if tags is not None:
        tagged = EasyID3()
        for key, value in tags.items():
            tagged[key] = value
        tagged.save(str(path))
    return str(path)


def test_check_mp3_meta(tmp_path: Path) -> None:
    rule = {"title": {"method": "eq", "ref": "Missing You"}, "artist": {"method": "eq", "ref": "Cheng Xiang"}}
    assert_same_verdicts([
        Case("check_mp3_meta", _mp3(tmp_path / "right.mp3", {"title": "Missing You", "artist": "Cheng Xiang"}), rule,
             label="right"),
        Case("check_mp3_meta", _mp3(tmp_path / "swapped.mp3", {"title": "Cheng Xiang", "artist": "Missing You"}), rule,
             label="swapped"),
        Case("check_mp3_meta", _mp3(tmp_path / "title.mp3", {"title": "Missing You"}), rule, label="artist missing"),
        Case("check_mp3_meta", _mp3(tmp_path / "space.mp3", {"title": "Missing You ", "artist": "Cheng Xiang"}), rule,
             label="trailing space"),
        Case("check_mp3_meta", _mp3(tmp_path / "two.mp3", {"title": "Missing You", "artist": ["Cheng", "Xiang"]}),
             {"artist": {"method": "eq", "ref": "Cheng,Xiang"}}, label="two artists joined"),
        Case("check_mp3_meta", _mp3(tmp_path / "re.mp3", {"title": "Missing You (live)", "artist": "Cheng Xiang"}),
             {"title": {"method": "re", "ref": "^Missing You"}}, label="by pattern"),
        Case("check_mp3_meta", _mp3(tmp_path / "bare.mp3", None), rule, label="no ID3 tag"),
        Case("check_mp3_meta", _write(tmp_path / "text.mp3", "not audio"), rule, label="not an MP3"),
        Case("check_mp3_meta", str(tmp_path / "missing.mp3"), rule, label="missing"),
        Case("check_mp3_meta", None, rule, label="none"),
    ])


PAGE = ("<html><head><title>Survey</title></head><body><table>"
        "<tr><td sdnum=\"1033;0;0\">Year</td><td>Value</td></tr><tr><td>2021</td><td>{value}</td></tr>"
        "</table>{extra}</body></html>")


def test_compare_htmls(tmp_path: Path) -> None:
    gold = _write(tmp_path / "gold.html", PAGE.format(value="42", extra=""))

    def page(name: str, html: str) -> str:
        return _write(tmp_path / name, html)

    same = page("same.html", PAGE.format(value="42", extra=""))
    assert_same_verdicts([
        Case("compare_htmls", same, gold, label="same"),
        Case("compare_htmls", page("value.html", PAGE.format(value="43", extra="")), gold, label="one value differs"),
        Case("compare_htmls", page("spaces.html", PAGE.format(value=" 42 ", extra="")), gold, label="spaces in a cell"),
        Case("compare_htmls", page("more.html", PAGE.format(value="42", extra="<p>after</p>")), gold,
             label="more after the end"),
        Case("compare_htmls", page("crlf.html", PAGE.format(value="42", extra="").replace("<tr>", "\r\n<tr>")),
             page("lf.html", PAGE.format(value="42", extra="").replace("<tr>", "\n<tr>")), label="CRLF against LF"),
        Case("compare_htmls", page("sdnum.html", PAGE.format(value="42", extra="").replace("1033;0;0", "1031;0;0")),
             gold, label="sdnum differs"),
        Case("compare_htmls", page("sdnum2.html", PAGE.format(value="42", extra="").replace("1033;0;0", "1031;0;0")),
             gold, {"ignore_sdnum": True}, label="sdnum differs, ignored"),
        Case("compare_htmls", page("class.html", PAGE.format(value="42", extra="").replace("<table>", "<table class=a>")),
             gold, {"ignore_sdnum": True}, label="another attribute, sdnum ignored"),
        Case("compare_htmls", page("tag.html", PAGE.format(value="42", extra="").replace("<td>Value", "<th>Value")),
             gold, label="another tag"),
        Case("compare_htmls", _write(tmp_path / "latin.html", PAGE.format(value="é", extra="").encode("latin-1")), gold,
             label="not UTF-8"),
        Case("compare_htmls", page("empty.html", ""), gold, label="empty page"),
    ])


def _pdf(path: Path, pictures: list[Any]) -> str:
    """A PDF of one page per picture (Pillow writes each as an image XObject)."""
    from PIL import Image

    if not pictures:
        pictures = [Image.new("RGB", (10, 10), "white")]
        first = pictures[0]
        first.save(path, "PDF")  # a page that is a picture all the same; the no-picture PDF is below
        return str(path)
    pictures[0].save(path, "PDF", save_all=True, append_images=pictures[1:])
    return str(path)


def _picture(seed: int, mode: str = "RGB", size: tuple[int, int] = (64, 48)) -> Any:
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    pixels = (rng.random((size[1] // 8, size[0] // 8, 3)) * 255).astype("uint8")
    return Image.fromarray(pixels).resize(size, Image.Resampling.NEAREST).convert(mode)


def _blank_pdf(path: Path) -> str:
    import pypdf

    writer = pypdf.PdfWriter()
    writer.add_blank_page(200, 200)
    with open(path, "wb") as handle:
        writer.write(handle)
    return str(path)


def test_compare_pdf_images(tmp_path: Path) -> None:
    from PIL import ImageEnhance

    receipt, other = _picture(1), _picture(2)
    gold = _pdf(tmp_path / "gold.pdf", [receipt])
    two_gold = _pdf(tmp_path / "two_gold.pdf", [receipt, other])
    assert_same_verdicts([
        Case("compare_pdf_images", _pdf(tmp_path / "same.pdf", [receipt]), gold, label="same picture"),
        Case("compare_pdf_images", _pdf(tmp_path / "dim.pdf", [ImageEnhance.Brightness(receipt).enhance(0.97)]), gold,
             label="a little darker"),
        Case("compare_pdf_images", _pdf(tmp_path / "other.pdf", [other]), gold, label="another picture"),
        Case("compare_pdf_images", _pdf(tmp_path / "grey.pdf", [receipt.convert("L")]), gold, label="in grey"),
        Case("compare_pdf_images", _pdf(tmp_path / "palette.pdf", [receipt.convert("P")]), gold,
             label="in a palette (not JPEG)"),
        Case("compare_pdf_images", _pdf(tmp_path / "bw.pdf", [receipt.convert("1")]), gold, label="black and white"),
        Case("compare_pdf_images", _pdf(tmp_path / "big.pdf", [receipt.resize((128, 96))]), gold, label="scaled up"),
        Case("compare_pdf_images", _pdf(tmp_path / "two.pdf", [receipt, other]), gold, label="one picture too many"),
        Case("compare_pdf_images", _pdf(tmp_path / "half.pdf", [receipt, receipt]), two_gold, label="one of two right"),
        Case("compare_pdf_images", _pdf(tmp_path / "both.pdf", [receipt, other]), two_gold, label="both right"),
        Case("compare_pdf_images", _blank_pdf(tmp_path / "blank.pdf"), _blank_pdf(tmp_path / "blank_gold.pdf"),
             label="no pictures on either side"),
        Case("compare_pdf_images", _blank_pdf(tmp_path / "blank2.pdf"), gold, label="no picture"),
        Case("compare_pdf_images", _write(tmp_path / "text.pdf", "not a pdf"), gold, label="not a PDF"),
        Case("compare_pdf_images", str(tmp_path / "missing.pdf"), gold, label="missing"),
        Case("compare_pdf_images", None, gold, label="none"),
    ])


STATUS = """<?xml version="1.0" encoding="utf-8" standalone="yes" ?>
<root><fullscreen>false</fullscreen><volume>256</volume><state>{state}</state>
<information><category name="meta">{meta}</category>{streams}</information></root>"""


def _status(tmp_path: Path, name: str, state: str = "playing", streams: str = "", **meta: str) -> str:
    infos = "".join(f"<info name='{key}'>{value}</info>" for key, value in meta.items())
    return _write(tmp_path / name, STATUS.format(state=state, meta=infos, streams=streams))


def test_is_vlc_playing(tmp_path: Path) -> None:
    song = "Rick Astley - Never Gonna Give You Up (Official Music Video).mp4"
    by_name = {"type": "file_name", "file_name": song}
    url = "https://devstreaming-cdn.apple.com/videos/streaming/examples/img_bipbop_adv_example_fmp4/master.m3u8"
    by_url = {"type": "url", "url": url}
    stream = "<category name='Stream 0'><info name='Codec'>H264</info><info name='Type'>Video</info></category>"
    assert_same_verdicts([
        Case("is_vlc_playing", _status(tmp_path, "a.xml", filename=song), by_name, label="playing the file"),
        Case("is_vlc_playing", _status(tmp_path, "b.xml", state="paused", filename=song), by_name, label="paused"),
        Case("is_vlc_playing", _status(tmp_path, "c.xml", state="stopped"), by_name, label="stopped"),
        Case("is_vlc_playing", _status(tmp_path, "d.xml", filename="other.mp4"), by_name, label="another file"),
        Case("is_vlc_playing", _status(tmp_path, "e.xml", title="Never Gonna", uri=f"file:///home/user/Desktop/{song}"),
             by_name, label="title first, not the file"),
        Case("is_vlc_playing", _status(tmp_path, "f.xml", uri=f"file:///home/user/Desktop/{song}"), by_name,
             label="by its URI"),
        Case("is_vlc_playing", _status(tmp_path, "g.xml", filename=f"x{song}"), by_name, label="name ends with it"),
        Case("is_vlc_playing", _status(tmp_path, "h.xml"), by_name, label="nothing about the file"),
        Case("is_vlc_playing", _status(tmp_path, "i.xml", url=url), by_url, label="the URL"),
        Case("is_vlc_playing", _status(tmp_path, "j.xml", filename="master.m3u8"), by_url, label="the playlist's name"),
        Case("is_vlc_playing", _status(tmp_path, "k.xml", location=url.replace("master", "v5/prog_index")), by_url,
             label="same host, other path"),
        Case("is_vlc_playing", _status(tmp_path, "l.xml", location=url + "?t=1"), by_url, label="URL with a query"),
        Case("is_vlc_playing", _status(tmp_path, "m.xml", url="https://example.org/master.m3u8"), by_url,
             label="another host"),
        Case("is_vlc_playing", _status(tmp_path, "n.xml", streams=stream), by_url, label="only the stream's codec"),
        Case("is_vlc_playing", _status(tmp_path, "o.xml", state="paused", url=url), by_url, label="URL, paused"),
        Case("is_vlc_playing", _write(tmp_path / "p.xml", "<html>login</html>"), by_name, label="not a status"),
        Case("is_vlc_playing", _write(tmp_path / "q.xml", "not xml <"), by_url, label="not XML"),
    ])


def test_is_vlc_fullscreen() -> None:
    screen = {"width": 1920, "height": 1080}
    assert_same_verdicts([
        Case("is_vlc_fullscreen", screen, {"width": 1920, "height": 1080}, label="full screen"),
        Case("is_vlc_fullscreen", screen, {"width": 1920, "height": 1053}, label="maximised under a panel"),
        Case("is_vlc_fullscreen", screen, {"width": 800, "height": 600}, label="a window"),
        Case("is_vlc_fullscreen", screen, None, label="no window"),
        Case("is_vlc_fullscreen", None, {"width": 1920, "height": 1080}, label="no screen"),
    ])


VLCRC = "[qt] # Qt interface\n\n# Volume slider colours (string)\n{slider}\n\n[core]\n{play}\n"


def _vlcrc(tmp_path: Path, name: str, slider: str = "#qt-slider-colours=153;210;153;20;210;20;255;199;15;245;39;29",
           play: str = "#play-and-exit=0") -> str:
    return _write(tmp_path / name, VLCRC.format(slider=slider, play=play))


def test_check_qt_slider_colours(tmp_path: Path) -> None:
    black = "qt-slider-colours=0;0;0;20;20;20;40;40;40;60;60;60"
    blackish, match = {"type": "blackish"}, {"type": "match", "expected_qt_slider_colours": "0;0;0;20;20;20;40;40;40;60;60;60"}
    assert_same_verdicts([
        Case("check_qt_slider_colours", _vlcrc(tmp_path, "a"), blackish, label="default"),
        Case("check_qt_slider_colours", _vlcrc(tmp_path, "b", slider=black), blackish, label="black"),
        Case("check_qt_slider_colours", _vlcrc(tmp_path, "c", slider=black.replace("60;60;60", "60;100;60")), blackish,
             label="one channel at 100"),
        Case("check_qt_slider_colours", _vlcrc(tmp_path, "d", slider="#" + black), blackish,
             label="black, commented out"),
        Case("check_qt_slider_colours", _vlcrc(tmp_path, "e", slider="qt-slider-colours=0;0;x"), blackish,
             label="not numbers"),
        Case("check_qt_slider_colours", _vlcrc(tmp_path, "f", slider=black), match, label="match"),
        Case("check_qt_slider_colours", _vlcrc(tmp_path, "g", slider=black + " "), match, label="match, space"),
        Case("check_qt_slider_colours", _vlcrc(tmp_path, "h"), match, label="default, match"),
        Case("check_qt_slider_colours", _write(tmp_path / "i", ""), blackish, label="empty file: the default"),
    ])


def test_check_play_and_exit_reads_vlcrc_as_the_references_other_vlc_checks(tmp_path: Path) -> None:
    """The pinned reference lacks check_play_and_exit; its later source reads play-and-exit as
    its check_qt_minimal_view reads qt-minimal-view (the same default, 0). So each case is
    scored by vdesk's check_play_and_exit and by the reference's check_qt_minimal_view on the
    same file with the key renamed: the verdicts must agree."""
    cases = {"default": "#play-and-exit=0", "on": "play-and-exit=1", "off": "play-and-exit=0",
             "on, commented": "#play-and-exit=1", "spaces": "play-and-exit = 1 ", "twice": "play-and-exit=1\nplay-and-exit=0",
             "none": ""}
    ours, theirs = [], []
    for index, (label, line) in enumerate(cases.items()):
        for wanted in (0, 1, "1"):
            ours.append(Case("check_play_and_exit", _vlcrc(tmp_path, f"p{index}", play=line),
                             {"expected_play_and_exit": wanted}, label=f"{label} want {wanted!r}"))
            theirs.append(Case("check_qt_minimal_view",
                               _vlcrc(tmp_path, f"m{index}", play=line.replace("play-and-exit", "qt-minimal-view")),
                               {"expected_qt_minimal_view": wanted}, label=f"{label} want {wanted!r}"))
    from tests.osworld.reference import reference_scores
    got, want = vdesk_scores(ours), reference_scores(theirs)
    assert got == want, [(str(c), a, b) for c, a, b in zip(ours, got, want) if a != b]


def test_compare_config(tmp_path: Path) -> None:
    """Without ``containment_ok`` against the pinned reference; with it, the pinned reference
    ignores the option (exact text), so vdesk's verdicts follow OSWorld's later source, fixed
    here: the expected JSON contained in the file's."""
    wanted = {"expected": "{\"workbench.colorTheme\": \"Visual Studio Dark\"}\n"}
    exact = _write(tmp_path / "exact.json", wanted["expected"])
    indented = _write(tmp_path / "indented.json", "{\n    \"workbench.colorTheme\": \"Visual Studio Dark\",\n"
                                                  "    \"editor.fontSize\": 14\n}")
    other = _write(tmp_path / "other.json", "{\"workbench.colorTheme\": \"Default Light Modern\"}\n")
    jsonc = _write(tmp_path / "jsonc.json", "// mine\n{\"workbench.colorTheme\": \"Visual Studio Dark\"}\n")
    assert_same_verdicts([
        Case("compare_config", exact, wanted, label="exact text"),
        Case("compare_config", indented, wanted, label="indented, other keys"),
        Case("compare_config", other, wanted, label="another theme"),
        Case("compare_config", str(tmp_path / "missing.json"), wanted, label="missing"),
    ])
    contained = {"containment_ok": True}
    from vdesk.osworld.metrics import lookup
    metric = lookup("compare_config")
    assert [metric(path, wanted, **contained) for path in (exact, indented, other, jsonc)] == [1.0, 1.0, 0.0, 1.0]
    assert metric(str(tmp_path / "missing.json"), wanted, **contained) == 0.0
    assert metric(indented, {"expected": "{\"editor.fontSize\": 14, \"x\": 1}"}, **contained) == 0.0


def _video(path: Path, frames: int, flip: bool = False, shade: int = 0, seed: int = 3) -> str:
    """``frames`` frames of moving blocks (64x48, H.264 by the ffmpeg imageio-ffmpeg ships)."""
    import imageio_ffmpeg
    import numpy as np

    rng = np.random.default_rng(seed)
    base = (rng.random((6, 8, 3)) * 200).astype("uint8").repeat(8, axis=0).repeat(8, axis=1)
    writer = imageio_ffmpeg.write_frames(str(path), (64, 48), fps=10, macro_block_size=16, quality=8)
    writer.send(None)
    for index in range(frames):
        frame = np.roll(base, index, axis=1).astype(int) + shade
        frame = frame[::-1] if flip else frame
        writer.send(np.ascontiguousarray(np.clip(frame, 0, 255).astype("uint8")))
    writer.close()
    return str(path)


def test_compare_videos(tmp_path: Path) -> None:
    gold = _video(tmp_path / "gold.mp4", 30)
    long_gold = _video(tmp_path / "long_gold.mp4", 110)
    assert_same_verdicts([
        Case("compare_videos", _video(tmp_path / "same.mp4", 30), gold, label="same"),
        Case("compare_videos", _video(tmp_path / "flipped.mp4", 30, flip=True), gold, label="upside down"),
        Case("compare_videos", _video(tmp_path / "flipped_back.mp4", 30, flip=True),
             _video(tmp_path / "flipped_gold.mp4", 30, flip=True), label="both upside down"),
        Case("compare_videos", _video(tmp_path / "brighter.mp4", 30, shade=6), gold, label="a little brighter"),
        Case("compare_videos", _video(tmp_path / "other.mp4", 30, seed=9), gold, label="other content"),
        Case("compare_videos", _video(tmp_path / "shorter.mp4", 29), gold, label="a frame short"),
        Case("compare_videos", _video(tmp_path / "longer.mp4", 120), long_gold, label="same 100 first frames"),
        Case("compare_videos", _write(tmp_path / "text.mp4", "not a video"), gold, label="not a video"),
        Case("compare_videos", str(tmp_path / "missing.mp4"), gold, label="missing"),
        Case("compare_videos", str(tmp_path / "missing.mp4"), str(tmp_path / "missing2.mp4"), label="both missing"),
    ])


RATE = 16_000   # samples a second of the test's recordings: librosa resamples them to its 22 050


def _wav(path: Path, tones: list[tuple[float, float]], gain: float = 0.5, noise: float = 0.0,
         silence: float = 0.0) -> str:
    """A mono 16-bit WAV: ``silence`` seconds of nothing, then each ``(frequency, seconds)`` tone
    in turn at ``gain``, with white ``noise`` of that amplitude over all of it (seeded)."""
    import wave

    import numpy as np

    parts = [np.zeros(int(silence * RATE))]
    for frequency, seconds in tones:
        parts.append(gain * np.sin(2 * np.pi * frequency * np.arange(int(seconds * RATE)) / RATE))
    samples = np.concatenate(parts) + noise * np.random.default_rng(5).standard_normal(sum(map(len, parts)))
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(RATE)
        out.writeframes((np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes())
    return str(path)


def _mp3_of(wav: str, path: Path) -> str:
    """``wav`` encoded as MP3 (LAME, 64 kbit/s) by the ffmpeg imageio-ffmpeg ships."""
    import subprocess

    import imageio_ffmpeg

    subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-loglevel", "error", "-y", "-i", wav,
                    "-codec:a", "libmp3lame", "-b:a", "64k", str(path)], check=True, timeout=60)
    return str(path)


def test_compare_audios(tmp_path: Path) -> None:
    melody = [(440.0, 0.6), (660.0, 0.6), (550.0, 0.8)]
    gold = _wav(tmp_path / "gold.wav", melody)
    empty = _wav(tmp_path / "empty.wav", [])
    cases = [
        Case("compare_audios", _wav(tmp_path / "same.wav", melody), gold, label="same"),
        Case("compare_audios", _wav(tmp_path / "louder.wav", melody, gain=0.9), gold, label="louder"),
        Case("compare_audios", _wav(tmp_path / "late.wav", melody, silence=0.4), gold, label="starts later"),
        Case("compare_audios", _wav(tmp_path / "noisy.wav", melody, noise=0.05), gold, label="with noise"),
        Case("compare_audios", _wav(tmp_path / "slow.wav", [(f, s * 1.5) for f, s in melody]), gold,
             label="played slower"),
        Case("compare_audios", _wav(tmp_path / "other.wav", [(220.0, 1.0), (880.0, 1.0)]), gold,
             label="another melody"),
        Case("compare_audios", _mp3_of(gold, tmp_path / "gold.mp3"), gold, label="the same as MP3"),
        Case("compare_audios", empty, gold, label="empty"),
        Case("compare_audios", empty, _wav(tmp_path / "empty2.wav", []), label="both empty"),
        Case("compare_audios", _write(tmp_path / "text.wav", "not audio"), gold, label="not audio"),
        Case("compare_audios", str(tmp_path / "missing.mp3"), gold, label="missing"),
        Case("compare_audios", None, gold, label="none"),
    ]
    assert_same_verdicts(cases)
    scores = vdesk_scores(cases)
    # The score is a continuous similarity: the same recording is 1, a near one close to it, and
    # another melody clearly lower (tasks compare it with a threshold).
    assert scores[0] == pytest.approx(1.0)
    assert min(scores[1:5]) > scores[5]
