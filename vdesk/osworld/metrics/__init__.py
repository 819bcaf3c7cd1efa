"""OSWorld's metrics by name: each compares what a getter fetched (``result``) with what the
task expects (``expected``) and returns a score in [0, 1].

    from vdesk.osworld.metrics import lookup

    metric = lookup("compare_table")          # UnsupportedMetric for a name we do not implement
    metric.check_options({"rules": [...]})    # UnsupportedMetric for an option or rule we do not
    score = metric(result, expected, **options)

What ``result`` and ``expected`` are depends on the getter, as in the reference:

- file getters (``vm_file``, ``cache_file``, ``cloud_file``): a path on the host (``str``), a list
  of paths when the getter fetched several, or ``None`` when the file was missing (score 0);
- ``rule`` / ``rule_relativeTime``: the task's own JSON value (usually a dict, e.g.
  ``{"expected": "..."}`` or ``{"rules": [...]}``);
- command getters (``vm_command_line``, ``vm_terminal_output``…): a string;
- browser and settings getters: dicts and lists of the values read (a URL, a tab list, a
  bookmarks tree, a settings value).

Metrics are pure: they read files the getters already brought to the host and never touch a
desktop. Those files are untrusted; the readers bound their size, refuse zip bombs and never
expand XML entities. One metric runs code, ``check_python_file_by_test_suite``: the task's test
file against the desktop's Python files, in a throwaway osworld container with no network (the
reference runs them in its own process on the host). A file that cannot be read scores 0 the way
the reference scores it, except when it is the *expected* file (the task's own fault): that raises
:class:`DocumentError`.
"""

from __future__ import annotations

from vdesk.errors import UnsupportedMetric
from vdesk.osworld.metrics import (apps, archives, browser, documents, files, general, images, mail, media, records,
                                   settings, slides, system, tables, testsuite, writer)
from vdesk.osworld.metrics.registry import Metric, registered

__all__ = ["Metric", "UnsupportedMetric", "known", "lookup", "names"]

_FAMILIES = (general, tables, documents, browser, settings, files, records, system, apps, mail, archives, images,
             slides, writer, media, testsuite)  # imported for their registrations


# Metrics vdesk leaves out on purpose: why, as a skipped task says it.
NOT_SUPPORTED = {
    # An evaluator whose func is "infeasible" is judged by the agent's last action (the evaluator
    # module); inside a list of metrics the reference calls its infeasible() with a result, which
    # it does not take, and the run fails.
    "infeasible": "'infeasible' is a metric only as an evaluator's whole func: in a list of metrics OSWorld's "
                  "evaluator calls it with a result it does not take, and fails",
    # Its verdict is whether easyocr's reading of a screenshot contains a text: easyocr's models
    # are downloaded at first use (and need torch), so the reference's verdict cannot be had
    # offline, and vdesk's own OCR (Tesseract) cannot be shown to give the same one; "ls" read
    # as "1s" is the kind of difference the task itself allows for.
    "compare_image_text": "metric 'compare_image_text' is not supported by vdesk: its verdict is easyocr's "
                          "reading, whose models are a download at first use; vdesk's own OCR is not "
                          "shown to read as it does",
}


# The metrics of OSWorld's own (what the pinned desktop-env's metrics module exports) that vdesk
# does not implement: a task naming one is skipped, with the reason above or "not supported". A
# name in neither list is a typo, which fails the task file (:mod:`vdesk.osworld.typos`).
OSWORLD_ONLY = frozenset({
    "check_file_exists", "check_html_background_image", "check_no_duplicates", "check_python_file_by_gold_file",
    "check_sharper", "check_slide_numbers_color", "check_strikethrough", "check_text_enlarged", "compare_answer",
    "compare_contains_image", "compare_docx_lines", "compare_highlighted_text", "compare_image_text",
    "compare_init_lines", "compare_insert_equation", "compare_terminal_and_txt", "compare_time_in_speedtest_results",
    "compare_triangle_positions", "decrease_brightness", "evaluate_alignment", "evaluate_conversion",
    "evaluate_spacing", "get_unique_train_ids", "increase_saturation", "infeasible", "is_gold_text_included_in_pdf",
    "is_included_all_json_objects",
})
# Options OSWorld's metric takes by name that vdesk's does not implement (a task using one is skipped).
OSWORLD_OPTIONS = {"check_accessibility_tree": frozenset({"osname"})}


def known() -> frozenset[str]:
    """Every metric name a task file may use: vdesk's and OSWorld's."""
    return frozenset(registered()) | OSWORLD_ONLY


def lookup(name: str) -> Metric:
    """The metric called ``name`` in OSWorld's task files."""
    found = registered().get(name)
    if found is None:
        raise UnsupportedMetric(NOT_SUPPORTED.get(name, f"metric {name!r} is not supported by vdesk"))
    return found


def names() -> list[str]:
    """Every supported metric name, sorted (the README lists them)."""
    return sorted(registered())
