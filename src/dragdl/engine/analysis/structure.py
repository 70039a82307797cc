"""Validation stages 1-5: schema, node types, params, edges and port types, cycles and reachability.

Each stage appends `GraphError`s to a shared list; stages that need a sound structure are skipped
when an earlier stage broke it, but every error that can be found is reported.
"""

from __future__ import annotations

import difflib
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from dragdl.engine.graph.errors import GraphError
from dragdl.engine.graph.spec import Graph, Node
from dragdl.engine.nodes.base import TrainNode
from dragdl.engine.nodes.registry import NodeType, all_node_types, get_node_type
from dragdl.engine.tasks.base import TaskKind


@dataclass
class NodeInfo:
    node: Node
    kind: NodeType[Any]
    params: BaseModel | None
    """None when the params did not validate."""

    @property
    def label(self) -> str:
        return f"{self.node.id} ({self.kind.title})"


@dataclass
class Structure:
    graph: Graph
    nodes: dict[str, NodeInfo] = field(default_factory=dict)
    inputs: dict[str, list[str]] = field(default_factory=dict)
    """Source node ids per node, in edge order (the input order of Add/Concat)."""
    outputs: dict[str, list[str]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    """Topological order; empty when the graph has a cycle."""
    dataset_id: str | None = None
    train_id: str | None = None
    pipeline: list[str] = field(default_factory=list)
    """Data operator ids from the dataset onwards, in order."""

    @property
    def network_input(self) -> str | None:
        """The node whose images enter the network: the last operator, or the dataset itself."""
        return self.pipeline[-1] if self.pipeline else self.dataset_id

    @property
    def task(self) -> TaskKind | None:
        """The task kind of the train node (None while the graph has none)."""
        if self.train_id is None:
            return None
        kind = self.nodes[self.train_id].kind
        return kind.task if isinstance(kind, TrainNode) else None

    def of_category(self, category: str) -> list[str]:
        return [nid for nid, info in self.nodes.items() if info.kind.category == category]


def parse_graph(raw: dict[str, Any] | Graph, errors: list[GraphError]) -> Graph | None:
    """Stage 1: the JSON must match the graph schema."""
    if isinstance(raw, Graph):
        return raw
    try:
        return Graph.model_validate(raw)
    except ValidationError as exc:
        for item in exc.errors():
            loc = [str(part) for part in item["loc"]]
            node_id = _node_id_at(raw, item["loc"])
            errors.append(
                GraphError(
                    code="schema_invalid",
                    message=f"{'.'.join(loc) or 'graph'}: {item['msg']}",
                    node_id=node_id,
                    field=".".join(loc) or None,
                    details={"type": item["type"]},
                )
            )
        return None


def _node_id_at(raw: dict[str, Any], loc: tuple[Any, ...]) -> str | None:
    if len(loc) >= 2 and loc[0] == "nodes" and isinstance(loc[1], int):
        nodes = raw.get("nodes")
        if isinstance(nodes, list) and loc[1] < len(nodes) and isinstance(nodes[loc[1]], dict):
            node_id = nodes[loc[1]].get("id")
            return node_id if isinstance(node_id, str) else None
    return None


def check_nodes(graph: Graph, errors: list[GraphError]) -> Structure:
    """Stages 2 and 3: ids unique, node types known, params valid."""
    structure = Structure(graph=graph)
    known = [node.type for node in all_node_types()]
    for node in graph.nodes:
        if node.id in structure.nodes or any(
            e.node_id == node.id and e.code == "duplicate_node_id" for e in errors
        ):
            errors.append(
                GraphError(
                    code="duplicate_node_id", message=f"node id {node.id!r} is used twice", node_id=node.id
                )
            )
            continue
        kind = get_node_type(node.type)
        if kind is None:
            close = difflib.get_close_matches(node.type, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            errors.append(
                GraphError(
                    code="unknown_node_type",
                    message=f"unknown node type {node.type!r}{hint}",
                    node_id=node.id,
                    field="type",
                )
            )
            continue
        params, param_errors = kind.parse_params(node.params, node.id)
        errors.extend(param_errors)
        structure.nodes[node.id] = NodeInfo(node=node, kind=kind, params=params)
        structure.inputs[node.id] = []
        structure.outputs[node.id] = []
    return structure


def check_edges(structure: Structure, errors: list[GraphError], unknown_ids: set[str]) -> None:
    """Stage 4: edges join existing nodes through existing ports of matching types."""
    seen: set[tuple[str, str]] = set()
    for edge in structure.graph.edges:
        source = structure.nodes.get(edge.source)
        target = structure.nodes.get(edge.target)
        for end, info in (("source", source), ("target", target)):
            node_id = getattr(edge, end)
            if info is None and node_id not in unknown_ids:
                errors.append(
                    GraphError(
                        code="edge_unknown_node",
                        message=f"an edge refers to node {node_id!r}, which is not in the graph",
                        node_id=None,
                        details={"edge": edge.model_dump(by_alias=True)},
                    )
                )
        if source is None or target is None:
            continue
        if edge.source == edge.target:
            errors.append(
                GraphError(
                    code="cycle", message=f"{source.label} is connected to itself", node_id=edge.source
                )
            )
            continue
        out_port = source.kind.output_port(edge.source_handle)
        in_port = target.kind.input_port(edge.target_handle)
        if out_port is None or in_port is None:
            side, info, handle = (
                ("output", source, edge.source_handle)
                if out_port is None
                else ("input", target, edge.target_handle)
            )
            errors.append(
                GraphError(
                    code="unknown_port",
                    message=f"{info.label} has no {side} port {handle!r}"
                    if handle
                    else f"{info.label} has no {side} port",
                    node_id=info.node.id,
                )
            )
            continue
        produced = out_port.types[0]
        if not in_port.accepts(produced):
            errors.append(
                GraphError(
                    code="port_type_mismatch",
                    message=f"{source.label} outputs {produced} but {target.label} accepts "
                    f"{' or '.join(in_port.accepted)}",
                    node_id=edge.target,
                    details={"source": edge.source, "produced": produced, "accepted": list(in_port.accepted)},
                )
            )
            continue
        if (edge.source, edge.target) in seen:
            errors.append(
                GraphError(
                    code="duplicate_edge",
                    message=f"{source.label} is connected to {target.label} twice",
                    node_id=edge.target,
                )
            )
            continue
        seen.add((edge.source, edge.target))
        if structure.inputs[edge.target] and not in_port.multiple:
            errors.append(
                GraphError(
                    code="too_many_inputs",
                    message=f"{target.label} takes one input but has several "
                    f"(from {structure.inputs[edge.target][0]} and {edge.source})",
                    node_id=edge.target,
                )
            )
            continue
        structure.inputs[edge.target].append(edge.source)
        structure.outputs[edge.source].append(edge.target)


def check_topology(structure: Structure, errors: list[GraphError]) -> None:
    """Stage 5: no cycles, one dataset, one train node, every node on the path between them."""
    _order_or_cycle(structure, errors)
    datasets = structure.of_category("dataset")
    trains = structure.of_category("train")
    for category, found, code in (("dataset", datasets, "dataset"), ("train", trains, "train")):
        if not found:
            errors.append(
                GraphError(
                    code=f"missing_{code}",
                    message=f"the graph needs a {category} node"
                    + (" (where the images come from)" if category == "dataset" else " (how to train)"),
                )
            )
        for extra in found[1:]:
            errors.append(
                GraphError(
                    code=f"multiple_{code}",
                    message=f"only one {category} node is allowed; {found[0]} is already one",
                    node_id=extra,
                )
            )
    structure.dataset_id = datasets[0] if datasets else None
    structure.train_id = trains[0] if trains else None

    for node_id, info in structure.nodes.items():
        if info.kind.inputs and not structure.inputs[node_id]:
            errors.append(
                GraphError(
                    code="missing_input", message=f"{info.label} has no input connected", node_id=node_id
                )
            )
    if not structure.order:
        return
    from_dataset = _reachable(structure.dataset_id, structure.outputs)
    to_train = _reachable(structure.train_id, structure.inputs)
    for node_id, info in structure.nodes.items():
        if info.kind.category in ("dataset", "train") or not structure.inputs[node_id]:
            continue
        if structure.dataset_id is not None and node_id not in from_dataset:
            errors.append(
                GraphError(
                    code="unreachable",
                    message=f"{info.label} does not receive data from the dataset node",
                    node_id=node_id,
                )
            )
        elif structure.train_id is not None and node_id not in to_train:
            errors.append(
                GraphError(
                    code="dangling_node",
                    message=f"{info.label} does not lead to the train node; connect or delete it",
                    node_id=node_id,
                )
            )
    _trace_pipeline(structure, errors)


def _order_or_cycle(structure: Structure, errors: list[GraphError]) -> None:
    indegree = {nid: len(set(sources)) for nid, sources in structure.inputs.items()}
    queue = deque(nid for nid, degree in indegree.items() if degree == 0)
    order: list[str] = []
    while queue:
        nid = queue.popleft()
        order.append(nid)
        for target in dict.fromkeys(structure.outputs[nid]):
            indegree[target] -= 1
            if indegree[target] == 0:
                queue.append(target)
    if len(order) == len(structure.nodes):
        structure.order = order
        return
    stuck = _on_cycles({nid for nid in structure.nodes if nid not in order}, structure)
    for nid in stuck:
        errors.append(
            GraphError(
                code="cycle",
                message=f"{structure.nodes[nid].label} is part of a cycle ({' -> '.join(stuck)}); "
                "data must flow one way from the dataset to the train node",
                node_id=nid,
                details={"cycle": stuck},
            )
        )


def _on_cycles(remaining: set[str], structure: Structure) -> list[str]:
    """Trim nodes that merely sit downstream of a cycle, keeping the cycles themselves."""
    changed = True
    while changed:
        changed = False
        for nid in list(remaining):
            if not any(target in remaining for target in structure.outputs[nid]):
                remaining.discard(nid)
                changed = True
    return [nid for nid in structure.nodes if nid in remaining]


def _reachable(start: str | None, links: dict[str, list[str]]) -> set[str]:
    if start is None:
        return set()
    seen = {start}
    stack = [start]
    while stack:
        for nxt in links[stack.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def _trace_pipeline(structure: Structure, errors: list[GraphError]) -> None:
    """The data operators must form one chain from the dataset to the network."""
    current = structure.dataset_id
    while current is not None:
        ops = [nid for nid in structure.outputs[current] if structure.nodes[nid].kind.category == "op"]
        others = [nid for nid in structure.outputs[current] if structure.nodes[nid].kind.category != "op"]
        if len(ops) > 1 or (ops and others):
            errors.append(
                GraphError(
                    code="pipeline_branch",
                    message=f"the data pipeline splits after {structure.nodes[current].label} "
                    f"(into {', '.join(ops + others)}); data operators must form a single chain "
                    "from the dataset to the network",
                    node_id=current,
                )
            )
            return
        current = ops[0] if ops else None
        if current is not None:
            structure.pipeline.append(current)
