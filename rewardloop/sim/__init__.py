"""Simulation core: bodies, terrains, scenes, features, batched rollouts and rendering.

Pure: arrays in, arrays out. Nothing here prints, reads the clock for decisions or touches the network.
"""

from rewardloop.sim import hand_scene as hand_scene  # registers the hand scenes' compiler (scene.HAND_SCENES)
