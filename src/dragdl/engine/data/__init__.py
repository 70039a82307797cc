"""Labelled image sources, dataset loaders, splits and the batch pipeline."""
