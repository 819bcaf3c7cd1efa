"""A desktop's memory is what it holds itself: the shared cache of the image's files is not its own."""

from __future__ import annotations

import pytest

from vdesk.errors import VdeskError
from vdesk.usage import stats_memory_mib

MIB = 2**20


def test_cgroup_v1_leaves_out_both_file_caches():
    stats = {"memory_stats": {"usage": 120 * MIB, "stats": {
        "total_active_file": 45 * MIB, "total_inactive_file": 30 * MIB, "total_rss": 40 * MIB, "total_shmem": 5 * MIB}}}
    assert stats_memory_mib(stats, "d") == 45.0  # 120 - 45 - 30: the program's memory and its tmpfs


def test_cgroup_v2_leaves_out_both_file_caches():
    stats = {"memory_stats": {"usage": 100 * MIB, "stats": {"active_file": 20 * MIB, "inactive_file": 10 * MIB,
                                                          "anon": 60 * MIB, "shmem": 8 * MIB}}}
    assert stats_memory_mib(stats, "d") == 70.0


def test_no_usage_is_an_error_naming_the_desktop():
    with pytest.raises(VdeskError, match="no memory usage for vdesk-x"):
        stats_memory_mib({"memory_stats": {}}, "vdesk-x")
