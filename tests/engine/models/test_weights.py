"""Weights resolution: explicit file -> local caches -> bounded download -> a helpful error."""

from __future__ import annotations

import hashlib
import http.server
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import timm
import torch
from safetensors.torch import save_file
from torchvision.models import resnet18

from dragdl.engine.models import WeightsInvalid, WeightsUnavailable, check_weights, create_features, weights
from dragdl.engine.models.families import get_family


def _random_resnet18_state() -> dict[str, torch.Tensor]:
    torch.manual_seed(1)
    return {key: value.contiguous() for key, value in resnet18(weights=None).state_dict().items()}


def test_missing_torchvision_weights_offline_raise_with_suggestion(tmp_path: Path) -> None:
    with pytest.raises(WeightsUnavailable) as info:
        create_features("torchvision", "resnet18", pretrained=True, allow_download=False)
    message = str(info.value)
    assert "torchvision resnet18" in message
    assert str(tmp_path / "torch" / "hub" / "checkpoints" / "resnet18-f37072fd.pth") in message
    assert "downloads are disabled" in message
    assert "pretrained: false" in message and "weights_path" in message


def test_downloads_follow_the_offline_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not weights.downloads_allowed()
    monkeypatch.delenv("DRAGDL_OFFLINE")
    assert weights.downloads_allowed()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert not weights.downloads_allowed()


def test_weights_file_given_by_path_loads(tmp_path: Path) -> None:
    state = _random_resnet18_state()
    path = tmp_path / "my-resnet18.safetensors"
    save_file(state, str(path))
    features = create_features("torchvision", "resnet18", pretrained=True, weights_path=str(path))
    assert torch.equal(features.state_dict()["layer4.1.conv2.weight"], state["layer4.1.conv2.weight"])
    assert torch.equal(features.state_dict()["bn1.running_var"], state["bn1.running_var"])


def test_relative_weights_path_starts_at_the_data_dir(tmp_path: Path, shared_data_dir: Path) -> None:
    state = _random_resnet18_state()
    del state["fc.weight"], state["fc.bias"]  # a features-only file loads too
    torch.save(state, tmp_path / "features-only.pt")
    check_weights("torchvision", "resnet18", weights_path="features-only.pt", data_dir=tmp_path)
    features = create_features("torchvision", "resnet18", weights_path="features-only.pt", data_dir=tmp_path)
    assert torch.equal(features.state_dict()["conv1.weight"], state["conv1.weight"])
    # A caller without a data dir gets the default one ($DRAGDL_DATA_DIR here), not the file above.
    with pytest.raises(WeightsUnavailable, match=re.escape(str(shared_data_dir / "features-only.pt"))):
        check_weights("torchvision", "resnet18", weights_path="features-only.pt")


def test_pickled_module_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "whole-model.pt"
    torch.save(resnet18(weights=None), path)
    with pytest.raises(WeightsInvalid, match="weights_only=True"):
        create_features("torchvision", "resnet18", weights_path=str(path))


def test_weights_for_another_architecture_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "resnet18.safetensors"
    save_file(_random_resnet18_state(), str(path))
    with pytest.raises(WeightsInvalid, match="do not fit torchvision resnet34"):
        create_features("torchvision", "resnet34", weights_path=str(path))


def test_torch_hub_cache_is_used(tmp_path: Path) -> None:
    state = _random_resnet18_state()
    cache = tmp_path / "torch" / "hub" / "checkpoints"
    cache.mkdir(parents=True)
    torch.save(state, cache / "resnet18-f37072fd.pth")
    check_weights("torchvision", "resnet18", allow_download=False)
    features = create_features("torchvision", "resnet18", pretrained=True, allow_download=False)
    assert torch.equal(features.state_dict()["layer1.0.conv1.weight"], state["layer1.0.conv1.weight"])


def test_hugging_face_cache_is_used_for_timm(tmp_path: Path) -> None:
    spec = get_family("timm").weights_spec("resnet18")
    assert spec.hf_repo is not None
    torch.manual_seed(2)
    state = timm.create_model("resnet18", pretrained=False).state_dict()
    # The layout huggingface_hub writes: refs/main names the snapshot holding the files.
    repo_dir = tmp_path / "hf" / "hub" / ("models--" + spec.hf_repo.replace("/", "--"))
    snapshot = repo_dir / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    (repo_dir / "refs").mkdir()
    (repo_dir / "refs" / "main").write_text("0123abcd")
    save_file(state, str(snapshot / "model.safetensors"))
    features = create_features("timm", "resnet18", pretrained=True, allow_download=False)
    assert torch.equal(features.state_dict()["layer2.0.conv1.weight"], state["layer2.0.conv1.weight"])
    assert features(torch.rand(1, 3, 64, 64)).shape == (1, 512)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_unreachable_host_fails_fast_when_downloads_are_allowed() -> None:
    spec = weights.WeightsSpec(backbone="test net", url=f"http://127.0.0.1:{_free_port()}/net-0123abcd.pth")
    with pytest.raises(WeightsUnavailable, match=re.escape("127.0.0.1 is unreachable")):
        weights.resolve(spec, allow_download=True)


def test_probe_gives_up_at_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    def stuck(*args: object, **kwargs: object) -> socket.socket:
        time.sleep(3)
        raise OSError("never answered")

    monkeypatch.setattr(socket, "create_connection", stuck)
    start = time.monotonic()
    assert not weights.reachable("https://blackhole.invalid/x", timeout=0.2)
    assert time.monotonic() - start < 2


@pytest.fixture
def file_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    root = tmp_path / "served"
    root.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(root), **kwargs)  # type: ignore[arg-type]

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", root
    server.shutdown()
    server.server_close()


def test_download_lands_in_the_torch_hub_cache(file_server: tuple[str, Path], tmp_path: Path) -> None:
    base, root = file_server
    payload = tmp_path / "payload.pt"
    torch.save(_random_resnet18_state(), payload)
    digest = hashlib.sha256(payload.read_bytes()).hexdigest()[:8]
    name = f"net-{digest}.pth"
    (root / name).write_bytes(payload.read_bytes())
    spec = weights.WeightsSpec(backbone="test net", url=f"{base}/{name}")
    path = weights.resolve(spec, allow_download=True)
    assert path == tmp_path / "torch" / "hub" / "checkpoints" / name
    assert "conv1.weight" in weights.load_state_dict_file(path)
    # Once cached, no network is needed.
    assert weights.resolve(spec, allow_download=False) == path


def test_corrupt_download_is_rejected_and_not_cached(file_server: tuple[str, Path], tmp_path: Path) -> None:
    base, root = file_server
    (root / "net-00000000.pth").write_bytes(b"not the published file")
    spec = weights.WeightsSpec(backbone="test net", url=f"{base}/net-00000000.pth")
    with pytest.raises(WeightsUnavailable, match="corrupt"):
        weights.resolve(spec, allow_download=True)
    assert not (tmp_path / "torch" / "hub" / "checkpoints" / "net-00000000.pth").exists()
