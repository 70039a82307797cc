"""Point cloud bundles: a small PointNet trained on the built-in shapes, opened with load_bundle (its
Sample points and Normalize rebuilt from model.json), answering the same for shuffled points, predicting
from .npy, .xyz/.pts, .off and ASCII or binary .ply files as from the array, hostile files refused
naming the file, and an ONNX export checked against onnxruntime."""

from __future__ import annotations

import io
import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from tests.graphs import chain

from dragdl.engine.bundle import load_bundle
from dragdl.engine.data.base import DataContext, DatasetError
from dragdl.engine.data.point_builtin import SHAPES, open_point_builtin
from dragdl.engine.run import run_graph
from dragdl.engine.train.reporter import ListReporter


def pointnet_graph() -> dict[str, Any]:
    return chain(
        "small PointNet",
        [
            ("data", "dataset.points", {"points": 96, "per_class": 20, "seed": 3}),
            ("sample", "op.SamplePoints", {"points": 64}),
            ("norm", "op.NormalizePoints", {}),
            ("rotate", "op.RandomRotatePoints", {}),
            ("tnet", "layer.TNet", {"width": 8}),
            ("mlp1", "layer.SharedMLP", {"out_channels": 16}),
            ("feat", "layer.TNet", {"transform": "feature", "width": 8}),
            ("mlp2", "layer.SharedMLP", {"out_channels": 32}),
            ("pool", "layer.GlobalPoolPoints", {}),
            ("fc", "layer.Linear", {"out_features": "auto"}),
            ("train", "train.Classifier", {"epochs": 1, "batch_size": 16, "lr": 0.01, "device": "cpu"}),
        ],
    )


@pytest.fixture(scope="module")
def bundle_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("points")
    out = root / "run"
    result = run_graph(
        pointnet_graph(), DataContext(data_dir=root, allow_download=False), out, ListReporter()
    )
    assert result.status == "succeeded", result
    return out


def clouds(count: int = 4) -> np.ndarray:
    """Clouds of the built-in set at another size than the model's (150 points: sampled to 64)."""
    return open_point_builtin("shapes", 150, 2, seed=11).values[:count]


def test_a_point_bundle_rebuilds_its_deterministic_operators(bundle_dir: Path) -> None:
    manifest = json.loads((bundle_dir / "model.json").read_text())
    assert manifest["dataset"]["shape"] == [96, 3]
    assert [t["type"] for t in manifest["eval_transforms"]] == ["op.SamplePoints", "op.NormalizePoints"]
    bundle = load_bundle(bundle_dir)
    assert bundle.input_type.name == "points" and bundle.classes == list(SHAPES)


def test_the_answer_does_not_depend_on_the_order_of_the_points(bundle_dir: Path) -> None:
    bundle = load_bundle(bundle_dir)
    rng = np.random.default_rng(0)
    for cloud in clouds():
        shuffled = cloud[rng.permutation(len(cloud))]
        a, b = bundle.predict_samples([torch.from_numpy(cloud), torch.from_numpy(shuffled)])
        assert a["label"] == b["label"]
        assert np.allclose(a["probabilities"], b["probabilities"], atol=1e-4)


def xyz_text(cloud: np.ndarray, header: bool = False) -> bytes:
    rows = [" ".join(repr(float(v)) for v in point) for point in cloud]
    return ("\n".join(([str(len(cloud))] if header else []) + rows) + "\n").encode()


def off_file(cloud: np.ndarray) -> bytes:
    rows = [" ".join(repr(float(v)) for v in point) for point in cloud]
    return ("OFF\n# a comment\n" + f"{len(cloud)} 1 0\n" + "\n".join(rows) + "\n3 0 1 2\n").encode()


def ply_file(cloud: np.ndarray, fmt: str, extra: bool = False) -> bytes:
    """A PLY of `cloud`'s vertices (with a colour after them when `extra`) and one face."""
    props = ["property float x", "property float y", "property float z"]
    if extra:
        props.append("property uchar red")
    header = "\n".join(
        ["ply", f"format {fmt} 1.0", f"element vertex {len(cloud)}", *props,
         "element face 1", "property list uchar int vertex_indices", "end_header"]
    ) + "\n"  # fmt: skip
    if fmt == "ascii":
        rows = [" ".join(repr(float(v)) for v in p) + (" 200" if extra else "") for p in cloud]
        return (header + "\n".join(rows) + "\n3 0 1 2\n").encode()
    order = "<" if fmt == "binary_little_endian" else ">"
    fields = [("x", order + "f4"), ("y", order + "f4"), ("z", order + "f4")]
    if extra:
        fields.append(("red", "u1"))
    records = np.zeros(len(cloud), dtype=fields)
    for i, axis in enumerate("xyz"):
        records[axis] = cloud[:, i]
    return header.encode() + records.tobytes() + bytes([3]) + np.array([0, 1, 2], order + "i4").tobytes()


def test_every_point_file_format_gives_the_answer_of_the_array(bundle_dir: Path) -> None:
    bundle = load_bundle(bundle_dir)
    group = clouds(3)
    expected = bundle.predict_samples([torch.from_numpy(c) for c in group])
    array = io.BytesIO()
    np.save(array, group)  # (3, 150, 3): several clouds in one file
    assert bundle.predict_samples(bundle.decode_file("three.npy", array.getvalue())) == expected
    one = group[1]
    files = {
        "one.npy": None,
        "one.xyz": xyz_text(one),
        "one.pts": xyz_text(one, header=True),
        "one.off": off_file(one),
        "ascii.ply": ply_file(one, "ascii", extra=True),
        "little.ply": ply_file(one, "binary_little_endian"),
        "big.ply": ply_file(one, "binary_big_endian", extra=True),
    }
    single = io.BytesIO()
    np.save(single, one.astype(np.float64))
    files["one.npy"] = single.getvalue()
    for name, data in files.items():
        samples = bundle.decode_file(name, data)
        assert [tuple(s.shape) for s in samples] == [(150, 3)], name
        assert torch.equal(samples[0], torch.from_numpy(one)), name
        (answer,) = bundle.predict_samples(samples)
        assert same(answer, expected[1]), name


def same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """One answer as another, up to the float noise of a batch of another size."""
    return a["label"] == b["label"] and np.allclose(a["probabilities"], b["probabilities"], atol=1e-5)


def refused(bundle_dir: Path, name: str, data: bytes) -> str:
    with pytest.raises(DatasetError) as caught:
        load_bundle(bundle_dir).decode_file(name, data)
    message = caught.value.message
    assert message.startswith(name), message
    return message


def test_hostile_point_files_are_refused_naming_the_file(bundle_dir: Path) -> None:
    huge = b"ply\nformat binary_little_endian 1.0\nelement vertex 1000000000\n"
    huge += b"property float x\nproperty float y\nproperty float z\nend_header\n" + bytes(120)
    assert "1,000,000,000 vertex entries is over the limit" in refused(bundle_dir, "huge.ply", huge)
    short = ply_file(clouds(1)[0], "binary_little_endian")[:-400]
    assert "shorter than its header says" in refused(bundle_dir, "short.ply", short)
    cut = off_file(clouds(1)[0]).splitlines()[:40]
    assert "truncated" in refused(bundle_dir, "cut.off", b"\n".join(cut))
    pickled = io.BytesIO()
    np.save(pickled, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    assert "pickled" in refused(bundle_dir, "evil.npy", pickled.getvalue())
    assert "not a point cloud file" in refused(bundle_dir, "notes.doc", b"1 2 3")
    assert "is not a row of numbers" in refused(bundle_dir, "bad.xyz", b"1 2 3\n4 five 6\n")
    assert "2 numbers per point, but the model takes 3" in refused(
        bundle_dir, "flat.npy", _npy(np.zeros((10, 2), np.float32))
    )
    assert pickle.dumps(0)  # nothing above was unpickled: np.load ran with allow_pickle=False


def _npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


def test_onnx_export_matches_pytorch(bundle_dir: Path) -> None:
    import onnxruntime as ort  # type: ignore[import-untyped]

    from dragdl.engine.bundle import export_bundle, read_manifest

    path = export_bundle(bundle_dir, "onnx")
    info = read_manifest(bundle_dir).exports["onnx"]
    assert info.input_name == "points" and info.input_shape == ["batch", 64, 3]
    assert info.max_abs_diff < 1e-4
    bundle = load_bundle(bundle_dir)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    x = torch.randn(5, 64, 3, generator=torch.Generator().manual_seed(2))
    (out,) = session.run(["logits"], {"points": x.numpy()})
    assert np.allclose(out, bundle.logits(x).numpy(), atol=1e-4)
