"""Plot the shipped gaits' joint curves over the gait cycle against people's, for the docs.

    .venv/bin/python benchmarks/plot_gait_curves.py --out docs/images

Each body's main shipped gait (`rewardloop/control/gaits/BODY.json`) walks 10 s on flat ground from the walking
start; the gait analysis averages each joint's angle over its strides (both legs) and the plot sets it beside the
normative human curve (Schwartz et al. 2008, mean ± 1 SD), one SVG per joint: gait_curves_JOINT.svg.

    .venv/bin/python benchmarks/plot_gait_curves.py --trajectory myofullbody=out/full --out docs/images

With --trajectory BODY=DIR, that body's curves come from a saved 10-s motion from the walking start on flat ground
(`rewardloop optimize ... --out DIR`) instead: the full body's gait walks only as the gait planner steers it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from rewardloop.control.controllers.base import make_controller, run_controller
from rewardloop.control.search.policy import shipped_gait
from rewardloop.control.trajectory import Trajectory
from rewardloop.critic.gait import JOINTS, analyze_gait, human_gait_reference
from rewardloop.errors import UserError, run_script
from rewardloop.sim.rollout import Simulator
from rewardloop.sim.scene import WALKING_START_SPEED, Scene, compile_scene, walking_start_speed

BODIES = ("humanoid", "myolegs")
DURATION_S = 10.0
COLOURS = {"humanoid": "#d62728", "myolegs": "#1f77b4", "myofullbody": "#2ca02c"}
WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 460, 250, 46, 96, 26, 36


def gait_curves(body: str) -> np.ndarray:
    """[3, P] the body's main shipped gait's stride-averaged joint angles (deg), both legs averaged."""
    policy = shipped_gait(body)
    if policy is None:
        raise UserError(f"{body} ships no gait")
    scene = compile_scene(Scene(body, start_speed=WALKING_START_SPEED))
    controller = make_controller(policy.controller, scene)
    with Simulator(scene) as sim:
        rollouts = run_controller(sim, controller, policy.vector(controller)[None], nstep=round(DURATION_S / scene.dt))
    return np.nanmean(analyze_gait(rollouts.features(scene)).curves[0], axis=0)


def saved_curves(body: str, folder: Path) -> np.ndarray:
    """[3, P] stride-averaged joint angles (deg) of the motion saved in `folder` by `rewardloop optimize --out`."""
    scene = compile_scene(Scene(body, start_speed=walking_start_speed(body)))
    trajectory = Trajectory.load(folder)
    if trajectory.rollouts.state.shape[-1] != scene.nstate:
        raise UserError(f"{folder} holds a motion of another body than {body}")
    features = trajectory.features(scene)
    return np.nanmean(analyze_gait(features).curves[0], axis=0)


def curves_svg(title: str, percent: np.ndarray, mean: np.ndarray, sd: np.ndarray,
               curves: dict[str, np.ndarray]) -> str:
    """An SVG plot: people's mean ± 1 SD as a grey band and line, each body's curve as a coloured line."""
    low = float(np.nanmin([*(mean - sd), *[np.nanmin(c) for c in curves.values()]])) - 5
    high = float(np.nanmax([*(mean + sd), *[np.nanmax(c) for c in curves.values()]])) + 5

    def xy(x: float, y: float) -> str:
        px = LEFT + x / 100 * (WIDTH - LEFT - RIGHT)
        py = TOP + (high - y) / (high - low) * (HEIGHT - TOP - BOTTOM)
        return f"{px:.1f},{py:.1f}"

    band = " ".join([*(xy(x, y) for x, y in zip(percent, mean + sd, strict=True)),
                     *(xy(x, y) for x, y in zip(percent[::-1], (mean - sd)[::-1], strict=True))])
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" '
             f'font-size="11"><rect width="100%" height="100%" fill="#fff"/>',
             f'<text x="{LEFT}" y="16" font-size="13" font-weight="bold">{title} (°)</text>',
             f'<polygon points="{band}" fill="#ddd"/>',
             f'<polyline points="{" ".join(xy(x, y) for x, y in zip(percent, mean, strict=True))}" fill="none" '
             'stroke="#555" stroke-width="2"/>']
    for body, curve in curves.items():
        points = " ".join(xy(x, y) for x, y in zip(percent, curve, strict=True) if np.isfinite(y))
        parts.append(f'<polyline points="{points}" fill="none" stroke="{COLOURS[body]}" stroke-width="2"/>')
    for x in range(0, 101, 20):
        px, py = xy(x, low).split(",")
        parts.append(f'<text x="{px}" y="{float(py) + 14:.1f}" text-anchor="middle">{x}</text>')
    for y in np.linspace(low + 5, high - 5, 4):
        px, py = xy(0, y).split(",")
        parts.append(f'<text x="{float(px) - 4:.1f}" y="{float(py) + 4:.1f}" text-anchor="end">{y:.0f}</text>')
    parts.append(f'<text x="{LEFT + (WIDTH - LEFT - RIGHT) / 2:.0f}" y="{HEIGHT - 4}" text-anchor="middle">'
                 "gait cycle (%, from touchdown)</text>")
    legend = [("people", "#555"), *((body, COLOURS[body]) for body in curves)]
    for i, (name, colour) in enumerate(legend):
        y = TOP + 14 + 16 * i
        parts.append(f'<line x1="{WIDTH - RIGHT + 8}" y1="{y - 4}" x2="{WIDTH - RIGHT + 22}" y2="{y - 4}" '
                     f'stroke="{colour}" stroke-width="2"/><text x="{WIDTH - RIGHT + 26}" y="{y}">{name}</text>')
    return "".join(parts) + "</svg>\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("docs/images"), help="folder of the SVG files")
    parser.add_argument("--trajectory", nargs="*", default=[], metavar="BODY=DIR",
                        help="a body's curves from a saved motion (rewardloop optimize --out DIR) as well")
    args = parser.parse_args()
    reference = human_gait_reference()
    curves = {body: gait_curves(body) for body in BODIES}
    for item in args.trajectory:
        body, _, folder = item.partition("=")
        if body not in COLOURS or not folder:
            raise UserError(f"--trajectory takes BODY=DIR with BODY one of {', '.join(COLOURS)}, got {item!r}")
        curves[body] = saved_curves(body, Path(folder))
    args.out.mkdir(parents=True, exist_ok=True)
    for j, joint in enumerate(JOINTS):
        svg = curves_svg(joint.replace("_", " "), reference.phase * 100, reference.mean[j], reference.sd[j],
                         {body: curve[j] for body, curve in curves.items()})
        path = args.out / f"gait_curves_{joint}.svg"
        path.write_text(svg)
        print(f"wrote {path}")


if __name__ == "__main__":
    run_script(main, "plot_gait_curves.py")
