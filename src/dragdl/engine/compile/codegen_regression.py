"""The parts of an exported training script that differ for a `train.Regressor`.

They reimplement `engine/tasks/regression.py`: the plain random split (one stratum of
`data/splits.py`), float targets, the configured loss between the (N, 1) outputs flattened and the
targets, and MAE, RMSE and R² from the errors. Formatted as `ruff format` writes them, like
`codegen_template.py`, whose kind-free blocks (data preparation, batches, device) they share.
"""

from __future__ import annotations

from dragdl.engine.compile.codegen_format import string_literal
from dragdl.engine.compile.codegen_tasks import (
    TARGET_COLUMN,
    TARGET_LABELS,
    TaskBlocks,
    register_task_blocks,
)
from dragdl.engine.compile.codegen_template import SAVE_WEIGHTS
from dragdl.engine.tasks.regression import Regression
from dragdl.engine.tasks.settings import RegressionConfig

SPLIT = '''
def split_indices(
    count: int, official_test: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Train/val/test indices by VAL_SPLIT and TEST_SPLIT: a plain random split.

    Drawn from SEED (a value has no class to stratify by). With an official test part
    only train and val are split (VAL_SPLIT of the rest).
    """
    val_ratio, test_ratio = VAL_SPLIT, TEST_SPLIT
    rng = np.random.default_rng(SEED)
    pool = np.arange(count)
    official = np.zeros(0, dtype=np.int64)
    if official_test is not None:
        official = np.sort(official_test)
        pool = np.setdiff1d(pool, official_test)
        test_ratio = 0.0
    pool = pool[rng.permutation(len(pool))]
    n_test = int(round(len(pool) * test_ratio))
    n_val = int(round(len(pool) * val_ratio))
    test = np.concatenate([official, pool[:n_test]])
    val, train = pool[n_test : n_test + n_val], pool[n_test + n_val :]
    return np.sort(train), np.sort(val), np.sort(test).astype(np.int64)
'''

EVALUATE = '''
def target_scale(train_targets: np.ndarray) -> tuple[float, float]:
    """Mean and standard deviation of the training targets (0, 1 without SCALE_TARGET).

    Net learns the standardized target and answers z * std + mean, in target units.
    """
    if not SCALE_TARGET or not len(train_targets):
        return 0.0, 1.0
    std = float(np.std(train_targets, dtype=np.float64))
    return float(np.mean(train_targets, dtype=np.float64)), std if std > 1e-12 else 1.0


def make_criterion(
    spread: float,
) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """The train node's loss (LOSS) between predicted and true values.

    Both are divided by the target's spread: the loss of the standardized target.
    """
    if LOSS == "mae":
        loss: nn.Module = nn.L1Loss()
    elif LOSS == "huber":
        loss = nn.HuberLoss(delta=HUBER_DELTA)
    else:
        loss = nn.MSELoss()
    return lambda predicted, actual: loss(predicted / spread, actual / spread)


def errors(predicted: torch.Tensor, actual: torch.Tensor) -> dict[str, float]:
    """MAE, RMSE and R² of predicted values (in float64).

    R² is undefined when every target is the same; it is 0 then ("no better than the
    mean").
    """
    y = actual.double()
    err = predicted.double() - y
    spread = float(((y - y.mean()) ** 2).sum())
    squared = float((err**2).sum())
    return {
        "mae": float(err.abs().mean()),
        "rmse": math.sqrt(squared / len(y)),
        "r2": 1.0 - squared / spread if spread > 1e-12 else 0.0,
    }


def evaluate(
    model: nn.Module, x_all: torch.Tensor, y_all: torch.Tensor, device: torch.device
) -> tuple[dict[str, float], np.ndarray]:
    """Loss, MAE, RMSE and R² over a prepared split, and the predicted values."""
    criterion = make_criterion(model.target_std)
    model.eval()
    loss_sum, predictions = 0.0, []
    with torch.no_grad():
        for start in range(0, len(y_all), BATCH_SIZE):
            x = to_device(x_all[start : start + BATCH_SIZE], device)
            y = y_all[start : start + BATCH_SIZE].to(device)
            with autocast(device):
                predicted = model(x).reshape(-1)  # one value per sample: (N, 1) -> (N,)
                loss = criterion(predicted, y.to(predicted.dtype))
            loss_sum += loss.item() * len(y)
            predictions.append(predicted.float().cpu())
    predicted = torch.cat(predictions)
    figures = {"loss": loss_sum / len(y_all), **errors(predicted, y_all)}
    return figures, predicted.numpy()
'''

TRAIN_HEAD = '''
def train(
    model: nn.Module,
    train_batches: Callable[[int], Batches],
    train_size: int,
    val: tuple[torch.Tensor, torch.Tensor],
    epochs: int,
    device: torch.device,
) -> None:
    """Train with the graph's loss, optimizer and schedule; validate every epoch."""
    criterion = make_criterion(model.target_std)
    fused = True  # one fused kernel per step, on the CPU as on CUDA
'''

TRAIN_LOOP = """    for epoch in range(epochs):
        # Reseed from (SEED, epoch): each epoch's randomness (dropout) can be replayed.
        torch.manual_seed(derive_seed(SEED, epoch))
        model.train()
        loss_sum, seen, outputs, actual = 0.0, 0, [], []
        for x, y in train_batches(epoch):
            x, y = to_device(x, device), y.to(device)
            with autocast(device):
                predicted = model(x).reshape(-1)  # one value per sample: (N, 1) -> (N,)
                loss = criterion(predicted, y.to(predicted.dtype))
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
"""

TRAIN_METRICS = """            loss_sum += loss.item() * len(y)
            outputs.append(predicted.detach().float().cpu())
            actual.append(y.cpu())
            seen += len(y)
        metrics = {"loss": loss_sum / seen}
        metrics.update(errors(torch.cat(outputs), torch.cat(actual)))
        if len(val[1]):
            val_figures, _ = evaluate(model, *val, device)
            metrics.update({f"val_{key}": value for key, value in val_figures.items()})
"""

IMPROVED = """        score = metrics[monitor]
        if monitor.endswith("r2"):  # R² grows as the fit improves, the others shrink
            improved = best_score is None or score > best_score
        else:
            improved = best_score is None or score < best_score
"""

MAIN_HEAD = """

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\\n\\n")[0])
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--out", type=Path, default=Path("model.safetensors"))
    args = parser.parse_args()
    device = pick_device()

    images, labels, classes, official_test = load_dataset()
    # Regression: a sample's target is its label (class name) read as a number.
    values = np.array([float(name) for name in classes])
    targets = values[labels].astype(np.float32)
    train_idx, val_idx, test_idx = split_indices(len(targets), official_test)
    train_transform, eval_transform = build_transforms(images, train_idx)
    val = prepare(images, targets, val_idx, eval_transform)
    test = prepare(images, targets, test_idx, eval_transform)
"""

MAIN_PRECOMPUTED = """    # No random operators: the training images are prepared once, like val and test.
    train_x, train_y = prepare(images, targets, train_idx, train_transform)
    train_batches = partial(shuffled_batches, train_x, train_y)
"""

MAIN_AUGMENTED = """    # Random operators: the training images are transformed anew in every epoch.
    train_batches = partial(
        augmented_batches, images, targets, train_idx, train_transform
    )
"""

MAIN_SUMMARY = """    low, high = float(targets.min()), float(targets.max())
    print(f"{len(val_idx)} val, {len(test_idx)} test images; targets {low:g}..{high:g}")
"""

MAIN_TAIL = """
    torch.manual_seed(SEED)  # the initial weights come from the seed
    model = Net(target_scale(targets[train_idx])).to(device)
    if channels_last(device):
        model = model.to(memory_format=torch.channels_last)
    train(model, train_batches, len(train_idx), val, args.epochs, device)

    if len(test_idx):
        figures, predicted = evaluate(model, *test, device)
        mae, rmse, r2 = figures["mae"], figures["rmse"], figures["r2"]
        print(f"test MAE: {mae:.4f}  RMSE: {rmse:.4f}  R²: {r2:.4f}")
        print(f"test loss: {figures['loss']:.4f}")
        for value, actual in list(zip(predicted, test[1].tolist(), strict=True))[:5]:
            print(f"  predicted {value:.3f}, actual {actual:g}")
    print(f"weights saved to {save_weights(model, args.out)}")


if __name__ == "__main__":
    main()
"""

NET_INIT = """    def __init__(self, target_scale: tuple[float, float] = (0.0, 1.0)) -> None:
        super().__init__()
        # The network learns the standardized target; forward answers in its units.
        self.target_mean, self.target_std = target_scale"""

# --- what the input types' writers place (`TaskBlocks.targets`) -------------------------------

COLUMN_TARGETS = """    targets = target.astype(np.float32)  # regression: the target column's numbers
    train_idx, val_idx, test_idx = split_indices(len(targets), None)
    y_all = torch.from_numpy(targets)
"""

LABELS_TARGETS = """    # Regression: a sequence's number (its class name read as one, if it has a class).
    numbers = np.array([float(name) for name in classes])[labels] if classes else labels
    targets = numbers.astype(np.float32)
    train_idx, val_idx, test_idx = split_indices(len(targets), official_test)
"""


def settings(config: RegressionConfig) -> list[str]:
    return [
        f'LOSS = {string_literal(config.loss)}  # "mse", "mae" or "huber"',
        f"HUBER_DELTA = {config.huber_delta!r}  # where Huber turns from squared to absolute",
        f"SCALE_TARGET = {config.scale_target}  # learn the target standardized",
    ]


REGRESSION = register_task_blocks(
    Regression.name,
    TaskBlocks(
        figure="test MAE, RMSE and R²",
        settings=settings,
        split=SPLIT,
        net_init=NET_INIT,
        evaluate=EVALUATE,
        train_head=TRAIN_HEAD,
        train_loop=TRAIN_LOOP,
        loss_expression="criterion(predicted, y.to(predicted.dtype))",
        train_metrics=TRAIN_METRICS,
        improved=IMPROVED,
        report=SAVE_WEIGHTS,
        main_head=MAIN_HEAD,
        main_precomputed=MAIN_PRECOMPUTED,
        main_augmented=MAIN_AUGMENTED,
        main_summary=MAIN_SUMMARY,
        main_tail=MAIN_TAIL,
        output_scaling=" * self.target_std + self.target_mean",
        targets={TARGET_COLUMN: COLUMN_TARGETS, TARGET_LABELS: LABELS_TARGETS},
    ),
)
