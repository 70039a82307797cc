"""The train node: the sink of every graph, holding loss, optimizer, schedule, epochs and splits."""

from __future__ import annotations

from dragdl.engine.nodes.base import TrainNode
from dragdl.engine.nodes.registry import register
from dragdl.engine.train.config import TrainConfig


@register
class Classifier(TrainNode[TrainConfig]):
    type = "train.Classifier"
    title = "Train classifier"
    description = (
        "Trains the network to classify the dataset's images with cross-entropy loss, then tests it on "
        "held-out images. Connect the last layer (or a pretrained model) here."
    )
    params_model = TrainConfig
