"""Controller optimization: the optimizer registry (`optimizer`), its settings (`config`, `defaults`), task metrics
and trajectories; `planners/` (receding-horizon sampling), `search/` (policy search), `controllers/` (feedback laws
per body kind) and `gaits/` (the shipped gaits)."""
