"""Simulation core: bodies, terrains, scenes, features, batched rollouts and rendering.

Pure: arrays in, arrays out. Nothing here prints, reads the clock for decisions or touches the network.
"""
