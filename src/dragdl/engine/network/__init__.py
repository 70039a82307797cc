"""The network a graph describes, as one nn.Module: what the trainer, the compiler and bundles run."""
