"""Shared fixtures: small scenes compiled once per session."""

from __future__ import annotations

import os

os.environ.setdefault("MUJOCO_GL", "egl")

import pytest

from rewardloop.sim.scene import Scene, compile_scene
from rewardloop.sim.terrain import Terrain


@pytest.fixture(scope="session")
def humanoid_flat():
    return compile_scene(Scene("humanoid", Terrain("flat")))


@pytest.fixture(scope="session")
def myolegs_flat():
    return compile_scene(Scene("myolegs", Terrain("flat")))
