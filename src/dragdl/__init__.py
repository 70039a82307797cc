"""DragDL: a visual deep-learning workbench."""

__version__ = "0.1.0"
