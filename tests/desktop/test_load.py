"""Load: ten desktops at once, 500 mixed actions and screenshots each, and nothing left over.

The workload is the one ``make soak`` runs for half an hour (scripts/soak.py), here for a fixed
number of operations.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

DESKTOPS = 10
OPERATIONS_PER_DESKTOP = 500


def _soak_module():  # type: ignore[no-untyped-def]
    path = Path(__file__).resolve().parents[2] / "scripts" / "soak.py"
    spec = importlib.util.spec_from_file_location("vdesk_soak", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


soak = _soak_module()


def test_ten_desktops_take_500_mixed_operations_each_with_no_failure_no_leftover_and_memory_back():
    summary = soak.run(DESKTOPS, operations=OPERATIONS_PER_DESKTOP)
    for line in summary.lines():
        print(line)
    assert summary.desktops == DESKTOPS
    assert summary.operations == DESKTOPS * OPERATIONS_PER_DESKTOP
    assert summary.failures == [], summary.failures[:10]
    assert summary.leaked == []
    assert summary.rss_growth_mib < soak.MEMORY_SLACK_MIB
