"""Training: config, events, reporters, the trainer loop, metrics and checkpoints."""
