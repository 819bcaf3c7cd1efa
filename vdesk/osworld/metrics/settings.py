"""OSWorld's checks of programs' settings, over the files and values their getters read:
VLC's ``vlcrc``, GIMP's ``gimprc``, Chrome's Preferences-derived values, LibreOffice's
``registrymodifications.xcu``."""

from __future__ import annotations

import fnmatch

import re
from collections.abc import Mapping
from typing import Any

from vdesk.errors import DocumentError, UnsupportedMetric
from vdesk.osworld.metrics.inputs import read_bytes, result_text
from vdesk.osworld.metrics.registry import metric


def _want(rule: Any, key: str, metric_name: str) -> Any:
    if not isinstance(rule, Mapping) or key not in rule:
        raise UnsupportedMetric(f"{metric_name}: the rule needs {key!r}")
    return rule[key]


# -- VLC -------------------------------------------------------------------------------------
# OSWorld's checks read a vlcrc as text, not as an INI file: a line counts when it holds the key
# and "=" anywhere (a commented-out default line too, but not "key = value"), its value is the
# text after the line's last "=", and the last such line wins. vdesk reads it the same way, so a
# file the VM would score one way scores that way here.
def vlcrc_text(result: Any) -> str | None:
    """A vlcrc's text as OSWorld's checks decode it: strict UTF-8, a BOM kept as a character;
    None when there is no file or it cannot be read (it scores 0, as other results do).
    :class:`DocumentError` when it is not UTF-8 (OSWorld's check raises there, and its harness
    records an error, not a score)."""
    if result is None:
        return None
    try:
        data = read_bytes(result)
    except DocumentError:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DocumentError(f"{result}: not UTF-8 (byte {data[error.start]:#04x} at {error.start})") from None


def vlc_value(text: str, marker: str, default: str) -> str:
    """The value of the last line (split at LF only) holding ``marker`` anywhere: its text after
    the line's last "=", stripped; ``default`` when no line holds it."""
    value = default
    for line in text.split("\n"):
        if marker in line:
            value = line.split("=")[-1].strip()
    return value


def _as_read(wanted: Any) -> Any:
    """A rule's expected value as OSWorld's checks compare it with the text: a number (or a
    boolean) as its text, anything else as it is (so ``1.0`` or ``"01"`` never equals ``1``)."""
    return str(wanted) if isinstance(wanted, int) else wanted


def _vlc_setting_is(result: Any, expected: Any, key: str, rule_key: str, default: str, name: str) -> float:
    wanted = _as_read(_want(expected, rule_key, name))
    text = vlcrc_text(result)
    if text is None:
        return 0.0
    return float(vlc_value(text, f"{key}=", default) == wanted)


@metric("check_qt_bgcone")
def check_qt_bgcone(result: Any, expected: Any) -> float:
    """VLC shows (1, the default) or hides (0) the cone in its background, as expected."""
    return _vlc_setting_is(result, expected, "qt-bgcone", "expected_qt_bgcone", "1", "check_qt_bgcone")


@metric("check_qt_max_volume")
def check_qt_max_volume(result: Any, expected: Any) -> float:
    """VLC's maximum volume (percent, 125 by default) is the expected one."""
    return _vlc_setting_is(result, expected, "qt-max-volume", "expected_qt_max_volume", "125", "check_qt_max_volume")


@metric("check_qt_minimal_view")
def check_qt_minimal_view(result: Any, expected: Any) -> float:
    """VLC's minimal view is on (1) or off (0, the default), as expected."""
    return _vlc_setting_is(result, expected, "qt-minimal-view", "expected_qt_minimal_view", "0",
                           "check_qt_minimal_view")


@metric("check_one_instance_when_started_from_file")
def check_one_instance_when_started_from_file(result: Any, expected: Any) -> float:
    """VLC reuses its running instance for a file opened from the file manager (1, the default) or not."""
    return _vlc_setting_is(result, expected, "one-instance-when-started-from-file",
                           "expected_one_instance_when_started_from_file", "1",
                           "check_one_instance_when_started_from_file")


@metric("check_global_key_play_pause")
def check_global_key_play_pause(result: Any, expected: Any) -> float:
    """A global play/pause hotkey is set (1: the last line holding the key has a value, even
    "0") or not (0), as expected."""
    wanted = _as_read(_want(expected, "expected_global_key_play_pause", "check_global_key_play_pause"))
    text = vlcrc_text(result)
    if text is None:
        return 0.0
    value = vlc_value(text, "global-key-play-pause=", "")
    return float(("1" if value else "0") == wanted)


@metric("is_vlc_recordings_folder")
def is_vlc_recordings_folder(result: Any, expected: Any) -> float:
    """VLC records into the expected folder: the first line holding ``input-record-path`` that
    does not start with "#" (an indented comment counts) has exactly ``recording_file_path``
    after its last "=" (a slash more or less is another folder to the reference, which compares
    the text)."""
    wanted = _want(expected, "recording_file_path", "is_vlc_recordings_folder")
    for line in (vlcrc_text(result) or "").split("\n"):
        if line.startswith("#") or not line.strip():
            continue
        if "input-record-path" in line:
            return float(line.split("=")[-1].strip() == wanted)
    return 0.0


SLIDER_COLOURS = "153;210;153;20;210;20;255;199;15;245;39;29"   # VLC's volume slider, its default
BLACKISH = 100   # every channel of every slider colour below this is "black-ish"


@metric("check_qt_slider_colours")
def check_qt_slider_colours(result: Any, expected: Any) -> float:
    """VLC's volume slider colours (``qt-slider-colours``, RGB triples as ``r;g;b;...``) are
    ``expected["expected_qt_slider_colours"]`` (rule type ``match``; a rule without it scores 0)
    or all black-ish (type ``blackish``: every channel of every whole triple below 100). As in
    the reference, a line that merely contains the key (a comment, one without "=") is read, and
    a value that is not numbers scores 0."""
    kind = expected.get("type") if isinstance(expected, dict) else None
    if kind not in ("match", "blackish"):
        raise UnsupportedMetric(f"check_qt_slider_colours: rule type {kind!r} is not supported (supported: match, blackish)")
    text = vlcrc_text(result)
    if text is None:
        return 0.0
    value = vlc_value(text, "qt-slider-colours", SLIDER_COLOURS)
    if kind == "match":
        return float("expected_qt_slider_colours" in expected and value == expected["expected_qt_slider_colours"])
    try:
        channels = [int(x) for x in value.split(";")]
    except ValueError:
        return 0.0
    whole = len(channels) - len(channels) % 3   # a colour lacking a channel is not one
    return float(all(channel < BLACKISH for channel in channels[:whole]))


@metric("check_play_and_exit")
def check_play_and_exit(result: Any, expected: Any) -> float:
    """VLC quits at the end of the playlist (``play-and-exit``, 0 by default) as expected. The
    pinned reference lacks this check; its later source reads the setting as its other vlcrc
    checks do (:func:`vlc_value`), and so does vdesk."""
    wanted = _want(expected, "expected_play_and_exit", "check_play_and_exit")
    text = vlcrc_text(result)
    if text is None:
        return 0.0
    return float(vlc_value(text, "play-and-exit=", "0") == _as_read(wanted))


# -- GIMP ------------------------------------------------------------------------------------
GIMPRC_LINE = re.compile(r"^\((\S+)\s+(.*)\)\s*$")


@metric("check_config_status")
def check_config_status(result: Any, expected: Any) -> float:
    """GIMP's configuration file (``gimprc``, ``sessionrc``) has ``(key value)`` at its top level."""
    key = _want(expected, "key", "check_config_status")
    value = str(_want(expected, "value", "check_config_status"))
    for line in (result_text(result) or "").splitlines():
        match = GIMPRC_LINE.match(line.strip())
        if match and match.group(1) == key and match.group(2).strip().strip('"') == value.strip('"'):
            return 1.0
    return 0.0


# -- Chrome ----------------------------------------------------------------------------------
@metric("check_font_size")
def check_font_size(result: Any, expected: Any) -> float:
    """Chrome's default font size (``default_font_size`` of the getter's dict) is the expected
    ``value``, or within ``min``…``max`` (rule type ``range``)."""
    kind = expected.get("type") if isinstance(expected, Mapping) else None
    if kind not in ("value", "range"):
        raise UnsupportedMetric(f"check_font_size: rule type {kind!r} is not supported (value, range)")
    size = result.get("default_font_size") if isinstance(result, Mapping) else None
    if not isinstance(size, (int, float)):
        return 0.0
    if kind == "value":
        return float(size == expected["value"])
    return float(expected["min"] < size < expected["max"])


@metric("check_enabled_experiments")
def check_enabled_experiments(result: Any, expected: Any) -> float:
    """Chrome's enabled experiments (chrome://flags) are exactly the expected ``names``."""
    kind = expected.get("type") if isinstance(expected, Mapping) else None
    if kind != "names":
        raise UnsupportedMetric(f"check_enabled_experiments: rule type {kind!r} is not supported (names)")
    if not isinstance(result, list):
        return 0.0
    # Chrome stores a choice as "name@option"; the reference compares only the names.
    names = [str(item).split("@")[0] for item in result]
    return float(names == list(expected["names"]))


# -- LibreOffice -----------------------------------------------------------------------------
OOR = "{http://openoffice.org/2001/registry}"


def libreoffice_setting(path: Any, item_path: str, name: str) -> str | None:
    """A value in LibreOffice's ``registrymodifications.xcu`` (its XML parsed without entities)."""
    from defusedxml import ElementTree

    try:
        root = ElementTree.fromstring(read_bytes(path))
    except (ElementTree.ParseError, ValueError) as error:
        raise DocumentError(f"{path}: not LibreOffice's registry XML ({error})") from None
    found = None
    for item in root.iter("item"):
        if item.get(f"{OOR}path") != item_path:
            continue
        for prop in item.iter("prop"):
            if prop.get(f"{OOR}name") == name:
                value = prop.find("value")
                found = (value.text or "") if value is not None else ""
    return found


@metric("check_libre_locale")
def check_libre_locale(result: Any, expected: Any) -> float:
    """LibreOffice's locale — the system locale setting, else the user interface's — matches one
    of ``locale_set``'s shell patterns (``de-*``), as the reference reads it."""
    wanted = _want(expected, "locale_set", "check_libre_locale")
    if result is None:
        return 0.0
    try:
        locale = (libreoffice_setting(result, "/org.openoffice.Setup/L10N", "ooSetupSystemLocale")
                  or libreoffice_setting(result, "/org.openoffice.Setup/L10N", "ooLocale"))
    except DocumentError:
        return 0.0
    return float(bool(locale) and any(fnmatch.fnmatchcase(str(locale), str(w)) for w in wanted))