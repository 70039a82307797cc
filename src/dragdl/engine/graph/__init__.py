"""The graph as data: its spec, its errors, the search section and the Lambda expression language.

Nothing here knows the node catalog; checking a graph against it is `engine.analysis`.
"""
