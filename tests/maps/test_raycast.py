"""Ray casting's per-map tables are computed once per map, whichever object holds it."""

from __future__ import annotations

from freelook.maps import clearance_of, grid_key, load_world


def test_a_map_loaded_twice_shares_its_clearance_and_a_changed_one_does_not() -> None:
    first, second = load_world("lab").obstacles(), load_world("lab").obstacles()
    assert first is not second
    assert clearance_of(second) is clearance_of(first)
    changed = first.copy()
    changed[0, 0] = not changed[0, 0]
    assert grid_key(changed) != grid_key(first)
    assert clearance_of(changed) is not clearance_of(first)
    # the same cells in another shape are another map
    assert grid_key(first.reshape(first.shape[1], first.shape[0])) != grid_key(first)
