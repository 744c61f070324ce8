"""The closed loop: runs, candidates and selection, the run store, executors."""
