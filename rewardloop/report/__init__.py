"""Self-contained HTML reports of runs."""
