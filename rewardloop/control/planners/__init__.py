"""Planners: receding-horizon sampling over a plan, chosen online against the reward.

- `mpc`: posture-space MPPI / cross-entropy and predictive sampling over spline plans, for any motion;
- `plants`: how a plan's targets become motion (PD on torque bodies, the MPC² muscle controller, raw controls);
- `receding`: receding-horizon modulation of a structured controller's parameters (MPC over a policy);
- `gait_planning`: the gait planner, a shipped gait's steering parameters re-chosen online against the reward.
"""
