"""Synthetic shapes sampled on their surface, made by numpy alone from a seed: the
built-in point cloud set (`data/point_builtin.py`). The exported training script carries
this file's source, so it generates the very same clouds.

Six classes (sphere, cube, cylinder, cone, torus, pyramid), `per_class` clouds each of
`points` points (x, y, z), sampled uniformly on the shape's surface (each face, cap or
side in proportion to its area), then scaled by a random factor per axis (0.75 to 1.25),
turned by a random rotation about the up axis (z) with a random tilt of up to 0.3 rad,
and given Gaussian noise (standard deviation 0.01). numpy's PCG64 generator gives the
same stream on every machine; the classes are shuffled together, so any prefix of the
set holds all six.
"""

from __future__ import annotations

import numpy as np

SHAPES = ("sphere", "cube", "cylinder", "cone", "torus", "pyramid")
NOISE = 0.01
MAX_TILT = 0.3
SCALE = (0.75, 1.25)
TORUS_RADII = (0.7, 0.3)


def make_shapes(
    points: int,
    per_class: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(clouds (S, points, 3) float32, shape index (S,) int64), S = 6 x per_class."""
    rng = np.random.default_rng(seed)
    classes = np.arange(len(SHAPES), dtype=np.int64)
    labels = rng.permutation(np.repeat(classes, per_class))
    clouds = np.empty((len(labels), points, 3), dtype=np.float64)
    for index, sampler in enumerate(_SAMPLERS):
        rows = np.flatnonzero(labels == index)
        clouds[rows] = sampler(rng, len(rows), points)
    count = len(labels)
    clouds *= rng.uniform(SCALE[0], SCALE[1], (count, 1, 3))
    clouds = np.einsum("snj,sij->sni", clouds, _rotations(rng, count))
    clouds += rng.normal(0.0, NOISE, clouds.shape)
    return clouds.astype(np.float32), labels


def _rotations(rng: np.random.Generator, count: int) -> np.ndarray:
    """(count, 3, 3): a tilt about x by up to MAX_TILT, then a turn about z by any
    angle."""
    tilt = rng.uniform(-MAX_TILT, MAX_TILT, count)
    turn = rng.uniform(0.0, 2.0 * np.pi, count)
    c, s = np.cos(tilt), np.sin(tilt)
    zero, one = np.zeros(count), np.ones(count)
    about_x = np.stack([one, zero, zero, zero, c, -s, zero, s, c], axis=1)
    c, s = np.cos(turn), np.sin(turn)
    about_z = np.stack([c, -s, zero, s, c, zero, zero, zero, one], axis=1)
    rotations: np.ndarray = about_z.reshape(-1, 3, 3) @ about_x.reshape(-1, 3, 3)
    return rotations


def _pick(
    rng: np.random.Generator,
    shape: tuple[int, int],
    areas: list[float],
) -> np.ndarray:
    """Which part each point lies on, in proportion to the parts' areas."""
    weights = np.asarray(areas) / np.sum(areas)
    return rng.choice(len(areas), size=shape, p=weights)


def _sphere(rng: np.random.Generator, count: int, points: int) -> np.ndarray:
    xyz = rng.normal(size=(count, points, 3))
    on_sphere: np.ndarray = xyz / np.linalg.norm(xyz, axis=2, keepdims=True)
    return on_sphere


def _cube(rng: np.random.Generator, count: int, points: int) -> np.ndarray:
    xyz = rng.uniform(-1.0, 1.0, (count, points, 3))
    face = rng.integers(0, 6, (count, points))
    axis, sign = face // 2, np.where(face % 2 == 0, -1.0, 1.0)
    np.put_along_axis(xyz, axis[..., None], sign[..., None], axis=2)
    return xyz


def _cylinder(rng: np.random.Generator, count: int, points: int) -> np.ndarray:
    part = _pick(rng, (count, points), [4.0 * np.pi, np.pi, np.pi])  # side, bottom, top
    angle = rng.uniform(0.0, 2.0 * np.pi, (count, points))
    radius = np.where(part == 0, 1.0, np.sqrt(rng.uniform(0.0, 1.0, (count, points))))
    z = np.where(
        part == 0,
        rng.uniform(-1.0, 1.0, (count, points)),
        np.where(part == 1, -1.0, 1.0),
    )
    return np.stack([radius * np.cos(angle), radius * np.sin(angle), z], axis=2)


def _cone(rng: np.random.Generator, count: int, points: int) -> np.ndarray:
    # The side (its apex at z = 1), and the base.
    part = _pick(rng, (count, points), [np.pi * np.sqrt(5.0), np.pi])
    angle = rng.uniform(0.0, 2.0 * np.pi, (count, points))
    # On the side, the share of area within distance t of the apex grows as t^2.
    radius = np.sqrt(rng.uniform(0.0, 1.0, (count, points)))
    z = np.where(part == 0, 1.0 - 2.0 * radius, -1.0)
    return np.stack([radius * np.cos(angle), radius * np.sin(angle), z], axis=2)


def _torus(rng: np.random.Generator, count: int, points: int) -> np.ndarray:
    ring, tube = TORUS_RADII
    # The tube's angle is drawn with density proportional to its circle's length, by
    # rejection: more candidates than points, the first accepted kept (the accepted
    # share is at least (R - r) / (R + r)).
    chosen = np.empty((count, points))
    for row in range(count):
        taken = np.empty(0)
        while len(taken) < points:
            phi = rng.uniform(0.0, 2.0 * np.pi, 3 * points)
            keep = rng.uniform(0.0, ring + tube, 3 * points) < ring + tube * np.cos(phi)
            taken = np.concatenate([taken, phi[keep]])
        chosen[row] = taken[:points]
    theta = rng.uniform(0.0, 2.0 * np.pi, (count, points))
    circle = ring + tube * np.cos(chosen)
    x, y = circle * np.cos(theta), circle * np.sin(theta)
    return np.stack([x, y, tube * np.sin(chosen)], axis=2)


_PYRAMID = np.array(
    [  # a square base at z = -1 (two triangles) and four sides up to the apex at z = 1
        [[-1, -1, -1], [1, -1, -1], [1, 1, -1]],
        [[-1, -1, -1], [1, 1, -1], [-1, 1, -1]],
        [[-1, -1, -1], [1, -1, -1], [0, 0, 1]],
        [[1, -1, -1], [1, 1, -1], [0, 0, 1]],
        [[1, 1, -1], [-1, 1, -1], [0, 0, 1]],
        [[-1, 1, -1], [-1, -1, -1], [0, 0, 1]],
    ],
    dtype=np.float64,
)


def _pyramid(rng: np.random.Generator, count: int, points: int) -> np.ndarray:
    edges = np.cross(_PYRAMID[:, 1] - _PYRAMID[:, 0], _PYRAMID[:, 2] - _PYRAMID[:, 0])
    areas = 0.5 * np.linalg.norm(edges, axis=1)
    # (count, points, 3 corners, 3)
    face = _PYRAMID[_pick(rng, (count, points), list(areas))]
    # Uniform in a triangle: sqrt of one draw and a second draw as barycentric weights.
    u = np.sqrt(rng.uniform(0.0, 1.0, (count, points, 1)))
    v = rng.uniform(0.0, 1.0, (count, points, 1))
    a, b, c = face[:, :, 0], face[:, :, 1], face[:, :, 2]
    xyz: np.ndarray = (1 - u) * a + u * (1 - v) * b + u * v * c
    return xyz


_SAMPLERS = (_sphere, _cube, _cylinder, _cone, _torus, _pyramid)
