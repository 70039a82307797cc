"""The pure engine: graph spec, node catalog, validation, compiler, trainer.

Nothing here imports the server, the runner or the client.
"""
