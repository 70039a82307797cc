"""A graph checked against the node catalog: staged validation, structure and shape inference."""
