"""Policy search: a structured controller's parameters searched offline against the reward.

- `cmaes`: CMA-ES over a controller's parameters, the whole population rolled out as one batch;
- `policy`: a controller kind and its parameters as a file, and the shipped gaits (`control/gaits/`) that warm-start
  every search.
"""
