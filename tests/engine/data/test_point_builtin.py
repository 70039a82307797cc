"""The built-in point clouds: six synthetic shapes, balanced, generated the same from the same seed,
described without generating them, each cloud on its shape's surface."""

from __future__ import annotations

import numpy as np

from dragdl.engine.data import point_shapes
from dragdl.engine.data.point_builtin import SHAPES, describe_point_builtin, make_shapes, open_point_builtin


def test_describing_the_set_generates_nothing() -> None:
    before = make_shapes.cache_info()
    info = describe_point_builtin("shapes", points=64, per_class=12)
    assert (info.classes, info.count, info.shape) == (SHAPES, 72, (64, 3))
    after = make_shapes.cache_info()
    assert (after.hits, after.misses) == (before.hits, before.misses)


def test_the_same_seed_gives_the_same_clouds_and_another_seed_others() -> None:
    first = open_point_builtin("shapes", 64, 12, seed=7)
    make_shapes.cache_clear()
    again = open_point_builtin("shapes", 64, 12, seed=7)
    other = open_point_builtin("shapes", 64, 12, seed=8)
    assert np.array_equal(first.values, again.values) and np.array_equal(first.labels, again.labels)
    assert not np.array_equal(first.values, other.values)
    assert first.values.dtype == np.float32 and first.values.shape == (72, 64, 3)
    assert np.bincount(first.labels).tolist() == [12] * 6
    assert len(set(first.labels[:12].tolist())) > 1  # the classes are shuffled together


def test_points_lie_on_each_shapes_surface() -> None:
    rng = np.random.default_rng(0)
    sphere = point_shapes._sphere(rng, 2, 500)
    assert np.allclose(np.linalg.norm(sphere, axis=2), 1.0)
    cube = point_shapes._cube(rng, 2, 500)
    assert np.allclose(np.abs(cube).max(axis=2), 1.0)
    cylinder = point_shapes._cylinder(rng, 2, 500)
    radius = np.linalg.norm(cylinder[..., :2], axis=2)
    assert np.all(np.isclose(radius, 1.0) | np.isclose(np.abs(cylinder[..., 2]), 1.0))
    cone = point_shapes._cone(rng, 2, 500)
    side = np.isclose(np.linalg.norm(cone[..., :2], axis=2), (1.0 - cone[..., 2]) / 2.0)
    assert np.all(side | np.isclose(cone[..., 2], -1.0))
    torus = point_shapes._torus(rng, 2, 500)
    ring, tube = point_shapes.TORUS_RADII
    from_ring = np.hypot(np.linalg.norm(torus[..., :2], axis=2) - ring, torus[..., 2])
    assert np.allclose(from_ring, tube)
    pyramid = point_shapes._pyramid(rng, 2, 500)
    assert pyramid[..., 2].min() >= -1.0 - 1e-9 and pyramid[..., 2].max() <= 1.0 + 1e-9
    # On a side, |x| or |y| equals the half width at that height, (1 - z) / 2; else on the base.
    half = (1.0 - pyramid[..., 2]) / 2.0
    on_side = np.isclose(np.abs(pyramid[..., :2]).max(axis=2), half)
    assert np.all(on_side | np.isclose(pyramid[..., 2], -1.0))
