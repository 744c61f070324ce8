"""Reward programs: parse, validate, compile and evaluate weighted sums of named terms over Features."""
