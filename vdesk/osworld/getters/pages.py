"""The getters that read web pages: parts of the shown tab's HTML (``active_tab_html_parse``),
parts of its address (``active_tab_url_parse``, ``url_dashPart``, ``url_path_parse``), and a
page loaded in a tab of its own (``page_info``, ``pdf_from_url``).

The reference finds the shown tab's address in the address bar (AT-SPI) with ``goto_prefix``
put before what the bar shows (the bar hides ``https://www.``), then looks for the tab of that
address over CDP. The address getters read the bar as it does (an address typed with no network
is in the bar, not in any page); the HTML getters ask the browser which tab is shown
(:func:`inside.active_url`), which is the address the prefix rebuilds. What each getter returns for a page is what the reference's
returns, values and keys alike (the differential tests compare them on the same desktop).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from vdesk.errors import BrowserError
from vdesk.osworld import inside
from vdesk.osworld.getters.browser import shown_address
from vdesk.osworld.getters.registry import getter
from vdesk.osworld.steps import Context, _cache_path

PAGE_TIMEOUT = 60.0     # the reference's bound on loading a page
# What the reference writes when printing a page failed three times: a PDF with no pages.
EMPTY_PDF = b"%PDF-1.4\n%EOF\n"


def _active_url(context: Context) -> str:
    return context.call(inside.active_url, timeout=90)


# -- the shown tab's HTML ---------------------------------------------------------------------
@getter("active_tab_html_parse")
def active_tab_html_parse(context: Context, settings: dict[str, Any]) -> dict[str, Any]:
    """Texts of the shown tab's elements, named by the task, per ``category``: ``class`` (CSS
    classes: the n-th element's text, its direct text nodes, its ``h3``, or which of a list of
    texts appear), ``xpath`` (the first element's text), ``input`` (a form field's value),
    ``label`` (Playwright's ``text=`` selector), ``class&url`` (texts and words of the address)."""
    category = settings["category"]
    reader = _PageReader(context)
    if category == "class":
        return _by_class(reader, settings)
    if category == "label":
        return {key: reader.label(selector) for selector, key in settings.get("labelObject", {}).items()}
    if category == "xpath":
        return {key: _first(reader.read("xpath", xpath)) for xpath, key in settings.get("xpathObject", {}).items()}
    if category == "input":
        return {key: _first(reader.read("value", xpath)) for xpath, key in settings.get("inputObject", {}).items()}
    if category == "class&url":
        return _by_class_and_url(reader, settings)
    return {}


class _PageReader:
    """The shown tab's parts, one selector a read; a selector the page rejects reads as nothing."""

    def __init__(self, context: Context) -> None:
        self._context = context

    def read(self, kind: str, selector: str) -> list[str]:
        answer = self._context.call(inside.page_parts, [(kind, selector)], PAGE_TIMEOUT, timeout=PAGE_TIMEOUT * 2 + 30)[0]
        return [text.strip() for text in answer or []]

    def address(self) -> str:
        return _active_url(self._context)

    def label(self, selector: str) -> str:
        try:
            text = self._context.call(inside.first_text, f"text={selector}", timeout=60)
        except BrowserError:
            return ""
        return text.strip() if text else ""


def _first(texts: list[str]) -> str:
    return texts[0] if texts else ""


def _ranked(found: dict[str, Any], texts: list[str], ranks: dict[str, str]) -> None:
    """``ranks`` maps a position among the elements (a number as text) to the key of its text."""
    for rank, key in ranks.items():
        index = int(rank)
        found[key] = texts[index] if len(texts) > index else ""


def _by_class(reader: _PageReader, settings: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, ranks in settings.get("class_multiObject", {}).items():
        _ranked(found, reader.read("text", "." + name), ranks)
    for name, ranks in settings.get("class_multiObject_child", {}).items():
        _ranked(found, reader.read("direct", "." + name), ranks)
    for name, ranks in settings.get("class_multiObject_only_child", {}).items():
        _ranked(found, reader.read("h3", "." + name), ranks)
    for name, wanted in settings.get("class_multiObject_search_exist", {}).items():
        texts = reader.read("text", "." + name)
        for item in wanted:
            if item != "is_other_exist":
                found[item] = item in texts
        if "is_other_exist" in wanted:
            if any(text not in wanted for text in texts):
                found["is_other_exist"] = True
            found.setdefault("is_other_exist", False)
    for name, key in settings.get("class_singleObject", {}).items():
        found[key] = _first(reader.read("text", "." + name))
    return found


def _by_class_and_url(reader: _PageReader, settings: dict[str, Any]) -> dict[str, Any]:
    """Which of the wanted texts the elements show (keys lower-cased), whether any element shows
    a text that no wanted one holds (``is_other_exist``), which wanted words the address holds."""
    found: dict[str, Any] = {}
    for kind, field in (("text", "class_multiObject"), ("li", "class_multiObject_li")):
        for name, wanted in settings.get(field, {}).items():
            texts = reader.read(kind, "." + name)
            for item in wanted:
                if any(item.lower() == text.lower() for text in texts):
                    found[item.lower()] = True
            if any(all(text.lower() not in item.lower() for item in wanted) for text in texts):
                found["is_other_exist"] = True
            found.setdefault("is_other_exist", False)
    words = {key: key for key in settings.get("url_include_expected", [])}
    choices = settings.get("url_include_expected_multichoice", {})
    if words or choices:
        url = reader.address().lower()
        for word, key in [*words.items(), *choices.items()]:
            found.setdefault(key.lower(), word.lower() in url)
    return found


# -- the shown tab's address ------------------------------------------------------------------
@getter("active_tab_url_parse")
def active_tab_url_parse(context: Context, settings: dict[str, Any]) -> dict[str, Any] | None:
    """The first value of each of ``parse_keys`` in the address's query ("" when absent), some
    keys renamed (``replace``), each value split at commas (``split_list``)."""
    url = shown_address(context, settings)
    if url is None:
        return None
    query = parse_qs(urlparse(url).query)
    values: dict[str, Any] = {key: query.get(key, [""])[0] for key in settings["parse_keys"]}
    for old, new in settings.get("replace", {}).items():
        values[new] = values.pop(old)
    if settings.get("split_list", False):
        values = {key: value.split(",") for key, value in values.items()}
    return values


@getter("url_dashPart")
def url_dash_part(context: Context, settings: dict[str, Any]) -> Any:
    """The ``partIndex``-th piece of the address split at ``/`` (its query cut off with
    ``needDeleteId``), as a string or as ``{key: piece}`` (``returnType`` ``json``)."""
    url = shown_address(context, settings)
    if url is None:
        return None
    try:
        index = int(settings["partIndex"])
    except (ValueError, TypeError):
        return None
    parts = url.split("/")
    if index >= len(parts):
        return None
    part = parts[index]
    if settings.get("needDeleteId", False):
        part = part.split("?")[0]
    if settings["returnType"] == "string":
        return part
    if settings["returnType"] == "json":
        return {settings["key"]: part}
    return None


@getter("url_path_parse")
def url_path_parse(context: Context, settings: dict[str, Any]) -> dict[str, Any] | None:
    """A clothing shop's filters as its addresses put them in the path: a segment of filter
    names followed by a segment of their values (both comma-separated). Gives
    ``mens_clothing``, ``shirts`` and ``short_sleeve`` (True, or None when the path does not say
    so) and each of ``parse_keys`` found among the filters (``Price_discount_range``: whether the
    50 % band is the only discount band chosen, as the reference words it)."""
    url = shown_address(context, settings)
    if url is None:
        return None
    path = unquote(urlparse(url).path)
    found: dict[str, Any] = {"mens_clothing": True if "mens-clothing" in path else None}
    filters, shirts, short_sleeve = _path_filters(path)
    found["shirts"] = True if shirts or "shirts" in path else None
    found["short_sleeve"] = True if short_sleeve or "short-sleeve" in path else None
    for key in settings["parse_keys"]:
        if key not in filters:
            continue
        if key == "Price_discount_range":
            bands = filters[key]
            only_half = (bands is not None and "50_PERCENT_ off & more" in bands
                         and "30_PERCENT_ off & more" not in bands and "20_PERCENT_ off & more" not in bands)
            found[key] = "50_PERCENT_ off & more" if only_half else "not_50_PERCENT_ off & more"
        else:
            found[key] = filters[key]
    return found


def _path_filters(path: str) -> tuple[dict[str, Any], bool, bool]:
    """The first pair of comma-holding path segments as filter name → value (price bands as a
    list, split at ``|``), and whether they name shirts and short sleeves."""
    parts = path.strip("/").split("/")
    filters: dict[str, Any] = {}
    shirts = short_sleeve = False
    for names, values in zip(parts, parts[1:]):
        if "," not in names or "," not in values:
            continue
        for name, value in zip((n.strip() for n in names.split(",")), (v.strip() for v in values.split(","))):
            if name == "Price_discount_range":
                filters[name] = [band.strip() for band in value.split("|")] if value else None
            else:
                filters[name] = value or None
            shirts |= name == "Product_department" and value in ("shirts", "Shirts", "Shirt")
            short_sleeve |= name == "Sleeve_length" and value in ("short-sleeve", "Short Sleeve")
        break
    for name in ("Men_regular_size_t", "Price_discount_range"):
        filters.setdefault(name, None)
    return filters, shirts, short_sleeve


# -- a page of its own --------------------------------------------------------------------------
@getter("page_info")
def page_info(context: Context, settings: dict[str, Any]) -> dict[str, str]:
    """``url`` loaded in a new tab: where it ended, its title and its HTML.

    The tab is one of the user's (the browser's own context, its cookies with it), as OSWorld's
    later getter opens it: the pinned one opens a fresh context, where a shop's cart page would
    show no cart. A page of no site (a file, the tests' pages) reads the same either way."""
    try:
        seen = context.call(inside.visit, settings["url"], False, PAGE_TIMEOUT, timeout=PAGE_TIMEOUT * 2 + 60)
    except BrowserError:
        return {"title": "Connection failed", "url": settings["url"], "content": ""}
    return {"title": seen.title, "url": seen.url, "content": seen.html}


@getter("pdf_from_url")
def pdf_from_url(context: Context, settings: dict[str, Any]) -> str:
    """``path`` (an address) loaded in a new tab and printed to PDF, into the cache as ``dest``;
    a page that cannot be printed gives the reference's empty PDF."""
    target = _cache_path(context, settings["dest"])
    try:
        seen = context.call(inside.visit, settings["path"], True, PAGE_TIMEOUT, timeout=PAGE_TIMEOUT * 2 + 60)
        target.write_bytes(seen.pdf or EMPTY_PDF)
    except BrowserError:
        target.write_bytes(EMPTY_PDF)
    return str(target)
