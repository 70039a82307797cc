"""The Python SDK of the DragDL REST API: `DragDLClient`, its typed answers and its one error."""

from dragdl.client.client import DragDLClient
from dragdl.client.credentials import DEFAULT_SERVER, credentials_path, load_token, save_token
from dragdl.client.errors import ApiError
from dragdl.client.events import Event
from dragdl.client.models import (
    Column,
    Dataset,
    Graph,
    GraphSummary,
    MetricPoint,
    Model,
    Prediction,
    Predictions,
    RowPrediction,
    RowPredictions,
    SamplePrediction,
    SamplePredictions,
    Sweep,
    Task,
    TaskError,
    TaskLog,
    Trial,
    User,
    ValidationResult,
    ValuePrediction,
)

__all__ = [
    "DEFAULT_SERVER",
    "ApiError",
    "Column",
    "Dataset",
    "DragDLClient",
    "Event",
    "Graph",
    "GraphSummary",
    "MetricPoint",
    "Model",
    "Prediction",
    "Predictions",
    "RowPrediction",
    "RowPredictions",
    "SamplePrediction",
    "SamplePredictions",
    "Sweep",
    "Task",
    "TaskError",
    "TaskLog",
    "Trial",
    "User",
    "ValidationResult",
    "ValuePrediction",
    "credentials_path",
    "load_token",
    "save_token",
]
