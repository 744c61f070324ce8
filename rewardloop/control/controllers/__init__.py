"""Controllers: feedback laws with a documented parameter vector, run for a whole batch inside rollouts.

- `base`: the controller interface, its parameter space, the batched closed-loop runner and the literal registry;
- low-level, target postures -> actuator commands: `lowlevel` (PD for torque bodies), `muscles` (the MPC² muscle
  controller);
- the torque humanoid: `humanoid` (what its controllers share), `gait_machine` (SIMBICON-style), `gait_tracker`
  (people's joint curves with balance feedback);
- the muscle legs: `musclebody` (what their controllers share), `reflex` (Song and Geyer's reflexes),
  `muscle_tracker` (people's joint curves through muscle excitations).
"""
