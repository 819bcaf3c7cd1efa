"""vdesk's plain OSWorld metrics — text and list rules, JSON and CSV files, settings files of VLC,
GIMP and VS Code, the browser's tabs, bookmarks and address — give OSWorld's own verdicts: each
case is scored by both (tests/osworld/reference.py) on inputs built here: right, wrong, near
misses, missing."""

from __future__ import annotations

import json
from pathlib import Path

from tests.osworld.reference import Case, assert_same_verdicts, write_file as _write



def test_text_and_list_rules() -> None:
    assert_same_verdicts([
        Case("check_include_exclude", "43 132\nuser@host:~$", {"include": ["43 132"], "exclude": []}, label="in"),
        Case("check_include_exclude", "43 13", {"include": ["43 132"]}, label="near"),
        Case("check_include_exclude", "ok but Error: x", {"include": ["ok"], "exclude": ["Error:"]}, label="excluded"),
        Case("check_include_exclude", ["vlc.desktop"], {"include": ["vlc.desktop"]}, label="a list"),
        Case("check_include_exclude", None, {"include": []}, label="none"),
        Case("match_in_list", "b", {"expected": ["a", "b"]}, label="in"),
        Case("match_in_list", "c", {"expected": ["a", "b"]}, label="out"),
        Case("is_in_list", ["x.txt", "memo.pdf"], {"expected": "memo.pdf"}, label="in"),
        Case("is_in_list", "memo.pdf.bak", {"expected": "memo.pdf"}, label="a substring"),
        Case("is_in_list", ["memo.txt"], {"expected": "memo.pdf"}, label="out"),
        Case("literal_match", "print(1)", "print(1)", label="same"),
        Case("literal_match", "Print(1)", "print(1)", {"ignore_case": True}, label="case ignored"),
        Case("literal_match", "Print(1)", "print(1)", label="case"),
        Case("literal_match", ["a", "B"], ["a", "b"], {"type": "list", "ignore_case": True}, label="list"),
        Case("literal_match", ["a"], ["a", "b"], {"type": "list"}, label="short list"),
        Case("literal_match", 12, "12", label="number as text"),
    ])


def test_files_of_lines(tmp_path: Path) -> None:
    sar = "Linux 6.1 (host)\n\n10:00:01 CPU %user %idle\n" + "".join(f"10:00:0{i} all 1.0 99.0\n" for i in range(2, 8))
    report = _write(tmp_path / "report.txt", sar + "Average: all 1.0 99.0\n")
    twelve_hour = _write(tmp_path / "pm.txt", "05:20:01 PM CPU\n05:20:02 PM all\n")
    listing = _write(tmp_path / "ls.txt", "a.txt\nb.txt\nc.txt\n")
    missing = str(tmp_path / "missing")
    assert_same_verdicts([
        Case("file_contains", report, {"expected": ["CPU", "%user", "%idle"]}, label="all"),
        Case("file_contains", report, {"expected": ["CPU", "%steal"]}, label="one missing"),
        Case("file_contains", missing, {"expected": ["x"]}, label="no file"),
        Case("check_line_number", report, {"expected": "7"}, label="timed lines"),
        Case("check_line_number", report, {"expected": "8"}, label="one more"),
        Case("check_line_number", twelve_hour, {"expected": "2"}, label="12-hour times"),
        Case("check_line_number", missing, {"expected": "0"}, label="no file"),
        Case("check_list", listing, {"expect": ["a\\.txt", "c\\.txt"], "unexpect": ["d\\.txt"]}, label="right"),
        Case("check_list", listing, {"expect": ["a\\.txt", "d\\.txt"]}, label="one absent"),
        Case("check_list", listing, {"expect": ["a\\.txt"], "unexpect": ["b"]}, label="unexpected"),
        Case("check_list", None, {"expect": []}, label="none"),
    ])


def test_json_csv_and_text_files(tmp_path: Path) -> None:
    config = _write(tmp_path / "config.json", json.dumps({"name": "vdesk", "version": 2, "tags": ["a"]}))
    broken = _write(tmp_path / "broken.json", "{not json")
    a = _write(tmp_path / "a.csv", "x,y\n1,2\n")
    a_again = _write(tmp_path / "a2.csv", "x,y\n1,2\n")
    b = _write(tmp_path / "b.csv", "x,y\n1,3\n")
    spaced = _write(tmp_path / "spaced.csv", "x, y\n1, 2\n")
    text = _write(tmp_path / "t.txt", "Hello World\n")
    text_lower = _write(tmp_path / "t2.txt", "hello world\n")
    settings = _write(tmp_path / "settings.json", json.dumps({"editor.fontSize": 14, "files.autoSave": "afterDelay"}))
    rule = {"expect": [{"key": ["name"], "method": "eq", "ref": "vdesk"}]}
    assert_same_verdicts([
        Case("check_json", config, rule, label="eq"),
        Case("check_json", config, {"expect": [{"key": ["version"], "method": "eq", "ref": 3}]}, label="other value"),
        Case("check_json", config, {"expect": [{"key": ["nope"], "method": "eq", "ref": 1}]}, label="no key"),
        Case("check_json", config, {"unexpect": [{"key": ["tags"], "method": "eq", "ref": ["a"]}]}, label="unexpected"),
        Case("check_json", broken, rule, label="not json"),
        Case("compare_csv", a, a_again, label="same"),
        Case("compare_csv", a, b, label="one cell"),
        Case("compare_csv", spaced, a, {"strict": False}, label="loose"),
        Case("compare_csv", str(tmp_path / "none.csv"), a, label="missing"),
        Case("compare_text_file", text, text, label="same"),
        Case("compare_text_file", text_lower, text, {"ignore_case": True}, label="case ignored"),
        Case("compare_text_file", text_lower, text, label="case"),
        Case("check_json_settings", settings, {"expected": {"editor.fontSize": 14}}, label="in"),
        Case("check_json_settings", settings, {"expected": {"editor.fontSize": 16}}, label="other"),
        Case("check_json_settings", str(tmp_path / "none.json"), {"expected": {}}, label="missing"),
    ])


def test_vlc_and_gimp_settings_files(tmp_path: Path) -> None:
    vlcrc = _write(tmp_path / "vlcrc", "[qt]\n#qt-bgcone=1\nqt-max-volume=200\n[core]\n"
                                       "input-record-path=/home/user/Desktop\none-instance-when-started-from-file=0\n")
    appended = _write(tmp_path / "vlcrc2", "[qt]\nqt-bgcone=1\n[qt]\nqt-bgcone=0\n")
    default = _write(tmp_path / "vlcrc3", "[qt]\nqt-privacy-ask=0\n")
    gimprc = _write(tmp_path / "gimprc", "# GIMP gimprc\n(undo-levels 100)\n(theme \"Light\")\n")
    assert_same_verdicts([
        Case("check_qt_bgcone", appended, {"expected_qt_bgcone": 0}, label="the last line"),
        Case("check_qt_bgcone", vlcrc, {"expected_qt_bgcone": 0}, label="commented default"),
        Case("check_qt_max_volume", vlcrc, {"expected_qt_max_volume": 200}, label="set"),
        Case("check_qt_max_volume", default, {"expected_qt_max_volume": 200}, label="default"),
        Case("check_one_instance_when_started_from_file", vlcrc,
             {"expected_one_instance_when_started_from_file": 0}, label="off"),
        Case("check_one_instance_when_started_from_file", default,
             {"expected_one_instance_when_started_from_file": 0}, label="default on"),
        Case("is_vlc_recordings_folder", vlcrc, {"recording_file_path": "/home/user/Desktop"}, label="set"),
        Case("is_vlc_recordings_folder", vlcrc, {"recording_file_path": "/home/user/Desktop/"}, label="a slash more"),
        Case("is_vlc_recordings_folder", default, {"recording_file_path": "/home/user/Desktop"}, label="unset"),
        Case("check_config_status", gimprc, {"type:": "key-value", "key": "undo-levels", "value": "100"}, label="set"),
        Case("check_config_status", gimprc, {"type:": "key-value", "key": "undo-levels", "value": "10"}, label="other"),
        Case("check_config_status", gimprc, {"type:": "key-value", "key": "theme", "value": "\"Light\""}, label="quoted"),
        Case("check_config_status", None, {"key": "theme", "value": "x"}, label="none"),
    ])


def test_the_browsers_tabs_bookmarks_and_address() -> None:
    tabs = [{"title": "A", "url": "https://www.example.com/"}, {"title": "B", "url": "http://example.org/b"}]
    bookmarks = {"bookmark_bar": {"children": [
        {"type": "folder", "name": "Work", "children": []},
        {"type": "url", "name": "Ex", "url": "https://example.com/"}]}}
    assert_same_verdicts([
        Case("is_expected_tabs", tabs, {"type": "url", "urls": ["https://example.com", "http://example.org/b"]},
             label="normalised"),
        Case("is_expected_tabs", tabs, {"type": "url", "urls": ["http://example.org/b"]}, label="one missing"),
        Case("is_expected_tabs", [], {"type": "url", "urls": []}, label="none open"),
        Case("is_expected_active_tab", tabs[0], {"type": "url", "url": "https://example.com"}, label="same"),
        Case("is_expected_active_tab", tabs[1], {"type": "url", "url": "https://example.com"}, label="other"),
        Case("is_expected_bookmarks", bookmarks, {"type": "bookmark_bar_folders_names", "names": ["Work"]}, label="folders"),
        Case("is_expected_bookmarks", bookmarks, {"type": "bookmark_bar_websites_urls",
                                                  "urls": ["https://example.com/"]}, label="sites"),
        Case("is_expected_bookmarks", bookmarks, {"type": "bookmark_bar_folders_names", "names": ["Home"]}, label="other"),
        Case("is_expected_url_pattern_match", "https://example.com/search?q=vdesk", {"expected": ["q=vdesk", "^https"]},
             label="all"),
        Case("is_expected_url_pattern_match", {"url": "http://example.com/"}, {"expected": ["^https"]}, label="dict"),
        Case("is_expected_url_pattern_match", None, {"expected": ["x"]}, label="none"),
    ])


NS = ('xmlns:st="https://accessibility.ubuntu.example.org/ns/state" '
      'xmlns:cp="https://accessibility.ubuntu.example.org/ns/component"')
TREE = (f'<desktop-frame {NS}><application name="gedit"><frame name="notes - gedit">'
        '<text name="" st:focused="true">hello tree</text><push-button name="Save"/>'
        '</frame></application></desktop-frame>')


def _xcu(path: Path, values: dict[str, str]) -> str:
    props = "".join(f'<item oor:path="/org.openoffice.Setup/L10N"><prop oor:name="{name}" oor:op="fuse">'
                    f'<value>{value}</value></prop></item>' for name, value in values.items())
    return _write(path, '<?xml version="1.0" encoding="UTF-8"?><oor:items '
                        f'xmlns:oor="http://openoffice.org/2001/registry">{props}</oor:items>')


def test_trees_fonts_locales_and_keys(tmp_path: Path) -> None:
    locale = _xcu(tmp_path / "locale.xcu", {"ooLocale": "de-DE"})
    both = _xcu(tmp_path / "both.xcu", {"ooSetupSystemLocale": "fr-FR", "ooLocale": "de-DE"})
    key_set = _write(tmp_path / "vlcrc", "[core]\n#global-key-play-pause=\nglobal-key-play-pause=Ctrl+p\n")
    key_unset = _write(tmp_path / "vlcrc2", "[core]\n#global-key-play-pause=\n")
    text = {"selectors": ["text[st|focused=\"true\"]"], "text": "hello tree", "exact": True}
    assert_same_verdicts([
        Case("check_accessibility_tree", TREE, [text], label="text exact"),
        Case("check_accessibility_tree", TREE, [{**text, "text": "hello tre"}], label="near, exact"),
        Case("check_accessibility_tree", TREE, [{**text, "text": "hello tre", "exact": False}], label="near, fuzzy"),
        Case("check_accessibility_tree", TREE, [{"xpath": "//push-button[@name='Save']"}], label="xpath"),
        Case("check_accessibility_tree", TREE, [{"selectors": ["push-button[name=Open]"]}], label="absent"),
        Case("check_font_size", {"default_font_size": 20}, {"type": "value", "value": 20}, label="value"),
        Case("check_font_size", {"default_font_size": 20}, {"type": "range", "min": 16, "max": 20}, label="range edge"),
        Case("check_font_size", {"default_font_size": 18}, {"type": "range", "min": 16, "max": 20}, label="in range"),
        Case("check_libre_locale", locale, {"locale_set": ["de-*"]}, label="pattern"),
        Case("check_libre_locale", both, {"locale_set": ["de-*"]}, label="system locale first"),
        Case("check_libre_locale", locale, {"locale_set": ["en-US"]}, label="other"),
        Case("check_global_key_play_pause", key_set, {"expected_global_key_play_pause": 1}, label="set"),
        Case("check_global_key_play_pause", key_unset, {"expected_global_key_play_pause": 1}, label="unset"),
        Case("check_global_key_play_pause", key_unset, {"expected_global_key_play_pause": 0}, label="unset wanted"),
    ])
