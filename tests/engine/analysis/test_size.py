"""The parameter cap: a graph asking for billions of parameters is refused by validation, and
whatever only reads a network (the code generator) builds it on the meta device, allocating
nothing, so neither can exhaust the server's memory."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from dragdl.engine.analysis import size
from dragdl.engine.analysis.validate import validate_graph
from dragdl.engine.compile.codegen import generate_script
from dragdl.engine.data.base import DataContext
from dragdl.engine.graph.errors import GraphInvalid

EXAMPLES = Path(__file__).resolve().parents[3] / "src" / "dragdl" / "examples"


def huge_mlp(width: int = 65536) -> dict[str, Any]:
    """The breast-cancer MLP with a `width`-wide hidden Linear and a second one as wide:
    65536 makes ~4.3 billion parameters (17 GB of float32)."""
    graph: dict[str, Any] = json.loads((EXAMPLES / "mlp_breast_cancer.json").read_text())
    next(n for n in graph["nodes"] if n["id"] == "hidden")["params"]["out_features"] = width
    hidden2 = {"id": "hidden2", "type": "layer.Linear", "params": {"out_features": width}}
    graph["nodes"].append({**hidden2, "position": {"x": 0, "y": 0}})
    graph["edges"] = [e for e in graph["edges"] if e["source"] != "dropout"] + [
        {"source": "dropout", "target": "hidden2"},
        {"source": "hidden2", "target": "out"},
    ]
    return graph


def ctx(tmp_path: Path) -> DataContext:
    return DataContext(data_dir=tmp_path, allow_download=False)


def test_validation_refuses_a_network_over_the_cap_on_its_largest_layer(tmp_path: Path) -> None:
    result = validate_graph(huge_mlp(), ctx(tmp_path))
    assert not result.ok
    (error,) = [e for e in result.errors if e.code == "model_too_large"]
    total = 30 * 65536 + 65536 + 65536 * 65536 + 65536 + 65536 * 2 + 2
    assert error.node_id == "hidden2"
    assert error.details["total"] == total
    assert f"{total:,}" in error.message and f"{size.MAX_PARAMETERS:,}" in error.message
    assert "4,295,032,832" in error.message and "(99.9%)" in error.message


def test_a_network_under_the_cap_validates(tmp_path: Path) -> None:
    assert validate_graph(huge_mlp(width=2048), ctx(tmp_path)).ok  # 4.3 million parameters


def test_the_cap_is_read_when_validating(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(size, "MAX_PARAMETERS", 1000)
    result = validate_graph(huge_mlp(width=64), ctx(tmp_path))
    assert [e.code for e in result.errors] == ["model_too_large"]
    assert result.errors[0].node_id == "hidden2"  # 64 x 64 + 64: the most of the three Linears


def test_the_code_generator_refuses_it_before_building_anything(tmp_path: Path) -> None:
    with pytest.raises(GraphInvalid) as refused:
        generate_script(huge_mlp(), ctx(tmp_path))
    assert [e.code for e in refused.value.errors] == ["model_too_large"]


def run_measured(body: str) -> dict[str, Any]:
    """Run `body` in a fresh interpreter after a warm-up (imports, the dataset read once), under an
    address-space cap 2 GB above the warm process so a regression fails instead of swapping;
    returns its JSON answer with `grown_mb`, the peak RSS growth during `body`."""
    script = textwrap.dedent(
        """
        import json, resource, sys
        from pathlib import Path
        sys.path.insert(0, {tests!r})
        from test_size import huge_mlp
        from dragdl.engine.analysis import size
        from dragdl.engine.analysis.validate import validate_graph
        from dragdl.engine.compile.codegen import generate_script
        from dragdl.engine.data.base import DataContext
        from dragdl.engine.graph.errors import GraphInvalid
        ctx = DataContext(data_dir=Path({data!r}), allow_download=False)
        generate_script(huge_mlp(width=8), ctx)  # warm-up
        pages = int(open("/proc/self/statm").read().split()[0])
        limit = pages * resource.getpagesize() + (2 << 30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        answer = {{}}
        """
    ).format(tests=str(Path(__file__).parent), data=str(Path(__file__).parent))
    script += textwrap.dedent(body)
    script += "answer['grown_mb'] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024\n"
    script += "print(json.dumps(answer))\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


def test_refusing_it_allocates_nothing() -> None:
    answer = run_measured(
        """
        result = validate_graph(huge_mlp(), ctx)
        answer["codes"] = [e.code for e in result.errors]
        """
    )
    assert answer["codes"] == ["model_too_large"]
    assert answer["grown_mb"] < 200


def test_the_code_generator_builds_the_network_on_the_meta_device() -> None:
    # With the cap lifted, the generator compiles the table graph as the engine does: its network
    # (17 GB of weights on the CPU) must be built on meta, allocating nothing.
    answer = run_measured(
        """
        size.MAX_PARAMETERS = 10**12
        script = generate_script(huge_mlp(), ctx)
        answer["linear"] = "nn.Linear(65536, 65536)" in script
        """
    )
    assert answer["linear"] is True
    assert answer["grown_mb"] < 200


TABLE_TEMPLATES = ["logistic_regression_iris", "mlp_breast_cancer", "linear_regression_diabetes"]


@pytest.mark.parametrize("name", TABLE_TEMPLATES)
def test_a_table_script_is_the_same_as_from_a_network_built_in_memory(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dragdl.engine.compile import plan

    graph = json.loads((EXAMPLES / f"{name}.json").read_text())
    on_meta = generate_script(graph, ctx(tmp_path))
    compile_graph = plan.compile_graph

    def in_memory(*args: Any, **kwargs: Any) -> plan.Plan:
        built = compile_graph(*args, **{**kwargs, "inspect_only": False})
        assert next(built.model.parameters()).device.type == "cpu"
        return built

    monkeypatch.setattr(plan, "compile_graph", in_memory)
    assert generate_script(graph, ctx(tmp_path)) == on_meta
