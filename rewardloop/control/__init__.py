"""Controller optimization: posture-space sampling MPC, low-level controllers and task metrics."""
