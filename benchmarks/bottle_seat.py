"""Where the power grip seats the bottle: the value of `rewardloop.sim.hand.BOTTLE_SEAT`.

    .venv/bin/python benchmarks/bottle_seat.py

Pours with no planner (the first grip held while the forearm rolls to the end of its range, 3 s) on
both pour sides, prints the bottle's pose in the palm's body frame and how far it lies from BOTTLE_SEAT. Rerun it,
and paste the left side's pose into BOTTLE_SEAT, after changing the grip, the bottle's placement or the muscle
controller: the pour target is computed from that pose.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rewardloop.control.planners.grip import poured_seat
from rewardloop.errors import run_script
from rewardloop.sim.hand import BOTTLE_SEAT
from rewardloop.sim.object_features import rotation_angle
from rewardloop.sim.scene import compile_scene
from rewardloop.tasks import get_task


def main() -> None:
    task = get_task("bottle-pour")
    assert task.scene.manipulation is not None
    for side in ("left", "right"):
        manipulation = dataclasses.replace(task.scene.manipulation, side=side)
        position, quat = poured_seat(compile_scene(dataclasses.replace(task.scene, manipulation=manipulation)))
        seat = np.asarray(BOTTLE_SEAT[1]) / np.linalg.norm(BOTTLE_SEAT[1])
        print(f"{side}: ({tuple(np.round(position, 4).tolist())}, {tuple(np.round(quat, 4).tolist())}); from "
              f"BOTTLE_SEAT {np.linalg.norm(position - BOTTLE_SEAT[0]) * 1e3:.1f} mm, "
              f"{np.degrees(rotation_angle(quat, seat)):.1f}°")


if __name__ == "__main__":
    run_script(main, "bottle_seat")
