"""The train nodes: the sink of every graph. Each names its task kind and holds how to train."""

from __future__ import annotations

from typing import ClassVar

from dragdl.engine.nodes.base import TrainNode
from dragdl.engine.nodes.registry import register
from dragdl.engine.tasks.classification import Classification
from dragdl.engine.tasks.regression import Regression
from dragdl.engine.tasks.settings import RegressionConfig, TrainConfig


@register
class Classifier(TrainNode[TrainConfig]):
    type = "train.Classifier"
    title = "Train classifier"
    description = (
        "Trains the network to tell the dataset's classes apart with cross-entropy loss, then tests it "
        "on held-out samples. Connect the last layer (or a pretrained model) here."
    )
    params_model = TrainConfig
    task: ClassVar = Classification()


@register
class Regressor(TrainNode[RegressionConfig]):
    type = "train.Regressor"
    title = "Train regressor"
    description = (
        "Trains the network to predict a number per sample (the dataset's target column, or image "
        "labels that are numbers), then tests it with MAE, RMSE and R². Connect the last layer here."
    )
    params_model = RegressionConfig
    task: ClassVar = Regression()
