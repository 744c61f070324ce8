"""Terrains built with MjSpec, composable with any body: flat, slope, rough heightfield, stairs.

Every terrain has height 0 at the origin, where bodies start, and rises or varies along +x, the walking
direction. `Terrain.height(x, y)` gives the ground height anywhere, vectorized, for metrics and features.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import mujoco
import numpy as np

from rewardloop.errors import UserError, unknown_name

HFIELD_EXTENT = (-3.0, 27.0, -6.0, 6.0)
"""x min, x max, y min, y max of the rough heightfield (m)."""
HFIELD_RESOLUTION = 0.1
"""Spacing of heightfield samples (m)."""
GROUND_MAP_STEP = 0.02
"""Spacing of a ground map's samples (m): finer than a stair's edge matters to a foot."""
UNEVEN_WINDOW = 1.0
"""Side of the square (m) over which `unevenness_map` takes the ground's local mean, and then the RMS of the
heights about it."""
STAIRS_START = 1.5
"""x at which the first stair begins (m)."""
STAIRS_COUNT = 30
"""Number of steps before the top landing."""


@dataclass(frozen=True)
class Terrain:
    """A ground for a scene. Only the fields of its kind matter."""

    kind: str = "flat"
    """One of TERRAINS: flat, slope, rough, stairs."""
    slope_deg: float = 5.0
    """slope: incline in degrees, uphill along +x (negative is downhill)."""
    roughness: float = 0.04
    """rough: peak height of the bumps above and below zero (m)."""
    seed: int = 0
    """rough: seed of the bump pattern."""
    step_height: float = 0.08
    """stairs: rise of each step (m)."""
    step_depth: float = 0.4
    """stairs: run of each step (m)."""

    def __post_init__(self) -> None:
        if self.kind not in TERRAINS:
            raise unknown_name("terrain", self.kind, TERRAINS)
        if not -30.0 <= self.slope_deg <= 30.0:
            raise UserError(f"slope_deg must be within [-30, 30] degrees, got {self.slope_deg}")
        if not 0.0 <= self.roughness <= 0.3:
            raise UserError(f"roughness must be within [0, 0.3] m, got {self.roughness}")
        if not 0.0 < self.step_height <= 0.3 or not 0.1 <= self.step_depth <= 2.0:
            raise UserError("step_height must be in (0, 0.3] m and step_depth in [0.1, 2] m")

    def height(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Ground height (m) under points; x, y: any matching shape (m) -> same shape."""
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        if self.kind == "slope":
            return x * math.tan(math.radians(self.slope_deg))
        if self.kind == "stairs":
            steps = np.floor((x - STAIRS_START) / self.step_depth) + 1
            return np.clip(steps, 0, STAIRS_COUNT) * self.step_height
        if self.kind == "rough":
            return _sample_grid(rough_heights(self.roughness, self.seed), x, y)
        return np.zeros(np.broadcast(x, y).shape)

    def describe(self) -> str:
        """Short human description, e.g. 'slope 5°'."""
        return {
            "flat": "flat ground",
            "slope": f"slope {self.slope_deg:g}°",
            "rough": f"rough ground ±{self.roughness * 100:g} cm (seed {self.seed})",
            "stairs": f"stairs {self.step_height * 100:g} cm rise",
        }[self.kind]


@functools.lru_cache(maxsize=32)
def rough_heights(amplitude: float, seed: int) -> np.ndarray:
    """Smooth random heights [nrow, ncol] (m) on the HFIELD_EXTENT grid, flat near the origin; read-only and
    cached (the last 32 patterns).

    Rows run along y, columns along x (MuJoCo's heightfield layout).
    """
    x0, x1, y0, y1 = HFIELD_EXTENT
    ncol = round((x1 - x0) / HFIELD_RESOLUTION) + 1
    nrow = round((y1 - y0) / HFIELD_RESOLUTION) + 1
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal((nrow, ncol))
    kernel = np.exp(-0.5 * (np.arange(-6, 7) / 2.5) ** 2)
    kernel /= kernel.sum()
    smooth = np.apply_along_axis(np.convolve, 0, noise, kernel, mode="same")
    smooth = np.apply_along_axis(np.convolve, 1, smooth, kernel, mode="same")
    smooth *= amplitude / max(np.abs(smooth).max(), 1e-9)
    xs = np.linspace(x0, x1, ncol)[None, :]
    ys = np.linspace(y0, y1, nrow)[:, None]
    start_patch = np.clip((np.hypot(xs, ys) - 0.6) / 0.6, 0.0, 1.0)  # flat within 0.6 m of the start
    heights = smooth * start_patch
    heights.setflags(write=False)
    return heights


@functools.lru_cache(maxsize=16)
def ground_map(terrain: Terrain) -> np.ndarray:
    """[nx, ny] the ground's height (m) at x = x min + i × GROUND_MAP_STEP, y = y min + j × GROUND_MAP_STEP over
    HFIELD_EXTENT: the ground as a controller that sees it reads it (a robot's height map). ny is 1 where the
    ground does not vary sideways (slope, stairs), and the map [1, 1] zeros on flat ground: lookups clamp to the
    map's edges. Read-only and cached (the last 16 terrains)."""
    if terrain.kind == "flat":
        heights = np.zeros((1, 1), dtype=np.float32)
    else:
        x0, x1, y0, y1 = HFIELD_EXTENT
        xs = np.arange(round((x1 - x0) / GROUND_MAP_STEP) + 1) * GROUND_MAP_STEP + x0
        ys = np.arange(round((y1 - y0) / GROUND_MAP_STEP) + 1) * GROUND_MAP_STEP + y0
        heights = np.ascontiguousarray(terrain.height(xs[:, None], ys[None, :]), dtype=np.float32)
    heights.setflags(write=False)
    return heights


@functools.lru_cache(maxsize=16)
def unevenness_map(terrain: Terrain) -> np.ndarray:
    """[nx, ny] how uneven the ground is around each sample of its `ground_map` (m): the RMS, over an UNEVEN_WINDOW
    square, of the heights about their local mean over such a square. 0 on flat ground and on a slope (a plane is
    its own local mean; but for half a window at the map's ends), about 2-8 mm on the default rough ground (±4 cm
    bumps), about 2 cm over stairs: what a walker who sees the ground makes of its unevenness. Read-only and cached
    (the last 16 terrains)."""
    heights = ground_map(terrain).astype(np.float64)
    width = round(UNEVEN_WINDOW / GROUND_MAP_STEP) + 1
    detail = heights - _box_mean(heights, width)
    uneven = np.sqrt(np.maximum(_box_mean(detail**2, width), 0.0)).astype(np.float32)
    uneven.setflags(write=False)
    return uneven


def _box_mean(grid: np.ndarray, width: int) -> np.ndarray:
    """[nx, ny] -> [nx, ny] the mean over a square of `width` samples (odd) about each sample, on each axis longer
    than `width`, the edges repeated beyond the grid."""
    half = width // 2
    for axis in range(2):
        if grid.shape[axis] <= width:
            continue
        total = np.cumsum(np.pad(grid, [(half + 1, half) if a == axis else (0, 0) for a in range(2)], mode="edge"),
                          axis=axis)
        grid = (np.take(total, range(width, total.shape[axis]), axis)
                - np.take(total, range(total.shape[axis] - width), axis)) / width
    return grid


def _sample_grid(grid: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Bilinear interpolation of a [nrow, ncol] HFIELD_EXTENT grid at points x, y (m)."""
    x0, x1, y0, y1 = HFIELD_EXTENT
    nrow, ncol = grid.shape
    u = np.clip((x - x0) / (x1 - x0) * (ncol - 1), 0, ncol - 1.000001)
    v = np.clip((y - y0) / (y1 - y0) * (nrow - 1), 0, nrow - 1.000001)
    i, j = np.floor(v).astype(int), np.floor(u).astype(int)
    fv, fu = v - i, u - j
    top = grid[i, j] * (1 - fu) + grid[i, j + 1] * fu
    bottom = grid[i + 1, j] * (1 - fu) + grid[i + 1, j + 1] * fu
    return top * (1 - fv) + bottom * fv


def _ground_material(spec: mujoco.MjSpec) -> str:
    spec.add_texture(name="rl_grid", type=mujoco.mjtTexture.mjTEXTURE_2D,
                     builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER, width=300, height=300,
                     rgb1=[0.32, 0.38, 0.44], rgb2=[0.24, 0.29, 0.34], mark=mujoco.mjtMark.mjMARK_EDGE,
                     markrgb=[0.6, 0.6, 0.6])
    material = spec.add_material(name="rl_ground", texrepeat=[1, 1], texuniform=True, reflectance=0.0)
    material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "rl_grid"
    return "rl_ground"


def _add_plane(spec: mujoco.MjSpec, z: float = 0.0, quat: tuple[float, ...] = (1, 0, 0, 0)) -> None:
    spec.worldbody.add_geom(name="rl_floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[60, 60, 0.1],
                            pos=[0, 0, z], quat=list(quat), material="rl_ground")


def _build_flat(spec: mujoco.MjSpec, terrain: Terrain) -> None:
    _add_plane(spec)


def _build_slope(spec: mujoco.MjSpec, terrain: Terrain) -> None:
    half = math.radians(-terrain.slope_deg) / 2  # rotate about y so the plane rises along +x
    _add_plane(spec, quat=(math.cos(half), 0.0, math.sin(half), 0.0))


def _build_rough(spec: mujoco.MjSpec, terrain: Terrain) -> None:
    heights = rough_heights(terrain.roughness, terrain.seed)
    low, high = float(heights.min()), float(heights.max())
    span = max(high - low, 1e-3)
    x0, x1, y0, y1 = HFIELD_EXTENT
    nrow, ncol = heights.shape
    spec.add_hfield(name="rl_rough", nrow=nrow, ncol=ncol,
                    size=[(x1 - x0) / 2, (y1 - y0) / 2, span, 0.1],
                    userdata=((heights - low) / span).ravel().tolist())
    spec.worldbody.add_geom(name="rl_rough", type=mujoco.mjtGeom.mjGEOM_HFIELD, hfieldname="rl_rough",
                            pos=[(x0 + x1) / 2, (y0 + y1) / 2, low], material="rl_ground")
    _add_plane(spec, z=low - 0.02)


def _build_stairs(spec: mujoco.MjSpec, terrain: Terrain) -> None:
    _add_plane(spec)
    h, d = terrain.step_height, terrain.step_depth
    for i in range(STAIRS_COUNT):
        top = (i + 1) * h
        depth = d if i < STAIRS_COUNT - 1 else 20.0  # the last step is a long landing
        spec.worldbody.add_geom(name=f"rl_step{i}", type=mujoco.mjtGeom.mjGEOM_BOX,
                                size=[depth / 2, 3.0, top / 2], pos=[STAIRS_START + i * d + depth / 2, 0, top / 2],
                                material="rl_ground")


TERRAINS: dict[str, Callable[[mujoco.MjSpec, Terrain], None]] = {
    "flat": _build_flat,
    "slope": _build_slope,
    "rough": _build_rough,
    "stairs": _build_stairs,
}
"""Terrain kinds and the functions that add their geoms to a spec's world body."""


def add_terrain(spec: mujoco.MjSpec, terrain: Terrain) -> None:
    """Add the terrain's material and geoms to `spec`'s world body."""
    _ground_material(spec)
    TERRAINS[terrain.kind](spec, terrain)
