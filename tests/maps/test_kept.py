"""The maps' bounded caches keep their newest entries, and a key kept again costs no other."""

from __future__ import annotations

from freelook.maps._kept import _KEPT, remember


def test_the_oldest_entry_goes_when_the_cache_is_full() -> None:
    cache: dict[int, int] = {}
    for key in range(_KEPT + 1):
        remember(cache, key, key)
    assert list(cache) == list(range(1, _KEPT + 1))


def test_a_key_kept_again_replaces_its_entry_and_forgets_nothing_else() -> None:
    cache: dict[int, str] = {}
    for key in range(_KEPT):
        remember(cache, key, "first")
    remember(cache, 3, "again")  # a full cache: a key it holds, not the oldest
    assert list(cache) == [k for k in range(_KEPT) if k != 3] + [3]  # the newest now
    assert cache[3] == "again"
    remember(cache, _KEPT, "new")
    assert 0 not in cache  # the oldest went
    assert 3 in cache
