"""OSWorld's getters: what an evaluator's ``result`` and ``expected`` entries fetch, by type.

    from vdesk.osworld.getters import getter

    value = getter("vm_file")(context, {"path": "~/a.txt", "dest": "a.txt"})

Each family module registers its types with ``@getter`` (:mod:`.registry`): :mod:`.files`,
:mod:`.commands`, :mod:`.browser`, :mod:`.pages`, :mod:`.system`, :mod:`.slides`. What a getter returns is what the
reference's getter of that type returns; where vdesk reads a thing another way, the family's
docstring says so.
"""

from __future__ import annotations

from typing import Any

from vdesk.errors import UnsupportedGetter
from vdesk.osworld import relative_time
from vdesk.osworld.getters import browser, commands, files, pages, slides, system
from vdesk.osworld.getters.registry import Getter, registered

__all__ = ["Getter", "check_relative_time", "getter", "known", "names"]

_FAMILIES = (files, commands, browser, pages, system, slides)  # imported for their registrations

# Getters that need what vdesk does not have yet: the reason a task using one is skipped.
NOT_YET = {
    "googledrive_file": "needs Google Drive (the googledrive_file getter)",
    # The expected value is read from a live web site at evaluation time (a scholar's profile, a
    # campsite's listing): no offline copy can stand in for it.
    "info_from_website": "needs the live web (the info_from_website getter reads a web site's current page)",
    "gotoRecreationPage_and_get_html_content": "needs the live web (the gotoRecreationPage_and_get_html_content "
                                               "getter reads a web site's current page)",
}


# The getters of OSWorld's own (the pinned desktop-env's) that vdesk does not implement: a task
# using one is skipped. A type in neither list is a typo, which fails the task file.
OSWORLD_ONLY = frozenset({
    "chrome_language", "conference_city_in_order", "enabled_experiments", "macys_product_url_parse",
    "number_of_search_results", "replay", "time_diff_range", "vscode_config", *NOT_YET,
})


def known() -> frozenset[str]:
    """Every getter type a task file may use: vdesk's and OSWorld's."""
    return frozenset(registered()) | OSWORLD_ONLY


def getter(name: str) -> Getter:
    """The getter of OSWorld type ``name`` (:class:`UnsupportedGetter` naming why, if vdesk lacks it)."""
    found = registered().get(name)
    if found is None:
        raise UnsupportedGetter(NOT_YET.get(name, f"the {name} getter is not supported"))
    return found


def names() -> list[str]:
    """Every supported getter type, sorted."""
    return sorted(registered())


def check_relative_time(settings: dict[str, Any]) -> None:
    """:class:`UnsupportedGetter` for a ``rule_relativeTime`` rule vdesk cannot fill."""
    relative_time.check(settings.get("rules"))
