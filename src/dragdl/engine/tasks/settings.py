"""How to train: the params models of the train nodes (their JSON Schemas drive the UI forms).

`TrainSettings` holds what every task kind shares; `TrainConfig` (classifier) and
`RegressionConfig` add the loss and the watched metrics of their kind.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from dragdl.engine.data.tables import MissingTargets

Optimizer = Literal["sgd", "adam", "adamw"]
Schedule = Literal["none", "step", "cosine", "onecycle"]
Monitor = Literal["val_loss", "val_accuracy"]
RegressionMonitor = Literal["val_loss", "val_mae", "val_rmse", "val_r2"]
RegressionLoss = Literal["mse", "mae", "huber"]
DeviceChoice = Literal["auto", "cpu", "cuda"]
PrecisionChoice = Literal["auto", "fp32", "bf16"]
MemoryFormatChoice = Literal["auto", "contiguous", "channels_last"]


class TrainSettings(BaseModel):
    """Optimizer, schedule, epochs, splits, seed and device: what every task kind shares."""

    model_config = ConfigDict(extra="forbid")

    epochs: int = Field(10, ge=1, le=1000, title="Epochs", description="Passes over the training split.")
    batch_size: int = Field(
        64, ge=1, le=8192, title="Batch size", description="Samples per optimization step."
    )
    optimizer: Optimizer = Field("adam", title="Optimizer", description="Optimization algorithm.")
    lr: float = Field(
        1e-3, gt=0, le=10, title="Learning rate", description="Learning rate (the peak rate for onecycle)."
    )
    momentum: float = Field(
        0.9,
        ge=0,
        le=0.999,
        json_schema_extra={"x-show-if": {"optimizer": ["sgd"]}},
        title="Momentum",
        description="Momentum; used by SGD only.",
    )
    weight_decay: float = Field(
        0.0,
        ge=0,
        le=1,
        title="Weight decay",
        description="L2 penalty (decoupled for AdamW) applied by the optimizer.",
    )
    schedule: Schedule = Field(
        "none",
        title="Learning-rate schedule",
        description="Learning-rate schedule: step (multiply by gamma every step_size epochs), "
        "cosine (anneal to 0 over the run), onecycle (warm up to lr, then anneal).",
    )
    step_size: int = Field(
        10,
        ge=1,
        le=1000,
        json_schema_extra={"x-show-if": {"schedule": ["step"]}},
        title="Step size (epochs)",
        description="Epochs between decays of the step schedule.",
    )
    gamma: float = Field(
        0.1,
        ge=0,
        le=1,
        json_schema_extra={"x-show-if": {"schedule": ["step"]}},
        title="Decay factor",
        description="Decay factor of the step schedule.",
    )
    early_stopping: bool = Field(
        False,
        title="Early stopping",
        description="Stop when the monitored metric stops improving, and keep the best weights.",
    )
    patience: int = Field(
        5,
        ge=1,
        le=1000,
        json_schema_extra={"x-show-if": {"early_stopping": [True]}},
        title="Patience (epochs)",
        description="Epochs without improvement before early stopping.",
    )
    seed: int = Field(
        0,
        ge=0,
        le=2**31 - 1,
        title="Random seed",
        description="Seed for splits, shuffling, augmentation and init.",
    )
    device: DeviceChoice = Field(
        "auto", title="Device", description="Where to train; auto picks CUDA when available."
    )
    val_split: float = Field(
        0.1,
        ge=0,
        le=0.5,
        title="Validation share",
        description="Share of the samples held out for validation.",
    )
    test_split: float = Field(
        0.2,
        ge=0,
        le=0.5,
        title="Test share",
        description="Share of the samples held out for the final test (ignored with a predefined test set).",
    )
    checkpoint_minutes: float = Field(
        10.0,
        ge=0,
        le=1440,
        title="Checkpoint interval (minutes)",
        description="Minutes between mid-epoch checkpoints; 0 checkpoints only at epoch ends.",
    )
    precision: PrecisionChoice = Field(
        "auto",
        title="Precision",
        description="Number format of the forward and backward passes; the weights stay fp32. auto "
        "measures a few steps at the start and keeps the fastest whose loss agrees with fp32 (runs too "
        "small to gain are not measured and train in fp32; on CUDA: bf16 where supported, else fp16); "
        "fp32 = full precision; bf16 = bfloat16 mixed precision.",
    )
    memory_format: MemoryFormatChoice = Field(
        "auto",
        title="Memory format",
        description="Layout of image batches and convolution weights in memory. auto measures it with "
        "the precision (channels last on CUDA); contiguous = PyTorch's default, each channel a whole "
        "image plane; channels_last = the channels of each pixel side by side, which speeds up "
        "convolutions on many machines.",
    )

    workers: int = Field(
        1,
        ge=1,
        le=256,
        title="Workers",
        description="Processes that train the network together, possibly on several machines: each "
        "takes its share of every batch and their gradients are averaged (data-parallel on Ray Train), "
        "so the run learns as one process with the same batch size would. 1 trains in one process.",
    )
    cpus_per_worker: float = Field(
        1.0,
        gt=0,
        le=256,
        json_schema_extra={"x-show-above": {"workers": 1}},
        title="CPUs per worker",
        description="CPU cores each worker of a distributed run (workers above 1) holds.",
    )
    gpus_per_worker: float = Field(
        0.0,
        ge=0,
        le=16,
        json_schema_extra={"x-show-above": {"workers": 1}},
        title="GPUs per worker",
        description="GPUs each worker of a distributed run holds; above 0 the workers train on CUDA "
        "and exchange gradients with NCCL (gloo on CPUs).",
    )
    worker_failures: int = Field(
        3,
        ge=0,
        le=100,
        json_schema_extra={"x-show-above": {"workers": 1}},
        title="Worker failures allowed",
        description="Times a distributed run restarts from its last checkpoint when a worker or its "
        "machine dies, before the task fails.",
    )
    missing_targets: MissingTargets = Field(
        "drop",
        title="Rows without a target",
        description="drop: rows whose target is empty are left out, and the dataset summary and the "
        "training log say how many and which; refuse: such a row is an error, for data that must be "
        "complete.",
    )

    monitor: str = Field(
        "val_loss",
        title="Watched metric",
        description="Metric watched by early stopping and for choosing the best weights.",
    )
    """Each kind's config narrows this to the metrics its kind reports."""

    @model_validator(mode="before")
    @classmethod
    def _amp_of_earlier_versions(cls, data: Any) -> Any:
        # Graphs saved before `precision` have `amp` ("auto" | "off"): "off" meant full fp32
        # everywhere, "auto" mixed precision where it pays, which is what precision "auto" does.
        if isinstance(data, dict) and data.get("amp") in ("auto", "off"):
            data = dict(data)
            if data.pop("amp") == "off":
                data.setdefault("precision", "fp32")
        return data

    @model_validator(mode="after")
    def _splits_leave_training_data(self) -> TrainSettings:
        if self.val_split + self.test_split >= 0.9:
            raise ValueError(
                f"val_split ({self.val_split}) + test_split ({self.test_split}) must be below 0.9 "
                "so that enough samples remain for training"
            )
        return self

    @field_validator("workers")
    @classmethod
    def _every_worker_gets_samples(cls, workers: int, info: ValidationInfo) -> int:
        batch_size = info.data.get("batch_size")
        if isinstance(batch_size, int) and workers > batch_size:
            raise PydanticCustomError(
                "workers_above_batch",
                "workers ({workers}) must be at most the batch size ({limit})",
                {"workers": workers, "limit": batch_size},
            )
        return workers

    @field_validator("gpus_per_worker")
    @classmethod
    def _cuda_workers_have_gpus(cls, gpus: float, info: ValidationInfo) -> float:
        if gpus <= 0 and info.data.get("device") == "cuda" and info.data.get("workers", 1) > 1:
            raise PydanticCustomError(
                "worker_needs_gpu", "each worker needs a GPU when the device is CUDA", {"limit": 1}
            )
        return gpus


class TrainConfig(TrainSettings):
    """The `train.Classifier` node: cross-entropy with optional label smoothing."""

    label_smoothing: float = Field(
        0.0,
        ge=0,
        le=0.5,
        title="Label smoothing",
        description="Share of the target probability spread over all classes.",
    )
    monitor: Monitor = Field(
        "val_loss",
        title="Watched metric",
        description="Metric watched by early stopping and for choosing the best weights.",
    )


class RegressionConfig(TrainSettings):
    """The `train.Regressor` node: a loss between predicted and true values."""

    loss: RegressionLoss = Field(
        "mse",
        title="Loss",
        description="mse: mean squared error; mae: mean absolute error (robust to outliers); "
        "huber: squared near zero, absolute beyond delta.",
    )
    huber_delta: float = Field(
        1.0,
        gt=0,
        le=1e6,
        json_schema_extra={"x-show-if": {"loss": ["huber"]}},
        title="Huber delta",
        description="Error size where the Huber loss turns from squared to absolute (in standard "
        "deviations of the target when the target is scaled).",
    )
    scale_target: bool = Field(
        True,
        title="Scale the target",
        description="Learn the target standardized with the training rows' mean and standard "
        "deviation, and answer in its own units: targets in the thousands train as well as targets "
        "near 1, at the same learning rate.",
    )
    monitor: RegressionMonitor = Field(
        "val_loss",
        title="Watched metric",
        description="Metric watched by early stopping and for choosing the best weights.",
    )
