"""OSWorld's general metrics: values, strings, lists, JSON, text files, accessibility trees.

``expected`` is mostly a ``rule`` getter's value, a dict such as ``{"expected": ...}``,
``{"include": [...], "exclude": [...]}`` or ``{"expect": [...], "unexpect": [...]}``.
"""

from __future__ import annotations

import difflib
import json
import operator
import re
from collections.abc import Callable, Mapping
from typing import Any

from rapidfuzz import fuzz

from vdesk.errors import DocumentError, UnsupportedMetric
from vdesk.osworld.metrics.inputs import read_json, read_text, result_text
from vdesk.osworld.metrics.registry import metric


def _rule(expected: Any, key: str) -> Any:
    if not isinstance(expected, Mapping) or key not in expected:
        raise UnsupportedMetric(f"the expected value must be a rule with {key!r}, got {str(expected)[:120]}")
    return expected[key]


@metric("exact_match")
def exact_match(result: Any, expected: Any) -> float:
    """``result`` equals ``expected["expected"]``."""
    return float(result == _rule(expected, "expected"))


@metric("check_include_exclude")
def check_include_exclude(result: Any, expected: Any) -> float:
    """Every ``include`` string is in ``result`` and no ``exclude`` string is."""
    if result is None:
        return 0.0
    rules = expected if isinstance(expected, Mapping) else {}
    text = str(result)
    return float(all(s in text for s in rules.get("include", [])) and
                 not any(s in text for s in rules.get("exclude", [])))


@metric("match_in_list")
def match_in_list(result: Any, expected: Any) -> float:
    """``result`` is one of ``expected["expected"]``."""
    return float(result in _rule(expected, "expected"))


@metric("is_in_list")
def is_in_list(result: Any, expected: Any) -> float:
    """``expected["expected"]`` is one of ``result`` (a list) or a part of it (a string)."""
    if result is None:
        return 0.0
    return float(_rule(expected, "expected") in result)


@metric("check_list")
def check_list(result: Any, expected: Any) -> float:
    """``result`` is a text file: each ``expect`` pattern matches one of its lines, and no
    ``unexpect`` pattern matches any."""
    text = result_text(result)
    if text is None:
        return 0.0
    lines = text.splitlines()
    rules = expected if isinstance(expected, Mapping) else {}
    found = lambda pattern: any(re.search(pattern, line) for line in lines)  # noqa: E731
    return float(all(found(p) for p in rules.get("expect", [])) and
                 not any(found(p) for p in rules.get("unexpect", [])))


@metric("check_direct_json_object", options=("expect_in_result",))
def check_direct_json_object(result: Any, expected: Any, expect_in_result: bool = False) -> float:
    """``result`` (a dict) holds each key of ``expected["expected"]`` with exactly that value
    (an ``ignore_list_order`` key among them scores 0, as the reference's sort of its ``true``
    fails). With ``expect_in_result`` (in the rule or as an option) each expected value is found
    in the result's: a string is a case-sensitive substring of it, a list of candidates accepts
    any one (in a result list, or equal to a result string). A string ``result`` (a command's
    output) is read as JSON first, single quotes taken for double ones, as the reference reads
    it; one that is not JSON scores 0."""
    if isinstance(result, str):
        try:
            result = json.loads(result.strip().replace("'", '"'))
        except json.JSONDecodeError:
            return 0.0
    wanted = _rule(expected, "expected")
    if not isinstance(result, Mapping) or not isinstance(wanted, Mapping):
        return 0.0
    if any(value == "__EVALUATION_FAILED__" for value in wanted.values()):  # a getter's failure mark
        return 0.0
    contained = bool(expect_in_result or (isinstance(expected, Mapping) and expected.get("expect_in_result")))
    if not contained:
        return float("ignore_list_order" not in wanted and all(result.get(k) == v for k, v in wanted.items()))
    return float(all(_found(result.get(key), value) for key, value in wanted.items()))


def _found(got: Any, want: Any) -> bool:
    """``want`` found in ``got`` the way the reference's contains mode finds it."""
    if isinstance(want, list):
        return any((isinstance(got, list) and item in got) or (isinstance(got, str) and item == got)
                   for item in want)
    if isinstance(want, str):
        return isinstance(got, (str, list, dict)) and want in got
    return False


_COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
    "gt": operator.gt, "ge": operator.ge,
}


def match_value(value: Any, rule: Mapping[str, Any]) -> bool:
    """One ``{"method": ..., "ref": ...}`` check of OSWorld's rules: eq/ne/lt/le/gt/ge,
    ``re`` (a search), ``approx:<tolerance>``, ``str_list_eq``, ``str_set_eq``."""
    method, ref = str(rule.get("method", "eq")), rule.get("ref")
    if method in _COMPARISONS:
        try:
            return bool(_COMPARISONS[method](value, ref))
        except TypeError:
            return False
    if method == "re":
        return value is not None and re.search(str(ref), str(value)) is not None
    if method.startswith("approx:"):
        try:
            return abs(float(value) - float(ref)) <= float(method.split(":", 1)[1])
        except (TypeError, ValueError):
            return False
    if method in ("str_list_eq", "str_set_eq"):
        items = [s.strip() for s in str(value).split(",")] if value is not None else []
        return items == list(ref) if method == "str_list_eq" else set(items) == set(ref)
    raise UnsupportedMetric(f"rule method {method!r} is not supported")


@metric("check_json", options=("is_yaml",))
def check_json(result: Any, expected: Any, is_yaml: bool = False) -> float:
    """``result`` is a JSON (or YAML) file; each ``expect`` rule ``{"key": [path...], "method",
    "ref"}`` holds at that path, and no ``unexpect`` rule does."""
    if result is None:
        return 0.0
    if is_yaml:
        import yaml

        try:
            document = yaml.safe_load(result_text(result) or "")
        except yaml.YAMLError:
            return 0.0
    else:
        try:
            document = read_json(result)
        except DocumentError:
            return 0.0
    rules = expected if isinstance(expected, Mapping) else {}

    def holds(rule: Mapping[str, Any]) -> bool:
        value: Any = document
        for key in rule.get("key", []):
            if isinstance(value, Mapping) and key in value:
                value = value[key]
            elif isinstance(value, list) and isinstance(key, int) and -len(value) <= key < len(value):
                value = value[key]
            else:
                return False
        return match_value(value, rule)

    return float(all(holds(r) for r in rules.get("expect", [])) and
                 not any(holds(r) for r in rules.get("unexpect", [])))


@metric("file_contains")
def file_contains(result: Any, expected: Any) -> float:
    """The text file ``result`` contains every string of ``expected["expected"]``."""
    text = result_text(result)
    if text is None:
        return 0.0
    return float(all(s in text for s in _rule(expected, "expected")))


CLOCK_TIME = re.compile(r"([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)")


@metric("check_line_number")
def check_line_number(result: Any, expected: Any) -> float:
    """The text file ``result`` has ``expected["expected"]`` lines holding a clock time
    (HH:MM:SS), as the reference counts them."""
    text = result_text(result)
    if text is None:
        return 0.0
    count = sum(1 for line in text.splitlines() if CLOCK_TIME.search(line))
    return float(count == int(_rule(expected, "expected")))


@metric("diff_text_file")
def diff_text_file(result: Any, expected: Any) -> float:
    """How alike two text files are, line by line (the reference's unit): difflib's ratio over
    their lists of lines, 1.0 when identical."""
    text = result_text(result)
    if text is None or expected is None:
        return 0.0
    return difflib.SequenceMatcher(None, text.splitlines(), read_text(expected).splitlines()).ratio()


@metric("literal_match", options=("type", "ignore_case"))
def literal_match(result: Any, expected: Any, type: str = "str", ignore_case: bool = False) -> float:  # noqa: A002
    """``result`` equals ``expected`` as text (``str()`` of each, as the reference compares), or
    item by item as a list."""
    fold = (lambda s: str(s).lower()) if ignore_case else str
    if type == "str":
        return float(fold(result) == fold(expected))
    if type == "list":
        if not isinstance(result, (list, tuple)) or not isinstance(expected, (list, tuple)) or len(result) != len(expected):
            return 0.0
        return float(all(fold(a) == fold(b) for a, b in zip(result, expected)))
    raise UnsupportedMetric(f"literal_match: type {type!r} is not supported (str, list)")


@metric("fuzzy_match")
def fuzzy_match(result: Any, expected: Any) -> float:
    """How alike ``result`` and ``expected["expected"]`` are, rapidfuzz's ratio over 100."""
    if result is None:
        return 0.0
    return fuzz.ratio(str(result), str(_rule(expected, "expected"))) / 100.0


# -- accessibility trees ---------------------------------------------------------------------
NAMESPACES = {name: f"https://accessibility.ubuntu.example.org/ns/{path}" for name, path in (
    ("st", "state"), ("attr", "attributes"), ("cp", "component"), ("doc", "document"),
    ("docattr", "document/attributes"), ("txt", "text"), ("val", "value"), ("act", "action"))}


@metric("check_accessibility_tree")
def check_accessibility_tree(result: Any, expected: Any) -> float:
    """``result`` is OSWorld's accessibility XML; each rule (one dict or a list) selects nodes
    by ``selectors`` (CSS) or ``xpath`` and, with ``text``, needs one whose text matches
    (``exact``, default true; else rapidfuzz's ratio, the best node's). The product of the rules."""
    if not result:
        return 0.0
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False)
    try:
        root = etree.fromstring(str(result).encode(), parser)
    except etree.XMLSyntaxError:
        return 0.0
    score = 1.0
    for rule in expected if isinstance(expected, list) else [expected]:
        score *= _tree_rule(root, rule)
        if score == 0:
            break
    return score


def _tree_rule(root: Any, rule: Mapping[str, Any]) -> float:
    if "xpath" in rule:
        nodes = root.xpath(rule["xpath"], namespaces=NAMESPACES)
    elif "selectors" in rule:
        from lxml.cssselect import CSSSelector

        nodes = []
        for selector in rule["selectors"]:
            nodes.extend(CSSSelector(selector, namespaces=NAMESPACES)(root))
    else:
        raise UnsupportedMetric("check_accessibility_tree: a rule needs 'selectors' or 'xpath'")
    if not nodes:
        return 0.0
    if "text" not in rule:
        return 1.0
    wanted = str(rule["text"])
    texts = [node if isinstance(node, str) else (node.text or "") for node in nodes]
    if rule.get("exact", True):
        return float(any(t == wanted for t in texts))
    return max(fuzz.ratio(t, wanted) / 100.0 for t in texts)


@metric("compare_text_file", options=("ignore_blanks", "ignore_case"))
def compare_text_file(result: Any, expected: Any, ignore_blanks: bool = False, ignore_case: bool = False) -> float:
    """Two text files say the same; ``ignore_blanks``: runs of whitespace count as one space."""
    text = result_text(result)
    if text is None or expected is None:
        return 0.0
    want = read_text(expected)
    if ignore_blanks:
        text, want = (re.sub(r"\s+", " ", t).strip() for t in (text, want))
    if ignore_case:
        text, want = text.lower(), want.lower()
    return float(text == want)


@metric("check_json_settings")
def check_json_settings(result: Any, expected: Any) -> float:
    """The JSON file ``result`` (a settings file) holds every key of ``expected["expected"]`` with its value."""
    if result is None:
        return 0.0
    try:
        settings = read_json(result)
    except DocumentError:
        return 0.0
    wanted = _rule(expected, "expected")
    return float(isinstance(settings, Mapping) and all(settings.get(k) == v for k, v in wanted.items()))


@metric("compare_config", options=("containment_ok",))
def compare_config(result: Any, expected: Any, containment_ok: bool = False) -> float:
    """The text file ``result`` is exactly ``expected["expected"]``; with ``containment_ok``, the
    expected JSON is contained in the file's (every key of an expected object present with a
    contained value; lists and other values equal), or, when either is not JSON, the expected
    text (stripped) is a part of the file's.

    The pinned reference ignores ``containment_ok`` (exact text only); OSWorld's later source,
    which the task that sets it was written for, reads it so: a settings file VS Code wrote
    (indented, other keys beside) cannot equal the one-line expected text."""
    text = result_text(result)
    wanted = _rule(expected, "expected")
    if text is None:
        return 0.0
    if not containment_ok:
        return float(text == wanted)
    if not wanted:
        return 0.0
    try:
        return float(_contained(json.loads(wanted), json.loads(text)))
    except (json.JSONDecodeError, TypeError):
        return float(str(wanted).strip() in text)


def _contained(wanted: Any, got: Any) -> bool:
    if isinstance(wanted, dict):
        return isinstance(got, dict) and all(k in got and _contained(v, got[k]) for k, v in wanted.items())
    return bool(wanted == got)
