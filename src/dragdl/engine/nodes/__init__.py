"""The node catalog. Importing this package registers every node family exactly once."""

from dragdl.engine.nodes import (  # noqa: F401  (imported for their registrations)
    activations,
    datasets,
    layers,
    merge,
    models,
    ops_geometry,
    ops_pixel,
    ops_points,
    ops_sequence,
    point_datasets,
    point_layers,
    sequence_datasets,
    sequence_layers,
    table_ops,
    tables,
    train,
    uploaded,
)
from dragdl.engine.nodes.registry import all_node_types, catalog, get_node_type, register

__all__ = ["all_node_types", "catalog", "get_node_type", "register"]
