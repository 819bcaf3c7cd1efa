"""OSWorld's browser metrics, over what the browser getters read: the active tab (a dict with
``url``, or the URL itself), the open tabs (dicts with ``url``), the Bookmarks file's ``roots``."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse, urlunparse

from vdesk.errors import UnsupportedMetric
from vdesk.osworld.metrics.registry import metric


def _url(tab: Any) -> str | None:
    if isinstance(tab, Mapping):
        return tab.get("url")
    return tab if isinstance(tab, str) else None


def _rule_type(rule: Any, name: str, supported: tuple[str, ...]) -> str:
    kind = rule.get("type") if isinstance(rule, Mapping) else None
    if kind not in supported:
        raise UnsupportedMetric(f"{name}: rule type {kind!r} is not supported (supported: {', '.join(supported)})")
    return str(kind)


@metric("is_expected_url_pattern_match")
def is_expected_url_pattern_match(result: Any, expected: Any) -> float:
    """The active tab's URL matches (searches) every pattern of ``expected["expected"]``."""
    url = _url(result)
    if not url or not isinstance(expected, Mapping):
        return 0.0
    return float(all(re.search(pattern, url) for pattern in expected.get("expected", [])))


@metric("is_expected_active_tab")
def is_expected_active_tab(result: Any, expected: Any) -> float:
    """The active tab's URL is ``expected["url"]`` as the reference compares addresses (see
    :func:`_site`: ``https://www.example.com/`` is ``https://example.com``; rule type ``url``)."""
    _rule_type(expected, "is_expected_active_tab", ("url",))
    if not result:
        return 0.0
    return float(_same_url(expected["url"], _url(result)))


@metric("is_expected_tabs")
def is_expected_tabs(result: Any, expected: Any) -> float:
    """The open tabs' URLs are ``expected["urls"]``, as many and each found among them (in any
    order, compared as :func:`_site` reads addresses; rule type ``url``). No tab open: 0."""
    _rule_type(expected, "is_expected_tabs", ("url",))
    if not result or not isinstance(result, list):
        return 0.0
    urls, wanted = [_url(tab) for tab in result], list(expected["urls"])
    return float(len(urls) == len(wanted) and all(any(_same_url(w, u) for u in urls) for w in wanted))


BOOKMARK_RULES = ("bookmark_bar_folders_names", "bookmark_bar_websites_urls", "liked_authors_websites_urls")


@metric("is_expected_bookmarks")
def is_expected_bookmarks(result: Any, expected: Any) -> float:
    """The bookmarks bar holds the expected folders (``names``) or sites (``urls``), as sets;
    ``liked_authors_websites_urls``: the folder "Liked Authors" holds one site of each
    expected group of URLs, and nothing else."""
    kind = _rule_type(expected, "is_expected_bookmarks", BOOKMARK_RULES)
    if not isinstance(result, Mapping):
        return 0.0
    bar = (result.get("bookmark_bar") or {}).get("children") or []
    if kind == "bookmark_bar_folders_names":
        return float({b.get("name") for b in bar if b.get("type") == "folder"} == set(expected["names"]))
    if kind == "bookmark_bar_websites_urls":
        return float({b.get("url") for b in bar if b.get("type") == "url"} == set(expected["urls"]))
    folder = next((b for b in bar if b.get("type") == "folder" and b.get("name") == "Liked Authors"), None)
    if folder is None:
        return 0.0
    urls = [b.get("url") for b in folder.get("children") or [] if b.get("type") == "url"]
    groups = [set(group) if isinstance(group, list) else {group} for group in expected["urls"]]
    return float(len(urls) == len(groups) and all(any(u in g for u in urls) for g in groups)
                 and all(any(u in g for g in groups) for u in urls))


@functools.cache
def _extractor() -> Any:
    """tldextract over the public suffix list it ships with: it fetches the live list unless told
    not to, and the desktops and this machine's tests have no web (the reference, offline, falls
    back to the same list)."""
    import tldextract

    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


def _site(url: str) -> str:
    """An address as the reference compares sites: scheme ``http`` when it has none, the host
    reduced to its registered name and any subdomain but ``www`` (``amazon.com``,
    ``www.amazon.co.uk`` and ``.amazon.com`` are all ``amazon``), a bare ``/`` path dropped."""
    parsed = urlparse(url if re.match(r"^[a-zA-Z][a-zA-Z0-9+\-.]*://", url) else f"http://{url}")
    parts = _extractor()(parsed.netloc.lower())
    subdomain = "" if parts.subdomain == "www" else parts.subdomain
    host = f"{subdomain}.{parts.domain}" if subdomain else parts.domain
    return urlunparse((parsed.scheme.lower(), host, "" if parsed.path == "/" else parsed.path,
                       parsed.params, parsed.query, parsed.fragment))


def _same_url(first: str | None, second: str | None) -> bool:
    """Two addresses are the same site and page as the reference compares them (None only equals None)."""
    if first is None or second is None:
        return first == second
    return _site(first) == _site(second)


@metric("is_cookie_deleted")
def is_cookie_deleted(result: Any, expected: Any) -> float:
    """No cookie (rows of the Cookies database: the host is the second field) is of a site
    the rule names (``{"type": "domains", "domains": [...]}``, the only type the reference has)."""
    _rule_type(expected, "is_cookie_deleted", ("domains",))
    if not isinstance(result, list):
        return 0.0
    try:
        hosts = [_site(str(row[1])) for row in result]
    except (TypeError, IndexError, KeyError):
        return 0.0
    return float(not any(_site(domain) == host for domain in expected["domains"] for host in hosts))


@metric("is_added_to_steam_cart")
def is_added_to_steam_cart(result: Any, expected: Any) -> float:
    """Every one of ``expected["items"]`` appears in the page's HTML (``page_info``'s
    ``content``: the shop's cart page)."""
    if not isinstance(result, Mapping) or not isinstance(expected, Mapping):
        return 0.0
    content, items = result.get("content"), expected.get("items")
    if not isinstance(content, str) or not isinstance(items, list):
        return 0.0
    return float(all(isinstance(item, str) and item in content for item in items))
