"""Reinforcement learning: PPO through rsl_rl on many copies of a scene stepped in threads on native MuJoCo.

The environment (`env`) and the block reward (`blocks`) need only NumPy and MuJoCo; training (`train`) and trained
policies (`policy`) need the `rl` extra (`pip install -e ".[rl]"`: torch 2.13 CPU, rsl-rl-lib, onnxruntime).
"""
