"""Kinematic search of the hand's pinch around the cube: `_PINCH`, `_PINCH_REST` and `CUBE_SEAT` in sim/hand.py.

    .venv/bin/python benchmarks/cube_pinch.py [--seed 2] [--generations 600]

The forearm points down, rolled to the left turn's start (-0.7 rad); the cube's centre lies on the forearm's
rotation axis, so that rolling the forearm turns it in place. Differential evolution searches the wrist, the thumb,
index and middle fingers' joints, the ring and little fingers' curl, and the cube's height and heading, for a pose
with
- the thumb's distal phalanx 0.5 mm from one face of the cube, the index's and the middle's from the opposite face,
  each within 8 mm of the face's middle height, the thumb's pad within --thumb-band of the line through the
  fingers' pads;
- every other part of the hand at least 5 mm from the cube.
It prints the constants to paste into sim/hand.py and the cost (0: every condition met). About 2 minutes.
"""

from __future__ import annotations

import argparse

import mujoco
import numpy as np
from scipy.optimize import differential_evolution

from rewardloop.errors import run_script
from rewardloop.sim.hand import CUBE_HALF_M
from rewardloop.sim.scene import STATE_SPEC, compile_scene
from rewardloop.tasks import get_task

SEARCHED = ("flexion_r", "deviation_r", "cmc_flexion_r", "cmc_abduction_r", "mp_flexion_r", "ip_flexion_r",
            "mcp2_flexion_r", "mcp2_abduction_r", "pm2_flexion_r", "md2_flexion_r",
            "mcp3_flexion_r", "mcp3_abduction_r", "pm3_flexion_r", "md3_flexion_r", "mcp4_flexion_r", "mcp5_flexion_r")
"""Joints the search sets; the ring's and little finger's middle and distal joints follow their knuckle's."""
PADS = {"distal_thumb_r": 1.0, "distph2_r": -1.0, "distph3_r": -1.0}
"""Body whose pad presses the cube -> the face it presses (+x or -x in the cube's frame)."""


class Pinch:
    """The cube-rotate scene posed by a search vector: [J] joint angles, the cube's height (m), heading (rad)."""

    def __init__(self, thumb_band_mm: float = 4.0) -> None:
        self.thumb_band = thumb_band_mm
        scene = compile_scene(get_task("cube-rotate").scene)
        self.model, self.data = scene.model, mujoco.MjData(scene.model)
        mujoco.mj_setState(self.model, self.data, scene.initial_state, STATE_SPEC)
        self.base = self.data.qpos.copy()
        self.base[self.model.jnt_qposadr[self.model.joint("pro_sup_r").id]] = -0.7
        self.adr = np.array([self.model.jnt_qposadr[self.model.joint(name).id] for name in SEARCHED])
        ranges = np.array([self.model.jnt_range[self.model.joint(name).id] for name in SEARCHED])
        self.bounds = [*map(tuple, ranges), (0.15, 0.45), (-np.pi, np.pi)]
        self.cube = self.model.geom("rl_object_geom").id
        self.free = self.model.jnt_qposadr[self.model.joint("rl_object_free").id]
        skip = {self.model.body(name).id for name in ("world", "rl_object", "rl_table")}
        self.hand = [g for g in range(self.model.ngeom)
                     if self.model.geom_contype[g] and self.model.geom_bodyid[g] not in skip]

    def pose(self, x: np.ndarray) -> None:
        qpos = self.base.copy()
        qpos[self.adr] = x[:len(SEARCHED)]
        for k in (4, 5):
            knuckle = x[SEARCHED.index(f"mcp{k}_flexion_r")]
            for joint in (f"pm{k}_flexion_r", f"md{k}_flexion_r"):
                qpos[self.model.jnt_qposadr[self.model.joint(joint).id]] = knuckle
        height, heading = x[len(SEARCHED):]
        qpos[self.free:self.free + 7] = [0.0, 0.0, height, np.cos(heading / 2), 0.0, 0.0, np.sin(heading / 2)]
        self.data.qpos[:] = qpos
        mujoco.mj_kinematics(self.model, self.data)

    def gaps(self, x: np.ndarray) -> tuple[dict[str, tuple[float, np.ndarray]], np.ndarray]:
        """({pad body: (gap (m), [3] nearest cube point in the cube's frame)}, [G] gaps of every other geom)."""
        self.pose(x)
        cube_body = self.model.body("rl_object").id
        frame, centre = self.data.xmat[cube_body].reshape(3, 3), self.data.xpos[cube_body]
        pads: dict[str, tuple[float, np.ndarray]] = {}
        others, found = [], np.zeros(6)
        for geom in self.hand:
            gap = mujoco.mj_geomDistance(self.model, self.data, geom, self.cube, 0.5, found)
            body = self.model.body(self.model.geom_bodyid[geom]).name
            if body in PADS:
                if body not in pads or gap < pads[body][0]:
                    pads[body] = (gap, frame.T @ (found[3:] - centre))
            else:
                others.append(gap)
        return pads, np.array(others)

    def cost(self, x: np.ndarray) -> float:
        """Squared violations (mm²) of the conditions in the module's docstring."""
        pads, others = self.gaps(x)
        total = 0.0
        for body, (gap, point) in pads.items():
            face = PADS[body]
            total += (gap * 1e3 - 0.5) ** 2 + ((point[0] - face * CUBE_HALF_M) * 1e3) ** 2
            total += max(0.0, abs(point[2]) * 1e3 - 8) ** 2
        thumb, index, middle = (pads[b][1][1] * 1e3 for b in PADS)
        total += max(0.0, 10 - abs(index - middle)) ** 2
        total += max(0.0, abs(thumb - (index + middle) / 2) - self.thumb_band) ** 2
        total += max(0.0, abs(thumb) - 8) ** 2
        return total + 10 * float(np.sum(np.maximum(0.0, 5 - np.minimum(others, 0.05) * 1e3) ** 2))

    def seat(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The cube's ([3] centre (m), [4] orientation) in the palm's (third metacarpal's) body frame."""
        self.pose(x)
        palm, cube = self.model.body("thirdmc_r").id, self.model.body("rl_object").id
        frame = self.data.xmat[palm].reshape(3, 3)
        quat = np.empty(4)
        mujoco.mju_mat2Quat(quat, (frame.T @ self.data.xmat[cube].reshape(3, 3)).ravel())
        return frame.T @ (self.data.xpos[cube] - self.data.xpos[palm]), quat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--generations", type=int, default=600)
    parser.add_argument("--thumb-band", type=float, default=4.0,
                        help="how far (mm) the thumb's pad may sit off the line through the two fingers' pads")
    args = parser.parse_args()
    pinch = Pinch(args.thumb_band)
    found = differential_evolution(pinch.cost, pinch.bounds, seed=args.seed, popsize=25, maxiter=args.generations,
                                   tol=1e-8, polish=True)
    pads, others = pinch.gaps(found.x)
    print(f"cost {found.fun:.3f} mm²; nearest other part {others.min() * 1e3:.1f} mm")
    for body, (gap, point) in pads.items():
        print(f"  {body}: gap {gap * 1e3:.1f} mm at {np.round(point * 1e3, 1).tolist()} mm in the cube's frame")
    angles = dict(zip(SEARCHED, np.round(found.x[:len(SEARCHED)], 3).tolist(), strict=True))
    print("joint angles (rad):", angles)
    position, quat = pinch.seat(found.x)
    print(f"CUBE_SEAT = ({tuple(np.round(position, 4).tolist())}, {tuple(np.round(quat, 4).tolist())})")


if __name__ == "__main__":
    run_script(main, "cube_pinch.py")
