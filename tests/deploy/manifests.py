"""Offline readers and validators of the deployment files (no Docker daemon, no cluster).

- Compose: `${VAR}` interpolation as Docker Compose does it, then the Compose Specification's JSON
  Schema (shipped in the check-jsonschema package, vendor/compose-spec.json).
- Kubernetes: the documents of deploy/k8s/kustomization.yaml, each checked against the strict schema
  of its kind from the kubernetes-validate package; the KubeRay RayCluster against
  schemas/raycluster-v1.schema.json, whose pod templates refer to the same Kubernetes definitions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import yaml
from referencing import Registry, Resource

REPO = Path(__file__).resolve().parents[2]
COMPOSE_FILE = REPO / "docker-compose.yml"
COMPOSE_GPU_FILE = REPO / "docker-compose.gpu.yml"
K8S_DIR = REPO / "deploy" / "k8s"
DOCKERFILE = REPO / "Dockerfile"
SERVE_SCRIPT = REPO / "deploy" / "docker" / "dragdl-serve"
RAYCLUSTER_SCHEMA = Path(__file__).with_name("schemas") / "raycluster-v1.schema.json"

K8S_VERSION = "1.30"
"""The oldest Kubernetes the manifests are written for (the fields they use exist since then)."""

# ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error}, ${VAR?error}, and $$ for a literal dollar.
_VARIABLE = re.compile(r"\$(?:\$|\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\})")


class MissingVariable(ValueError):
    pass


def interpolate(value: Any, env: Mapping[str, str]) -> Any:
    """`value` with every `${...}` in its strings replaced from `env`, the way Compose does."""
    if isinstance(value, str):
        return _VARIABLE.sub(lambda match: _substitute(match, env), value)
    if isinstance(value, list):
        return [interpolate(item, env) for item in value]
    if isinstance(value, dict):
        return {key: interpolate(item, env) for key, item in value.items()}
    return value


def _substitute(match: re.Match[str], env: Mapping[str, str]) -> str:
    name, op, arg = match["name"], match["op"], match["arg"]
    if name is None:
        return "$"
    present = name in env and (env[name] != "" or not (op or "").startswith(":"))
    if present:
        return env[name]
    if op in (":-", "-"):
        return arg or ""
    if op in (":?", "?"):
        raise MissingVariable(f"{name}: {arg}")
    return ""


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def load_compose(env: Mapping[str, str], path: Path = COMPOSE_FILE) -> dict[str, Any]:
    document: dict[str, Any] = interpolate(load_yaml(path), env)
    return document


def compose_schema() -> dict[str, Any]:
    vendored = resources.files("check_jsonschema.builtin_schemas.vendor") / "compose-spec.json"
    schema: dict[str, Any] = json.loads(vendored.read_text(encoding="utf-8"))
    return schema


def compose_errors(document: Mapping[str, Any]) -> list[str]:
    validator = jsonschema.Draft202012Validator(compose_schema())
    return [_describe(error) for error in validator.iter_errors(document)]


def kustomization() -> dict[str, Any]:
    document: dict[str, Any] = load_yaml(K8S_DIR / "kustomization.yaml")
    return document


def k8s_documents() -> list[dict[str, Any]]:
    """Every document of the kustomization's resources, as written (before kustomize's changes)."""
    documents: list[dict[str, Any]] = []
    for name in kustomization()["resources"]:
        text = (K8S_DIR / name).read_text(encoding="utf-8")
        documents.extend(document for document in yaml.safe_load_all(text) if document)
    return documents


def find(documents: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    for document in documents:
        if document["kind"] == kind and document["metadata"]["name"] == name:
            return document
    raise AssertionError(f"no {kind} named {name} in deploy/k8s")


def _k8s_schema_dir() -> Any:
    return resources.files(kubernetes_validate) / "kubernetes-json-schema" / f"v{K8S_VERSION}.0-local-strict"


def k8s_errors(document: Mapping[str, Any]) -> list[str]:
    """The schema errors of one Kubernetes document: its kind's strict schema, or the RayCluster's."""
    if document.get("kind") == "RayCluster":
        definitions = json.loads((_k8s_schema_dir() / "_definitions.json").read_text(encoding="utf-8"))
        registry: Registry[Any] = Resource.from_contents(definitions) @ Registry()
        schema = json.loads(RAYCLUSTER_SCHEMA.read_text(encoding="utf-8"))
        validator = jsonschema.Draft202012Validator(schema, registry=registry)
        return [_describe(error) for error in validator.iter_errors(document)]
    try:
        kubernetes_validate.validate(dict(document), K8S_VERSION, strict=True)
    except kubernetes_validate.ValidationError as error:
        return [_describe(error)]
    except kubernetes_validate.SchemaNotFoundError as error:
        return [error.message]
    return []


def _describe(error: jsonschema.ValidationError) -> str:
    where = "/".join(str(part) for part in error.absolute_path) or "(top)"
    return f"{where}: {error.message}"


def pod_specs(document: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, pod spec) of every pod template in a Deployment, StatefulSet or RayCluster."""
    name = document["metadata"]["name"]
    if document["kind"] == "RayCluster":
        yield f"{name} head", document["spec"]["headGroupSpec"]["template"]["spec"]
        for group in document["spec"].get("workerGroupSpecs", []):
            yield f"{name} worker group {group['groupName']}", group["template"]["spec"]
    elif document["kind"] in ("Deployment", "StatefulSet"):
        yield name, document["spec"]["template"]["spec"]
