"""The fixed parts of an exported training script that no task kind changes; `codegen.py` fills
in the graph's parts, and each kind's blocks (`codegen_tasks.py`) what depends on the kind.

Every block is already formatted as `ruff format` writes it (88 columns) and reimplements one
piece of the engine so that the script trains exactly as `dragdl run` does on the same seed:
`data/stages.py` (derive_seed, uint8 -> float), `data/pipeline.py` (statistics for Normalize
"dataset"), `data/batches.py` (batch order, per-sample augmentation seeds) and `train/trainer.py`
(per-epoch reseeding, early stopping).
"""

from __future__ import annotations

STDLIB_IMPORTS = (
    "import argparse",
    "import math",
    "from collections.abc import Callable, Iterator",
    "from contextlib import contextmanager",
    "from functools import partial",
    "from pathlib import Path",
)
THIRD_PARTY_IMPORTS = (
    "import numpy as np",
    "import torch",
    "from torch import nn",
    "from torchvision.transforms import v2",
)

TYPES = """
Images = torch.Tensor | list[torch.Tensor]  # uint8 (N, C, H, W), or one (C, H, W) each
Batches = Iterator[tuple[torch.Tensor, torch.Tensor]]
"""

LOAD_DATASET_HEAD = '''
# --- Data -----------------------------------------------------------------------------
def load_dataset() -> tuple[Images, np.ndarray, list[str], np.ndarray | None]:
    """Images, int64 labels, class names and the official test part (or None)."""
'''


DERIVE_SEED = '''
def derive_seed(*parts: int) -> int:
    """A well-mixed 63-bit seed from several integers (for per-epoch random streams)."""
    state = np.random.SeedSequence(list(parts)).generate_state(2, np.uint32)
    return (int(state[0]) << 31) ^ int(state[1])
'''

SEEDS = (
    DERIVE_SEED
    + '''

@contextmanager
def one_thread() -> Iterator[None]:
    """Small per-image operations run fastest on one thread."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
'''
)

CHANNEL_STATS = '''
def channel_stats(
    images: Images, indices: np.ndarray, ops: list[nn.Module]
) -> tuple[list[float], list[float]]:
    """Per-channel mean and std of training images after `ops`, as floats in [0, 1].

    Measured on at most 20,000 images (and 1 GiB of them): a sample drawn from SEED.
    """
    to_float = v2.Compose([*ops, v2.ToDtype(torch.float32, scale=True)])
    first = to_float(images[int(indices[0])])
    limit = min(20_000, max(1, 2**30 // (first.numel() * 4)))
    if len(indices) > limit:
        rng = np.random.default_rng(derive_seed(SEED, 3))
        indices = np.sort(rng.choice(indices, size=limit, replace=False))
    with one_thread():
        x = torch.stack([to_float(images[int(i)]) for i in indices])
    mean, std = x.mean(dim=(0, 2, 3)), x.std(dim=(0, 2, 3)).clamp_min(1e-6)
    return mean.tolist(), std.tolist()
'''

PREPARE = '''
def prepare(
    images: Images, labels: np.ndarray, indices: np.ndarray, transform: v2.Compose
) -> tuple[torch.Tensor, torch.Tensor]:
    """The images of a split through `transform`, stacked once (not every epoch)."""
    if len(indices) == 0:
        return torch.zeros(0), torch.zeros(0, dtype=torch.int64)
    with one_thread():
        x = torch.stack([transform(images[int(i)]) for i in indices])
    return x, torch.from_numpy(labels[indices])
'''

TRANSFORMS_HEAD = '''
def build_transforms(
    images: Images, train_idx: np.ndarray
) -> tuple[v2.Compose, v2.Compose]:
    """Training transforms (every operator) and evaluation ones (deterministic ones).

    uint8 images become floats in [0, 1] before the first operator that needs floats (or
    at the end), as DragDL converts them.
    """
'''

SHUFFLED_BATCHES = '''
def shuffled_batches(x_all: torch.Tensor, y_all: torch.Tensor, epoch: int) -> Batches:
    """The training batches of one epoch, in an order drawn from (SEED, epoch)."""
    gen = torch.Generator().manual_seed(derive_seed(SEED, epoch, 0))
    order = torch.randperm(len(y_all), generator=gen)
    for start in range(0, len(order), BATCH_SIZE):
        rows = order[start : start + BATCH_SIZE]
        yield x_all[rows], y_all[rows]
'''

AUGMENTED_BATCHES = '''
def augmented_batches(
    images: Images,
    labels: np.ndarray,
    indices: np.ndarray,
    transform: v2.Compose,
    epoch: int,
) -> Batches:
    """Training batches of one epoch: order and augmentation drawn from (SEED, epoch).

    Every image is transformed from its own seed, so augmentation does not depend on the
    batching; torch's global generator (dropout uses it) is put back afterwards.
    """
    n = len(indices)
    order = torch.randperm(
        n, generator=torch.Generator().manual_seed(derive_seed(SEED, epoch, 0))
    ).tolist()
    gen = torch.Generator().manual_seed(derive_seed(SEED, epoch, 1))
    seeds = torch.randint(0, 2**62, (n,), generator=gen).tolist()
    for start in range(0, n, BATCH_SIZE):
        rows = order[start : start + BATCH_SIZE]
        state = torch.get_rng_state()
        x = []
        with one_thread():
            for position, row in enumerate(rows, start):
                torch.default_generator.manual_seed(seeds[position])
                x.append(transform(images[int(indices[row])]))
        torch.set_rng_state(state)
        yield torch.stack(x), torch.from_numpy(labels[indices[rows]])
'''

DEVICE = '''
# --- Training -------------------------------------------------------------------------
def pick_device() -> torch.device:
    if DEVICE == "cuda" or (DEVICE == "auto" and torch.cuda.is_available()):
        return torch.device("cuda")
    return torch.device("cpu")


def amp_dtype(device: torch.device) -> torch.dtype | None:
    """The autocast dtype of PRECISION here (None: full fp32); the weights stay fp32."""
    if PRECISION == "fp32" or (PRECISION == "auto" and device.type != "cuda"):
        return None
    if device.type == "cuda" and not torch.cuda.is_bf16_supported():
        return torch.float16  # older GPUs have no bf16; fp16 needs loss scaling
    return torch.bfloat16


def autocast(device: torch.device) -> torch.autocast:
    dtype = amp_dtype(device)
    return torch.autocast(device.type, dtype=dtype, enabled=dtype is not None)


def channels_last(device: torch.device) -> bool:
    """Whether image batches and convolution weights use the channels-last layout."""
    return MEMORY_FORMAT == "channels_last" or (
        MEMORY_FORMAT == "auto" and device.type == "cuda"
    )


def to_device(x: torch.Tensor, device: torch.device) -> torch.Tensor:
    """A batch on the device, in the layout MEMORY_FORMAT asks for (images only)."""
    x = x.to(device)
    if x.ndim == 4 and channels_last(device):
        return x.contiguous(memory_format=torch.channels_last)
    return x
'''


WITH_ADDED_LOSSES = '''
def with_added_losses(loss: torch.Tensor, model: nn.Module) -> torch.Tensor:
    """`loss` plus the terms the network's layers keep in `added_loss` after a forward
    pass in training (a T-Net's orthogonality), as DragDL's task kinds add them."""
    for module in model.modules():
        term = getattr(module, "added_loss", None)
        if isinstance(term, torch.Tensor):
            loss = loss + term
    return loss
'''

TRAIN_SETUP = """    fp16 = amp_dtype(device) == torch.float16
    scaler = torch.amp.GradScaler(device.type, enabled=fp16)  # fp16 needs loss scaling
    steps_per_epoch = math.ceil(train_size / BATCH_SIZE)
    print(f"{train_size} training images, {steps_per_epoch} steps per epoch, {device}")
"""


EPOCH_PRINT = """        shown = "  ".join(f"{name} {value:.4f}" for name, value in metrics.items())
        print(f"epoch {epoch + 1}/{epochs}  {shown}")
"""

EARLY_STOPPING_INIT = """    # Early stopping: stop once MONITOR has not improved for PATIENCE epochs, and
    # keep the best weights.
    monitor = MONITOR if len(val[1]) else MONITOR.removeprefix("val_")
    best_score, best_epoch, best_state, bad_epochs = None, 0, None, 0
"""


EARLY_STOPPING_CHECK = """        if improved:
            best_score, best_epoch, bad_epochs = score, epoch + 1, 0
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        else:
            bad_epochs += 1
            if bad_epochs >= PATIENCE:
                print(f"early stopping: no better {monitor} for {bad_epochs} epochs")
                break
    if best_state is not None:
        print(f"best weights restored: epoch {best_epoch}, {monitor} {best_score:.4g}")
        model.load_state_dict(best_state)
"""


SAVE_WEIGHTS = '''
def save_weights(model: nn.Module, path: Path) -> Path:
    """safetensors when installed (no pickle), else torch.save of the state dict."""
    try:
        from safetensors.torch import save_model
    except ImportError:
        path = path.with_suffix(".pt")
        torch.save(model.state_dict(), path)
    else:
        # safetensors holds contiguous tensors: channels-last weights go back.
        save_model(model.to(memory_format=torch.contiguous_format), str(path))
    return path
'''


# --- Pretrained model nodes: the classes their `codegen()` expressions call (each backbone
# family adds its own helper: `engine/models/family_*.py`, `script_helper`) ------------------

TRANSFER_IMPORTS = ("from torch.nn import functional as F", "from typing import Any")

TRANSFER = '''
class InputAdapter(nn.Module):
    """Fit float images in [0, 1] to a pretrained backbone: grayscale is repeated to 3
    channels, images are resized (when `resize_to` is given) and normalized."""

    def __init__(
        self,
        in_channels: int,
        resize_to: tuple[int, int] | None,
        mean: list[float],
        std: list[float],
    ) -> None:
        super().__init__()
        self.in_channels, self.resize_to = in_channels, resize_to
        self.register_buffer("mean", torch.tensor(mean).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor(std).view(1, 3, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.in_channels == 1:
            x = x.expand(-1, 3, -1, -1)
        if self.resize_to is not None:
            x = F.interpolate(
                x,
                size=self.resize_to,
                mode="bilinear",
                align_corners=False,
                antialias=True,
            )
        return (x - self.mean) / self.std


class Transfer(nn.Module):
    """adapter -> pretrained features -> new head.

    A frozen backbone never learns and stays in eval mode, keeping its BatchNorm
    statistics. DragDL then computes its features once and trains the head on them;
    running it at every step, as here, gives the same result, only slower.
    """

    def __init__(
        self,
        adapter: nn.Module,
        features: nn.Module,
        head: nn.Module,
        freeze_features: bool,
        backbone_lr_scale: float,
    ) -> None:
        super().__init__()
        self.adapter, self.features, self.head = adapter, features, head
        self.frozen, self.backbone_lr_scale = freeze_features, backbone_lr_scale
        if freeze_features:
            self.features.requires_grad_(False)
            self.features.eval()

    def train(self, mode: bool = True) -> "Transfer":
        super().train(mode)
        if self.frozen:
            self.features.eval()
        return self

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(self.adapter(x)))

    def param_groups(self, lr: float) -> list[dict[str, Any]]:
        """Optimizer groups: the backbone at lr * backbone_lr_scale, the head at lr."""
        groups = []
        backbone = [p for p in self.features.parameters() if p.requires_grad]
        if backbone and self.backbone_lr_scale > 0:
            groups.append({"params": backbone, "lr": lr * self.backbone_lr_scale})
        groups.append({"params": list(self.head.parameters()), "lr": lr})
        return groups
'''
