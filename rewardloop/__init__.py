"""rewardloop: learn a reward function and a controller for a simulated body from a description of a motion."""

import os as _os

if "MUJOCO_GL" not in _os.environ and not _os.environ.get("DISPLAY"):
    _os.environ["MUJOCO_GL"] = "egl"  # offscreen rendering on headless machines; must precede `import mujoco`

_os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # tiny matrices; BLAS threads fight mujoco.rollout's threads

__version__ = "0.1.0"
