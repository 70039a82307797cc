"""Graph spec, validation and shape inference."""
