"""The blocks of an exported training script for a `train.Classifier` (the classification kind).

They reimplement `engine/tasks/classification.py`: the split stratified by class
(`data/splits.py`), int64 class targets, cross-entropy with label smoothing, accuracy, and the
per-class precision, recall and F1 of the test report. Formatted as `ruff format` writes them, like
`codegen_template.py`, whose kind-free blocks they share.
"""

from __future__ import annotations

from dragdl.engine.compile.codegen_tasks import (
    TARGET_COLUMN,
    TARGET_LABELS,
    TaskBlocks,
    register_task_blocks,
)
from dragdl.engine.compile.codegen_template import SAVE_WEIGHTS
from dragdl.engine.tasks.classification import Classification
from dragdl.engine.tasks.settings import TrainConfig

SPLIT = '''
def split_indices(
    labels: np.ndarray, official_test: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Train/val/test indices by VAL_SPLIT and TEST_SPLIT, stratified by class.

    Drawn from SEED. With an official test part only train and val are split (VAL_SPLIT
    of the rest).
    """
    val_ratio, test_ratio = VAL_SPLIT, TEST_SPLIT
    rng = np.random.default_rng(SEED)
    pool = np.arange(len(labels))
    train, val, test = [], [], []
    if official_test is not None:
        test.append(np.sort(official_test))
        pool = np.setdiff1d(pool, official_test)
        test_ratio = 0.0
    for cls in np.unique(labels[pool]):
        members = pool[labels[pool] == cls]
        members = members[rng.permutation(len(members))]
        n_test = int(round(len(members) * test_ratio))
        n_val = int(round(len(members) * val_ratio))
        test.append(members[:n_test])
        val.append(members[n_test : n_test + n_val])
        train.append(members[n_test + n_val :])

    def joined(parts: list[np.ndarray]) -> np.ndarray:
        return np.sort(np.concatenate(parts)).astype(np.int64)

    return joined(train), joined(val), joined(test)
'''

EVALUATE = '''
def evaluate(
    model: nn.Module, x_all: torch.Tensor, y_all: torch.Tensor, device: torch.device
) -> tuple[float, float, np.ndarray]:
    """Loss, accuracy and predicted classes over a prepared split."""
    criterion = nn.CrossEntropyLoss(label_smoothing=LABEL_SMOOTHING)
    model.eval()
    loss_sum, predictions = 0.0, []
    with torch.no_grad():
        for start in range(0, len(y_all), BATCH_SIZE):
            x = to_device(x_all[start : start + BATCH_SIZE], device)
            y = y_all[start : start + BATCH_SIZE].to(device)
            with autocast(device):
                logits = model(x)
                loss = criterion(logits, y)
            loss_sum += loss.item() * len(y)
            predictions.append(logits.argmax(dim=1).cpu())
    predicted = torch.cat(predictions).numpy()
    return loss_sum / len(y_all), float(np.mean(predicted == y_all.numpy())), predicted
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
    criterion = nn.CrossEntropyLoss(label_smoothing=LABEL_SMOOTHING)
    fused = True  # one fused kernel per step, on the CPU as on CUDA
'''

TRAIN_LOOP = """    for epoch in range(epochs):
        # Reseed from (SEED, epoch): each epoch's randomness (dropout) can be replayed.
        torch.manual_seed(derive_seed(SEED, epoch))
        model.train()
        loss_sum, correct, seen = 0.0, 0, 0
        for x, y in train_batches(epoch):
            x, y = to_device(x, device), y.to(device)
            with autocast(device):
                logits = model(x)
                loss = criterion(logits, y)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
"""

TRAIN_METRICS = """            loss_sum += loss.item() * len(y)
            correct += int((logits.argmax(dim=1) == y).sum())
            seen += len(y)
        metrics = {"loss": loss_sum / seen, "accuracy": correct / seen}
        if len(val[1]):
            val_loss, val_accuracy, _ = evaluate(model, *val, device)
            metrics.update(val_loss=val_loss, val_accuracy=val_accuracy)
"""

IMPROVED = """        score = metrics[monitor]
        if monitor.endswith("loss"):
            improved = best_score is None or score < best_score
        else:
            improved = best_score is None or score > best_score
"""

REPORT = '''
def print_report(preds: np.ndarray, targets: np.ndarray, classes: list[str]) -> None:
    """Precision, recall and F1 per class (0 where undefined), from the confusions."""
    k = len(classes)
    matrix = np.bincount(targets * k + preds, minlength=k * k).reshape(k, k)
    hits = np.diag(matrix)
    predicted_as, support = matrix.sum(axis=0), matrix.sum(axis=1)
    precision = np.divide(hits, predicted_as, out=np.zeros(k), where=predicted_as > 0)
    recall = np.divide(hits, support, out=np.zeros(k), where=support > 0)
    both = precision + recall
    f1 = np.divide(2 * precision * recall, both, out=np.zeros(k), where=both > 0)
    width = max(len(name) for name in [*classes, "class"])
    print(f"{'class':<{width}}  precision  recall      f1  support")
    for i, name in enumerate(classes):
        print(
            f"{name:<{width}}  {precision[i]:9.3f}  {recall[i]:6.3f}  {f1[i]:6.3f}"
            f"  {support[i]:7d}"
        )
'''

MAIN_HEAD = """

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\\n\\n")[0])
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--out", type=Path, default=Path("model.safetensors"))
    args = parser.parse_args()
    device = pick_device()

    images, labels, classes, official_test = load_dataset()
    train_idx, val_idx, test_idx = split_indices(labels, official_test)
    train_transform, eval_transform = build_transforms(images, train_idx)
    val = prepare(images, labels, val_idx, eval_transform)
    test = prepare(images, labels, test_idx, eval_transform)
"""

MAIN_PRECOMPUTED = """    # No random operators: the training images are prepared once, like val and test.
    train_x, train_y = prepare(images, labels, train_idx, train_transform)
    train_batches = partial(shuffled_batches, train_x, train_y)
"""

MAIN_AUGMENTED = """    # Random operators: the training images are transformed anew in every epoch.
    train_batches = partial(
        augmented_batches, images, labels, train_idx, train_transform
    )
"""

MAIN_SUMMARY = """    print(f"{len(val_idx)} val and {len(test_idx)} test images, {len(classes)} classes")
"""

MAIN_TAIL = """
    torch.manual_seed(SEED)  # the initial weights come from the seed
    model = Net().to(device)
    if channels_last(device):
        model = model.to(memory_format=torch.channels_last)
    train(model, train_batches, len(train_idx), val, args.epochs, device)

    if len(test_idx):
        loss, accuracy, predicted = evaluate(model, *test, device)
        correct = int(np.sum(predicted == test[1].numpy()))
        print(f"test accuracy: {accuracy:.4f} ({correct}/{len(test_idx)})")
        print(f"test loss: {loss:.4f}")
        print_report(predicted, test[1].numpy(), classes)
    print(f"weights saved to {save_weights(model, args.out)}")


if __name__ == "__main__":
    main()
"""

NET_INIT = """    def __init__(self) -> None:
        super().__init__()"""

# --- what the input types' writers place (`TaskBlocks.targets`, `target_helpers`) -------------

COLUMN_TARGETS = """    labels, classes = class_labels(target)
    train_idx, val_idx, test_idx = split_indices(labels, None)
    y_all = torch.from_numpy(labels)
"""

CLASS_LABELS = '''
def class_labels(target: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Class indices into the sorted distinct targets (numbers sorted as numbers)."""
    values = target if target.dtype.kind == "f" else target.astype(str)
    distinct, labels = np.unique(values, return_inverse=True)
    classes = [
        str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
        for v in distinct.tolist()
    ]
    return labels.astype(np.int64).reshape(-1), classes
'''

LABELS_TARGETS = """    targets = labels
    train_idx, val_idx, test_idx = split_indices(labels, official_test)
"""


def settings(config: TrainConfig) -> list[str]:
    return [f"LABEL_SMOOTHING = {config.label_smoothing!r}"]


CLASSIFICATION = register_task_blocks(
    Classification.name,
    TaskBlocks(
        figure="test accuracy",
        settings=settings,
        split=SPLIT,
        net_init=NET_INIT,
        evaluate=EVALUATE,
        train_head=TRAIN_HEAD,
        train_loop=TRAIN_LOOP,
        loss_expression="criterion(logits, y)",
        train_metrics=TRAIN_METRICS,
        improved=IMPROVED,
        report=REPORT + "\n" + SAVE_WEIGHTS,
        main_head=MAIN_HEAD,
        main_precomputed=MAIN_PRECOMPUTED,
        main_augmented=MAIN_AUGMENTED,
        main_summary=MAIN_SUMMARY,
        main_tail=MAIN_TAIL,
        targets={TARGET_COLUMN: COLUMN_TARGETS, TARGET_LABELS: LABELS_TARGETS},
        target_helpers={TARGET_COLUMN: CLASS_LABELS},
    ),
)
