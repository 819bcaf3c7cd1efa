"""vdesk's file, record and desktop-state metrics give OSWorld's own verdicts: each case is scored
by both (tests/osworld/reference.py) on inputs built here: right, wrong, near misses, missing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.osworld.reference import Case, assert_same_verdicts, write_file as _write



def _zip(path: Path, members: dict[str, str] | dict[str, bytes]) -> str:
    """A zip archive of ``members`` (name → content) at ``path``; its path as a string."""
    import zipfile
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as handle:
        for member, data in members.items():
            handle.writestr(member, data)
    return str(path)


def _docx(path: Path, paragraphs: list[str]) -> str:
    import docx

    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    document.save(str(path))
    return str(path)


def test_file_metrics(tmp_path: Path) -> None:
    csv_file = _write(tmp_path / "a.csv", "name,age\r\nann,30\r\nbob,41\r\n")
    db = tmp_path / "a.db"
    with sqlite3.connect(db) as connection:
        connection.execute("create table t (x)")
        connection.executemany("insert into t values (?)", [(3,), (None,), ("2.5",)])
    code = _write(tmp_path / "a.py", "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\ndef f():\n\treturn 1  \n\n")
    gold = _write(tmp_path / "gold.py", "def f():\n    return 1\n")
    fenced = _write(tmp_path / "fenced.py", "```python\ndef f():\n    return 1\n```\n")
    latin = _write(tmp_path / "latin.py", b"def f():\n    return '\xe9'\n")
    keys = _write(tmp_path / "keys.json", '// Place your key bindings\n[{"key": "ctrl+j", "command": "x"}]')
    keys_plain = _write(tmp_path / "plain.json", '[{"key": "ctrl+j", "command": "x"}]')
    keys_obj = _write(tmp_path / "obj.json", '{"key": "ctrl+j", "command": "x"}')
    missing = str(tmp_path / "missing")
    binding = {"expected": {"key": "ctrl+j", "command": "x"}}
    assert_same_verdicts([
        Case("check_csv", csv_file, {"expect": [{"name": "ann", "age": "30"}]}, label="found"),
        Case("check_csv", csv_file, {"expect": [{"name": "ann"}, {"name": "bob"}], "unexpect": [{"name": "cy"}]},
             label="both, no unexpected"),
        Case("check_csv", csv_file, {"expect": [{"name": "ann", "age": 30}]}, label="number is not text"),
        Case("check_csv", csv_file, {"expect": [{"name": "ann"}], "unexpect": [{"age": "41"}]}, label="unexpected"),
        Case("check_csv", csv_file, {"expect": [{"nom": "ann"}]}, label="no such column"),
        Case("check_csv", None, {"expect": []}, label="none"),
        Case("check_csv", missing, {"expect": []}, label="missing"),
        Case("run_sqlite3", str(db), {"sql": "select count(*) from t"}, label="count"),
        Case("run_sqlite3", str(db), {"sql": "select x from t where x is null"}, label="null"),
        Case("run_sqlite3", str(db), {"sql": "select x from t where x = '2.5'"}, label="text number"),
        Case("run_sqlite3", str(db), {"sql": "select x from t where x = 99"}, label="no row"),
        Case("run_sqlite3", str(db), {"sql": "select y from nope"}, label="bad query"),
        Case("run_sqlite3", csv_file, {"sql": "select 1 from t"}, label="not a database"),
        Case("compare_python_pure_text", code, gold, label="same but metadata, tabs, blanks"),
        Case("compare_python_pure_text", fenced, gold, label="markdown fence"),
        Case("compare_python_pure_text", latin, gold, label="not utf-8"),
        Case("compare_python_pure_text", missing, gold, label="missing"),
        Case("compare_python_pure_text", None, gold, label="none"),
        Case("check_json_keybindings", keys, binding, label="after a comment line"),
        Case("check_json_keybindings", keys_plain, binding, label="plain list"),
        Case("check_json_keybindings", keys_plain, {"expected": {"key": "ctrl+k", "command": "x"}}, label="other key"),
        Case("check_json_keybindings", keys_obj, binding, label="not a list"),
        Case("check_json_keybindings", missing, binding, label="missing"),
    ])


def test_record_metrics(tmp_path: Path) -> None:
    import openpyxl

    places = _docx(tmp_path / "places.docx", ["Paris", "", "  Londn ", "Rome"])
    two = _docx(tmp_path / "two.docx", ["Paris London"])
    initial = _docx(tmp_path / "initial.docx", ["G1,T1,a,b", "G2,T2,a,b", "G1,T1,a,b", "header"])
    gold = _docx(tmp_path / "gold.docx", ["G1,T1,a,b", "G2,T2,a,b"])
    good = _docx(tmp_path / "good.docx", ["G2,T2,a,b", "", "G1,T1,a,b"])
    twice = _docx(tmp_path / "twice.docx", ["G1,T1,a,b", "G2,T2,a,b", "G1,T1,a,b"])
    foreign = _docx(tmp_path / "foreign.docx", ["G1,T1,a,b", "G3,T3,a,b"])
    # Spelled as expected: the pinned reference package matches by plain substring, its newer
    # source (which vdesk follows, see test_city_spelling_is_tolerant) also without case/accents.
    cities = ["zurich", "new york, usa"] + [f"city {i}" for i in range(19)]

    def sheet(name: str, values: list[str | None]) -> str:
        book = openpyxl.Workbook()
        for row, value in enumerate(values, start=2):
            book.active.cell(row=row, column=3, value=value)
        book.save(tmp_path / name)
        return str(tmp_path / name)

    right = sheet("right.xlsx", cities)
    wrong = sheet("wrong.xlsx", cities[:5] + ["Paris"] + cities[6:])
    short = sheet("short.xlsx", cities[:20])
    expected = {"expected": ["zurich", ["new york", "nyc"]] + [f"city {i}" for i in range(19)]}
    missing = str(tmp_path / "missing.docx")
    assert_same_verdicts([
        Case("fuzzy_place_math", places, {"expected": ["Paris", "London", "Rome"]}, label="near"),
        Case("fuzzy_place_math", two, {"expected": ["Paris", "London", "Rome"]}, label="two words"),
        Case("fuzzy_place_math", missing, {"expected": ["Paris"]}, label="missing"),
        Case("fuzzy_place_math", None, {"expected": ["Paris"]}, label="none"),
        Case("compare_unique_train_records", good, [gold, initial], label="right"),
        Case("compare_unique_train_records", twice, [gold, initial], label="duplicate"),
        Case("compare_unique_train_records", foreign, [gold, initial], label="new line"),
        Case("compare_unique_train_records", good, [gold], label="one expected"),
        Case("compare_unique_train_records", missing, [gold, initial], label="missing"),
        Case("compare_conference_city_in_order", right, expected, label="right"),
        Case("compare_conference_city_in_order", wrong, expected, label="one wrong"),
        Case("compare_conference_city_in_order", short, expected, label="empty last cell"),
        Case("compare_conference_city_in_order", right, {"expected": expected["expected"][:20]}, label="few expected"),
        Case("compare_conference_city_in_order", str(tmp_path / "none.xlsx"), expected, label="missing"),
    ])


TIMEDATECTL = ("               Local time: Thu 2024-01-25 12:56:06 WET\n"
               "           Universal time: Thu 2024-01-25 12:56:06 UTC\n"
               "                 RTC time: Thu 2024-01-25 12:56:05\n"
               "                Time zone: {zone}\n"
               "System clock synchronized: yes\n")
DESKTOP = "[Desktop Entry]\nName=Google Maps\nExec=/opt/google/chrome/chrome --app=https://maps.google.com\n"


@pytest.mark.parametrize("unused", [None])
def test_desktop_state_metrics(unused: None) -> None:
    apps = {"expected": ["thunderbird.desktop", "vim.desktop"]}
    jpgs = {"expected": ["a.jpg", "b.jpg"]}
    listing = lambda *names: {"name": "dir", "children": [{"name": n} for n in names]}  # noqa: E731
    shortcuts = {"/home/user/Desktop/maps.desktop": DESKTOP}
    history = [["https://www.amazon.com/x", "Amazon", 1], ["https://example.org/", "Ex", 2]]
    assert_same_verdicts([
        Case("is_utc_0", TIMEDATECTL.format(zone="Atlantic/Faroe (WET, +0000)"), pass_expected=False, label="utc"),
        Case("is_utc_0", TIMEDATECTL.format(zone="Asia/Tokyo (JST, +0900)"), pass_expected=False, label="tokyo"),
        Case("is_utc_0", "Time zone: UTC (UTC, +0000)", pass_expected=False, label="one line"),
        Case("check_gnome_favorite_apps", "['vim.desktop', 'thunderbird.desktop']", apps, label="any order"),
        Case("check_gnome_favorite_apps", "['vim.desktop']", apps, label="one missing"),
        Case("check_gnome_favorite_apps", "['vim.desktop', 'vim.desktop']", apps, label="twice"),
        Case("check_gnome_favorite_apps", "@as []", apps, label="empty gsettings"),
        Case("check_moved_jpgs", listing("b.jpg", "a.jpg"), jpgs, label="right"),
        Case("check_moved_jpgs", listing("a.jpg", "b.jpg", "c.jpg"), jpgs, label="extra"),
        Case("check_moved_jpgs", listing("a.jpg", "a.jpg"), jpgs, label="same twice"),
        Case("check_moved_jpgs", None, jpgs, label="none"),
        Case("is_in_vm_clickboard", {"expected": "/home/user/secret.docx"}, "/home/user/secret.docx\n", label="in"),
        Case("is_in_vm_clickboard", {"expected": ["secret", "docx"]}, "/home/user/secret.docx", label="all in"),
        Case("is_in_vm_clickboard", {"expected": ["secret", "pdf"]}, "/home/user/secret.docx", label="one out"),
        Case("is_in_vm_clickboard", {"expected": "x"}, None, label="none"),
        Case("is_shortcut_on_desktop", shortcuts, {"type": "name", "name": "Google Maps"}, label="name"),
        Case("is_shortcut_on_desktop", shortcuts, {"type": "name", "name": "Bing"}, label="other name"),
        Case("is_shortcut_on_desktop", shortcuts,
             {"type": "exec", "exec": "/opt/google/chrome/chrome --app=https://maps.google.com"}, label="exec"),
        Case("is_shortcut_on_desktop", shortcuts, {"type": "exec", "exec": "/usr/bin/firefox"}, label="other exec"),
        Case("is_shortcut_on_desktop", shortcuts, {"type": "url", "url": "https://maps.google.com"}, label="url"),
        Case("is_shortcut_on_desktop", {}, {"type": "name", "name": "Google Maps"}, label="no shortcuts"),
        Case("check_history_deleted", history, {"type": "keywords", "keywords": ["amazon"]}, label="left"),
        Case("check_history_deleted", history, {"type": "keywords", "keywords": ["ebay"]}, label="deleted"),
        Case("check_history_deleted", [], {"type": "keywords", "keywords": ["amazon"]}, label="empty"),
        Case("check_history_deleted", history, {"type": "domains", "domains": ["ebay"]}, label="other type"),
    ])


def test_newer_reference_tolerance(tmp_path: Path) -> None:
    """Where the reference's newer source (its task tree's) is more tolerant than the pinned
    package the oracle runs, vdesk follows the newer source: cities without case or accents,
    shortcut names and commands that contain one another, an extension's older store name."""
    import openpyxl

    from vdesk.osworld.metrics import lookup

    book = openpyxl.Workbook()
    for row, value in enumerate(["Zürich, Switzerland"] + ["x"] * 20, start=2):
        book.active.cell(row=row, column=3, value=value)
    book.save(tmp_path / "c.xlsx")
    assert lookup("compare_conference_city_in_order")(str(tmp_path / "c.xlsx"),
                                                      {"expected": ["zurich"] + ["X"] * 20}) == 1.0
    shortcuts = {"maps.desktop": DESKTOP}
    assert lookup("is_expected_installed_extensions")(["Zoom for Google Chrome"],
                                                      {"expected": ["Zoom Chrome Extension"]}) == 1.0
    assert lookup("is_shortcut_on_desktop")(shortcuts, {"type": "name", "name": "google maps - directions"}) == 1.0
    assert lookup("is_shortcut_on_desktop")(shortcuts, {"type": "exec", "exec": "--app=https://maps.google.com"}) == 1.0


def test_application_metrics(tmp_path: Path) -> None:
    number = _write(tmp_path / "number.txt", "3.14159\n")
    sentence = _write(tmp_path / "sentence.txt", "The answer is 3.14159.")
    close = _write(tmp_path / "close.txt", "3.141595")
    far = _write(tmp_path / "far.txt", "3.2")
    word = _write(tmp_path / "word.txt", " hello \n")
    other = _write(tmp_path / "other.txt", "hello world")
    missing = str(tmp_path / "missing.txt")
    listing = "ms-python.python\nms-toolsai.jupyter\n"
    tab = {"url": "https://www.google.com/search?q=hello+world&hl=en", "title": "x"}
    assert_same_verdicts([
        Case("is_extension_installed", listing, {"type": "contain", "expected": "ms-python.python"}, label="in"),
        Case("is_extension_installed", listing, {"type": "contain", "expected": "vscodevim"}, label="out"),
        Case("is_extension_installed", listing, {"type": "not_contain", "expected": "vscodevim"}, label="not in"),
        Case("is_extension_installed", listing, {"type": "not_contain", "expected": "ms-toolsai"}, label="is in"),
        Case("is_extension_installed", listing, {"type": "equal", "expected": "x"}, label="other type"),
        Case("is_expected_installed_extensions", ["Zoom for Google Chrome", "uBlock"],
             {"expected": ["Zoom for Google Chrome"]}, label="installed"),
        Case("is_expected_installed_extensions", ["uBlock"], {"expected": ["uBlock", "Dark Reader"]}, label="one missing"),
        Case("is_expected_installed_extensions", [], {"expected": []}, label="none installed"),
        Case("is_expected_active_tab_approximate", tab, {"type": "url", "url": "https://www.google.com/search?q=x"},
             label="query ignored"),
        Case("is_expected_active_tab_approximate", tab["url"], {"type": "url", "url": "https://www.google.com/search"},
             label="url itself"),
        Case("is_expected_active_tab_approximate", tab, {"type": "url", "url": "https://www.google.com/maps?q=x"},
             label="other path"),
        Case("is_expected_active_tab_approximate", tab, {"type": "title", "url": "x"}, label="other type"),
        Case("is_expected_active_tab_approximate", None, {"type": "url", "url": "x"}, label="none"),
        Case("is_expected_search_query", tab, {"expect": {"pattern": r"q=hello\+world"}}, label="found"),
        Case("is_expected_search_query", tab, {"expect": {"pattern": r"q=goodbye"}}, label="other query"),
        Case("is_expected_search_query", {}, {"expect": {"pattern": "q="}}, label="no tab"),
        Case("compare_result_files", number, number, label="same number"),
        Case("compare_result_files", sentence, number, label="number in sentence"),
        Case("compare_result_files", close, number, label="within 1e-4"),
        Case("compare_result_files", far, number, label="far"),
        Case("compare_result_files", word, _write(tmp_path / "w2.txt", "hello"), label="same text"),
        Case("compare_result_files", other, word, label="other text"),
        Case("compare_result_files", missing, number, label="missing"),
        Case("compare_result_files", None, number, label="none"),
    ])


PREFS = ('// Mozilla User Preferences\n'
         'user_pref("mail.spellcheck.inline", false);\n'
         'user_pref("mailnews.default_sort_order", 2);\n'
         'user_pref("mail.identity.id1.fullName", "Ann \\"A\\" Lee");\n'
         'user_pref("mail.server.server1.check_time", 10);\n')
FILTERS = ('version="9"\nlogging="no"\n'
           'name="Move \\"bills\\""\nenabled="yes"\ntype="17"\naction="Move to folder"\n'
           'actionValue="mailbox://nobody@Local%20Folders/Bills"\n'
           'condition="AND (subject,contains,bill) AND (from,is,\\"a@b.c\\")"\n'
           'name="All"\nenabled="no"\ntype="1"\naction="Mark read"\ncondition="ALL"\n')


def test_mail_metrics(tmp_path: Path) -> None:
    prefs = _write(tmp_path / "prefs.js", PREFS)
    broken = _write(tmp_path / "broken.js", PREFS + "user_pref(\"x\", 'single');\n")
    filters = _write(tmp_path / "msgFilterRules.dat", FILTERS)
    orphan = _write(tmp_path / "orphan.dat", 'enabled="yes"\n' + FILTERS)
    folder = _write(tmp_path / "Inbox", "FROM - Mon\nSubject: a\n\nhi\nFROM - Tue\nSubject: b\n\nyo\n")
    other = _write(tmp_path / "Other", "Subject: no separator\n")
    missing = str(tmp_path / "missing")
    rule = lambda method, ref: {"method": method, "ref": ref}  # noqa: E731
    bills = {"name": 'Move "bills"', "enabled": "yes", "action": "Move to folder",
             "condition": ["AND (subject,contains,bill)", 'AND (from,is,"a@b.c")']}
    assert_same_verdicts([
        Case("check_thunderbird_prefs", prefs, {"expect": {"mail.spellcheck.inline": rule("eq", False)}}, label="eq"),
        Case("check_thunderbird_prefs", prefs, {"expect": {"mail.spellcheck.inline": rule("eq", True)}}, label="not eq"),
        Case("check_thunderbird_prefs", prefs, {"expect": {"mail.identity.id1.fullName": rule("re.IGNORECASE", "ann")}},
             label="re flag"),
        Case("check_thunderbird_prefs", prefs, {"expect": {"mail.server.server1.check_time": rule("range.te", [5, 10])}},
             label="range"),
        Case("check_thunderbird_prefs", prefs, {"expect": {"mail.server.server1.check_time": rule("approx:0.5", 10.4)}},
             label="approx"),
        Case("check_thunderbird_prefs", prefs, {"expect": {"mail.absent": rule("eq", 1)}}, label="unset"),
        Case("check_thunderbird_prefs", prefs, {"unexpect": {"mailnews.default_sort_order": rule("eq", 2)}},
             label="unexpected"),
        Case("check_thunderbird_prefs", prefs, {"expect": {"mailnews.default_sort_order": rule("gt", "1")}},
             label="uncomparable"),
        Case("check_thunderbird_prefs", broken, {"expect": {}}, label="not json"),
        Case("check_thunderbird_prefs", None, {"expect": {}}, label="none"),
        Case("check_thunderbird_filter", filters, {"expect": [bills]}, label="found"),
        Case("check_thunderbird_filter", filters, {"expect": [{"name": "All", "condition": ["ALL"]}]}, label="all"),
        Case("check_thunderbird_filter", filters, {"expect": [{**bills, "enabled": "no"}]}, label="disabled"),
        Case("check_thunderbird_filter", filters, {"expect": [bills], "unexpect": [{"name": "All"}]}, label="unexpected"),
        Case("check_thunderbird_filter", orphan, {"expect": []}, label="field before a name"),
        Case("check_thunderbird_filter", missing, {"expect": []}, label="missing"),
        Case("check_thunderbird_folder", folder, folder, label="same"),
        Case("check_thunderbird_folder", other, folder, label="other"),
        Case("check_thunderbird_folder", [folder, other], [folder, other], label="lists"),
        Case("check_thunderbird_folder", None, folder, label="none"),
        Case("check_thunderbird_folder", folder, folder, {"remove_duplicate": False, "ignore_status": True},
             label="options"),
    ])


def test_zip_metric(tmp_path: Path) -> None:

    def archive(name: str, members: dict[str, bytes]) -> str:
        return _zip(tmp_path / name, members)

    gold = archive("gold.zip", {"a.txt": b"alpha\n", "dir/b.txt": b"beta"})
    same = archive("same.zip", {"dir/b.txt": b"beta", "a.txt": b"alpha\n"})
    changed = archive("changed.zip", {"a.txt": b"alpha", "dir/b.txt": b"beta"})
    fewer = archive("fewer.zip", {"a.txt": b"alpha\n"})
    not_zip = _write(tmp_path / "not.zip", "plain text")
    assert_same_verdicts([
        Case("compare_zip_files", same, gold, label="same, other order"),
        Case("compare_zip_files", changed, gold, label="one byte less"),
        Case("compare_zip_files", fewer, gold, label="member missing"),
        Case("compare_zip_files", not_zip, gold, label="not a zip"),
        Case("compare_zip_files", str(tmp_path / "missing.zip"), gold, label="missing"),
        Case("compare_zip_files", None, gold, label="none"),
    ])


def test_epub_metric(tmp_path: Path) -> None:

    def book(name: str, members: dict[str, str]) -> str:
        return _zip(tmp_path / name, members)

    opf = '<package>\n<dc:identifier>id-1</dc:identifier>\n<dc:title>T</dc:title>\n</package>\n'
    toc = '<ncx>\n<navPoint id="1">\n<text>One</text>\n</ncx>\n'
    page = "<html><body>\n<h1>One</h1>\n<p>first page</p><p>more</p></body></html>"
    gold = book("gold.epub", {"content.opf": opf, "toc.ncx": toc, "ch1.html": page})
    other_id = book("id.epub", {"content.opf": opf.replace("id-1", "id-2"), "toc.ncx": toc, "ch1.html": page})
    edited = book("edited.epub", {"content.opf": opf, "toc.ncx": toc, "ch1.html": page.replace("more", "less")})
    nested = book("nested.epub", {"content.opf": opf, "OEBPS/ch1.html": page})
    assert_same_verdicts([
        Case("compare_epub", other_id, gold, label="only the identifier differs"),
        Case("compare_epub", edited, gold, label="one paragraph edited"),
        Case("compare_epub", book("less.epub", {"content.opf": opf}), gold, label="fewer pieces"),
        Case("compare_epub", nested, gold, label="html in a folder"),
        Case("compare_epub", _write(tmp_path / "plain.epub", "text"), gold, label="not a zip"),
        Case("compare_epub", None, gold, label="none"),
    ])


def test_archive_metric(tmp_path: Path) -> None:
    import tarfile

    def zipped(name: str, members: dict[str, str]) -> str:
        return _zip(tmp_path / name, members)

    def tarred(name: str, members: dict[str, str]) -> str:
        with tarfile.open(tmp_path / name, "w:gz") as handle:
            for member, text in members.items():
                info = tarfile.TarInfo(member)
                info.size = len(text.encode())
                handle.addfile(info, io.BytesIO(text.encode()))
        return str(tmp_path / name)

    import io

    gold = zipped("gold.zip", {"out/a.txt": "one\n", "out/b.txt": "two\n"})
    same = zipped("same.zip", {"out/b.txt": "two\n", "out/a.txt": "one\n"})
    half = zipped("half.zip", {"out/a.txt": "one\n", "out/b.txt": "three\n"})
    renamed = zipped("renamed.zip", {"out/a.txt": "one\n", "out/c.txt": "two\n"})
    tar_same = tarred("same.tar.gz", {"out/a.txt": "one\n", "out/b.txt": "two\n"})
    assert_same_verdicts([
        Case("compare_archive", same, gold, {"file_path": "out"}, label="same"),
        Case("compare_archive", half, gold, {"file_path": "out"}, label="one of two"),
        Case("compare_archive", renamed, gold, {"file_path": "out"}, label="renamed"),
        Case("compare_archive", tar_same, gold, {"file_path": "out", "file_type": "text"}, label="tar"),
        Case("compare_archive", None, gold, {"file_path": "out"}, label="none"),
    ])


def test_archive_members_outside_or_links_are_refused(tmp_path: Path) -> None:
    """An archive from the desktop never writes outside its temporary folder: a member named
    with ``..`` or a symbolic link makes it score 0 and nothing lands next to it."""
    import io
    import tarfile
    import zipfile

    from vdesk.osworld.metrics import lookup

    with zipfile.ZipFile(tmp_path / "evil.zip", "w") as handle:
        handle.writestr("../escaped.txt", "x")
    with tarfile.open(tmp_path / "link.tar", "w") as handle:
        link = tarfile.TarInfo("out/a.txt")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        handle.addfile(link)
        data = tarfile.TarInfo("out/b.txt")
        data.size = 1
        handle.addfile(data, io.BytesIO(b"x"))
    compare = lookup("compare_archive")
    assert compare(str(tmp_path / "evil.zip"), str(tmp_path / "evil.zip")) == 0.0
    assert compare(str(tmp_path / "link.tar"), str(tmp_path / "link.tar"), file_path="out") == 0.0
    assert not (tmp_path.parent / "escaped.txt").exists()
