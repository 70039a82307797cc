"""Runs: a graph compiled and trained, in one process (`single`) or on Ray Train's workers
(`distributed`), chosen by `launch.run_graph`; the feature cache of frozen backbones."""

from dragdl.engine.run.launch import run_graph
from dragdl.engine.run.single import prepare, read_report, split, train_plan

__all__ = ["prepare", "read_report", "run_graph", "split", "train_plan"]
