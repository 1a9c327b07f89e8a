"""Privacy criteria: classic baselines and worst-case background knowledge."""
