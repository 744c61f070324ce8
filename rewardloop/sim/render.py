"""Offscreen rendering of trajectories: tracking cameras, MP4/GIF video and keyframe contact sheets.

Cheap by default (no shadows, no MSAA, 320x240) because these machines render with a software GL.
`MUJOCO_GL=egl` is set by `rewardloop/__init__.py` when no display is present, before MuJoCo loads.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from rewardloop.errors import UserError, unknown_name
from rewardloop.sim.scene import STATE_SPEC, CompiledScene


@dataclass(frozen=True)
class View:
    """A camera that follows the pelvis at a fixed angle."""

    azimuth: float
    """Degrees; 90 looks along +y (the walking direction +x runs left to right)."""
    elevation: float
    """Degrees; negative looks down."""
    distance: float
    """Metres from the tracked point."""


VIEWS: dict[str, View] = {
    "side": View(azimuth=90.0, elevation=-12.0, distance=3.2),
    "front": View(azimuth=180.0, elevation=-12.0, distance=3.2),
    "back": View(azimuth=0.0, elevation=-12.0, distance=3.2),
    "top": View(azimuth=90.0, elevation=-80.0, distance=4.0),
}
"""Camera views by name."""


@dataclass(frozen=True)
class RenderConfig:
    """What to render and how."""

    width: int = 320
    """Frame width per view (pixels)."""
    height: int = 240
    """Frame height per view (pixels)."""
    fps: int = 20
    """Frames per second of simulated time."""
    views: tuple[str, ...] = ("side",)
    """Views tiled left to right in each frame."""
    shadows: bool = False
    """Shadows and reflections: 3-5x slower on software GL."""

    def __post_init__(self) -> None:
        for view in self.views:
            if view not in VIEWS:
                raise unknown_name("view", view, VIEWS)
        if not self.views:
            raise UserError("at least one view is needed")
        if not (16 <= self.width <= 1280 and 16 <= self.height <= 720 and 1 <= self.fps <= 120):
            raise UserError("width must be in [16, 1280], height in [16, 720] and fps in [1, 120]")


@dataclass(frozen=True)
class Frames:
    """Rendered frames with their simulated times."""

    images: np.ndarray
    """[F, H, W * n_views, 3] uint8."""
    times: np.ndarray
    """[F] simulated time of each frame (s)."""
    fps: int


def render(scene: CompiledScene, states: np.ndarray, config: RenderConfig = RenderConfig()) -> Frames:
    """Render states [T, nstate] (one trajectory, initial state first) at config.fps."""
    stride = max(1, round(1.0 / (config.fps * scene.dt)))
    picked = states[::stride]
    model, data = scene.model, mujoco.MjData(scene.model)
    try:
        renderer = mujoco.Renderer(model, height=config.height, width=config.width)
    except Exception as error:  # GL setup failures surface as various exception types
        raise UserError(f"offscreen rendering is unavailable ({error}); set MUJOCO_GL=egl or osmesa") from None
    with renderer:
        _set_flags(renderer.scene, config.shadows)
        images = np.stack([_render_state(renderer, scene, data, state, config) for state in picked])
    return Frames(images, picked[:, 0].copy(), config.fps)


def _set_flags(scene: mujoco.MjvScene, shadows: bool) -> None:
    scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = shadows
    scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = shadows
    scene.flags[mujoco.mjtRndFlag.mjRND_SKYBOX] = False


def _render_state(renderer: mujoco.Renderer, scene: CompiledScene, data: mujoco.MjData, state: np.ndarray,
                  config: RenderConfig) -> np.ndarray:
    """[H, W * n_views, 3] image of one state from every configured view."""
    mujoco.mj_setState(scene.model, data, state, STATE_SPEC)
    mujoco.mj_forward(scene.model, data)
    lookat, zoom, turn = _framing(scene, data)
    option = mujoco.MjvOption()
    option.flags[mujoco.mjtVisFlag.mjVIS_TENDON] = not scene.body.fingertips  # a hand's tendons hide its fingers
    tiles = []
    for name in config.views:
        renderer.update_scene(data, camera=_camera(VIEWS[name], lookat, zoom, turn), scene_option=option)
        _set_flags(renderer.scene, config.shadows)
        tiles.append(renderer.render())
    return np.concatenate(tiles, axis=1)


HAND_ZOOM = 0.14
"""A hand scene's cameras stand this fraction of a view's distance away: about 45 cm, the hand and object filling
the frame."""


PERSON_PELVIS_M = 0.9
"""A person's standing pelvis height (m), which the views' distances frame; a smaller body's cameras come closer in
proportion, down to MIN_BODY_ZOOM of the distance."""
MIN_BODY_ZOOM = 0.5

POUR_TURN_DEG = 90.0
"""A bottle scene's views turn this far about the vertical, so that 'side' looks along the forearm, across the
pour (the bottle tips in the plane across the forearm), as it looks across a walk; unturned, the poured bottle
points at the camera and its tilt does not show."""


def _framing(scene: CompiledScene, data: mujoco.MjData) -> tuple[np.ndarray, float, float]:
    """([3] point the cameras look at, distance factor, azimuth turn in deg): a hand scene's midpoint of the palm
    and the goal point (the object when it has none), zoomed in, turned across a pour; else the pelvis at three
    quarters of standing height."""
    if scene.body.fingertips:
        palm = data.site("rl_palm").xpos
        manipulation = scene.scene.manipulation
        goal = data.site("rl_goal_point").xpos if manipulation is not None else palm
        turn = POUR_TURN_DEG if manipulation is not None and manipulation.object == "bottle" else 0.0
        return (palm + goal) / 2, HAND_ZOOM, turn
    pelvis = data.site("rl_pelvis").xpos
    ground = float(scene.scene.terrain.height(pelvis[0], pelvis[1]))
    zoom = min(1.0, max(MIN_BODY_ZOOM, scene.standing_height / PERSON_PELVIS_M))  # a small robot fills the frame too
    return np.array([pelvis[0], pelvis[1], ground + 0.75 * scene.standing_height]), zoom, 0.0


def _camera(view: View, lookat: np.ndarray, zoom: float = 1.0, turn: float = 0.0) -> mujoco.MjvCamera:
    camera = mujoco.MjvCamera()
    camera.type = mujoco.mjtCamera.mjCAMERA_FREE
    camera.lookat[:] = lookat
    camera.azimuth, camera.elevation, camera.distance = view.azimuth + turn, view.elevation, view.distance * zoom
    return camera


def write_video(frames: Frames, path: str | Path) -> Path:
    """Write frames as .mp4 (H.264 through imageio-ffmpeg) or .gif, chosen by the file's suffix."""
    import imageio.v2 as imageio

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".mp4":
        images = _even_size(frames.images)
        with imageio.get_writer(path, fps=frames.fps, codec="libx264", quality=7,
                                macro_block_size=1, ffmpeg_log_level="error") as writer:
            for image in images:
                writer.append_data(image)  # type: ignore[attr-defined]
    elif path.suffix == ".gif":
        imageio.mimsave(path, list(frames.images), duration=1000.0 / frames.fps, loop=0)
    else:
        raise UserError(f"video file must end in .mp4 or .gif, got {path.name!r}")
    return path


def _even_size(images: np.ndarray) -> np.ndarray:
    """Crop to even width and height (H.264 with yuv420p needs them)."""
    h, w = images.shape[1] // 2 * 2, images.shape[2] // 2 * 2
    return images[:, :h, :w]



def contact_sheet(frames: Frames, path: str | Path, *, count: int = 8, columns: int = 4) -> Path:
    """Write a PNG grid of `count` keyframes, each labelled with its simulated time."""
    from PIL import Image, ImageDraw

    picks = np.unique(np.round(np.linspace(0, len(frames.images) - 1, min(count, len(frames.images)))).astype(int))
    h, w = frames.images.shape[1:3]
    rows = -(-len(picks) // columns)
    sheet = Image.new("RGB", (w * min(columns, len(picks)), h * rows), "white")
    draw = ImageDraw.Draw(sheet)
    for slot, index in enumerate(picks):
        x, y = (slot % columns) * w, (slot // columns) * h
        sheet.paste(Image.fromarray(frames.images[index]), (x, y))
        label = f"t = {frames.times[index]:.2f} s"
        draw.rectangle((x + 2, y + 2, x + 8 + 7 * len(label), y + 16), fill="black")
        draw.text((x + 5, y + 3), label, fill="white")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(path)
    return path
