"""OSWorld's checks of media and of the media player: an MP3's tags (mutagen's ID3 reader, as
the reference reads them), what VLC is playing (its web interface's ``status.xml``), whether its
window fills the screen.

Files are read bounded (:mod:`.inputs`); the status XML is parsed without entities.
"""

from __future__ import annotations

import io
import os
import warnings
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

from vdesk.errors import DocumentError, UnsupportedMetric
from vdesk.osworld.metrics.general import match_value
from vdesk.osworld.metrics.inputs import read_bytes
from vdesk.osworld.metrics.registry import metric


@metric("check_mp3_meta")
def check_mp3_meta(result: Any, expected: Any) -> float:
    """Each tag named in ``expected`` (``{"title": {"method", "ref"}, ...}``, mutagen's EasyID3
    names) matches its rule; a tag with several values reads as them joined by commas, a missing
    one as "". A file without an ID3 tag scores 0."""
    from mutagen import MutagenError
    from mutagen.easyid3 import EasyID3

    if result is None:
        return 0.0
    if not isinstance(expected, Mapping):
        raise UnsupportedMetric(f"check_mp3_meta: the rule must map tag names to checks, got {str(expected)[:80]}")
    try:
        tags = EasyID3(io.BytesIO(read_bytes(result)))
    except (DocumentError, MutagenError):
        return 0.0
    for key, rule in expected.items():
        value = tags.get(key, "")
        if isinstance(value, list):
            value = ",".join(value)
        if not match_value(value, rule):
            return 0.0
    return 1.0


# -- VLC's state -----------------------------------------------------------------------------
STATUS_LIMIT = 4 << 20   # bytes of a status.xml (VLC's are a few KiB)
_FILE_FIELDS = ("filename", "title", "uri", "location", "name")
_URL_FIELDS = (("meta", "url"), ("meta", "URI"), ("meta", "location"), ("meta", "title"), ("meta", "filename"),
               ("Stream 0", "Codec"), ("Stream 0", "Type"), ("Stream 0", "Language"))


def _info(tree: Any, category: str, name: str) -> str | None:
    for found in tree.findall(f"information/category[@name='{category}']/info[@name='{name}']"):
        return found.text
    return None


def _first(tree: Any, fields: tuple[tuple[str, str], ...]) -> str | None:
    """The first of ``fields`` (category, name) that has text, in the reference's order."""
    for category, name in fields:
        text = _info(tree, category, name)
        if text:
            return text
    return None


def _file_matches(shown: str, wanted: str) -> bool:
    return os.path.basename(shown) == wanted or shown.endswith(wanted)


def _url_matches(shown: str, wanted: str) -> bool:
    if wanted in shown:
        return True
    expected = urlparse(wanted)
    if shown == os.path.basename(expected.path):  # an HLS stream shows its playlist's name
        return True
    if "://" in shown:
        actual = urlparse(shown)
        return expected.netloc == actual.netloc and expected.path in actual.path
    return False


@metric("is_vlc_playing")
def is_vlc_playing(result: Any, expected: Any) -> float:
    """VLC's status (``result``, the status.xml its web interface served) says it is playing,
    and what it plays is ``expected``: ``{"type": "file_name", "file_name"}`` (the first of the
    meta fields filename, title, uri, location, name that is set ends with it) or ``{"type":
    "url", "url"}`` (the first of url, URI, location, title, filename, then the first stream's
    codec, type, language that is set contains it, is its playlist's file name, or is a URL on
    the same host whose path contains its path). A status that is not XML scores 0."""
    from lxml import etree

    kind = expected.get("type") if isinstance(expected, Mapping) else None
    if kind not in ("file_name", "url"):
        raise UnsupportedMetric(f"is_vlc_playing: rule type {kind!r} is not supported (supported: file_name, url)")
    if result is None:
        return 0.0
    try:
        data = read_bytes(result)
        if len(data) > STATUS_LIMIT:
            return 0.0
        tree = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False))
    except (DocumentError, etree.XMLSyntaxError):
        return 0.0
    if tree.findtext("state") != "playing":
        return 0.0
    if kind == "file_name":
        shown = _first(tree, tuple(("meta", name) for name in _FILE_FIELDS))
        return float(shown is not None and _file_matches(shown, str(expected["file_name"])))
    shown = _first(tree, _URL_FIELDS)
    return float(shown is not None and _url_matches(shown, str(expected["url"])))


@metric("is_vlc_fullscreen")
def is_vlc_fullscreen(result: Any, expected: Any) -> float:
    """VLC's window (``expected``, the ``vm_window_size`` getter's ``{"width", "height"}``) is as
    large as the screen (``result``, ``vm_screen_size``'s); no window or no screen scores 0."""
    sizes = (expected, result)
    if not all(isinstance(size, Mapping) and "width" in size and "height" in size for size in sizes):
        return 0.0
    return float(expected["width"] == result["width"] and expected["height"] == result["height"])


# -- videos ----------------------------------------------------------------------------------
VIDEO_FRAMES = 100       # frames the reference compares at most
VIDEO_HASH_BITS = 5      # a frame whose hash is more than 5 bits from the other's differs ...
VIDEO_MISMATCHES = 5     # ... and more than 5 such frames make the videos differ


def _frames(path: Any, limit: int) -> Any:
    """The first ``limit`` frames of a video as RGB pictures, decoded by the ffmpeg that
    imageio-ffmpeg ships (a decoder, run with an argument list, on a file read bounded); an
    unreadable video yields none."""
    import imageio_ffmpeg
    from PIL import Image

    if path is None:
        return
    try:
        read_bytes(path)   # refuse a missing file or one past the size limit before ffmpeg opens it
        reader = imageio_ffmpeg.read_frames(os.fspath(path), output_params=["-frames:v", str(limit)])
        meta = next(reader)
    except (DocumentError, OSError, RuntimeError, StopIteration):
        return
    try:
        for frame in reader:
            yield Image.frombytes("RGB", meta["size"], frame)
    except (OSError, RuntimeError):
        return
    finally:
        reader.close()


@metric("compare_videos", options=("max_frames_to_check", "threshold"))
def compare_videos(result: Any, expected: Any, max_frames_to_check: int = VIDEO_FRAMES,
                   threshold: int = VIDEO_HASH_BITS) -> float:
    """Two videos are the same: frame by frame, up to ``max_frames_to_check``, perceptual hashes
    more than ``threshold`` bits apart in at most ``threshold`` frames; and, if one ends within
    them, the other ends at the same frame. As in the reference, two videos that cannot be read
    are alike."""
    from vdesk.osworld.metrics.images import hash_distance, phash

    if result is None or expected is None:
        return 0.0
    ones, twos = _frames(result, max_frames_to_check), _frames(expected, max_frames_to_check)
    mismatches = 0
    for _ in range(max_frames_to_check):
        one, two = next(ones, None), next(twos, None)
        if one is None or two is None:
            return float(one is None and two is None)
        if hash_distance(phash(one), phash(two)) > threshold:
            mismatches += 1
            if mismatches > threshold:
                return 0.0
    return 1.0


def _audio(path: Any) -> Any:
    """The samples of an audio file as librosa decodes it (mono, resampled to 22 050 Hz, its
    defaults, which the reference's score depends on), with their rate; ``None`` for a file that
    is missing, past the size limit, empty or not audio. librosa hands a file to soundfile
    (libsndfile: WAV, FLAC, Ogg, MP3) and falls back to audioread's ffmpeg."""
    import librosa

    if not path:
        return None
    try:
        read_bytes(path)   # refuse a missing file or one past the size limit before a decoder opens it
        with warnings.catch_warnings():   # librosa warns as it falls back from one decoder to the next
            warnings.simplefilter("ignore")
            samples, rate = librosa.load(os.fspath(path))
    except Exception:  # noqa: BLE001 - the decoders raise their own kinds; any of them means "not audio"
        return None
    return (samples, rate) if samples.shape[0] else None


@metric("compare_audios")
def compare_audios(result: Any, expected: Any) -> float:
    """How alike two recordings sound, in (0, 1]: librosa's MFCCs of each, every coefficient
    normalised over time, aligned by fastdtw under the cosine distance; the score is
    ``exp(-distance / path length)``, so the same audio scores 1 and it falls off smoothly. As in
    the reference, two files that are both unreadable (or empty) are alike (1) and one of them
    alone scores 0."""
    try:
        import librosa
        from fastdtw import fastdtw
    except ImportError as missing:
        raise UnsupportedMetric("metric 'compare_audios' needs librosa and fastdtw: "
                                "pip install 'vdesk[audio]'") from missing
    import numpy as np
    from scipy.spatial.distance import cosine

    if not result or not expected:
        return 0.0
    one, two = _audio(result), _audio(expected)
    if one is None or two is None:
        return float(one is None and two is None)
    try:
        features = [librosa.util.normalize(librosa.feature.mfcc(y=samples, sr=rate), axis=1)
                    for samples, rate in (one, two)]
    except Exception:  # noqa: BLE001 - librosa's feature errors (too short a signal …) score 0, as there
        return 0.0
    distance, path = fastdtw(features[0].T, features[1].T, dist=cosine)
    return float(np.exp(-distance / len(path))) if path else 0.0
