"""Hyper-parameter sweeps: the graph's search section, its validation, and the Optuna study built
from stored trials. Importing this package imports neither torch nor Optuna."""
