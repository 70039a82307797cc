"""deploy/k8s: every document valid against its Kubernetes (or KubeRay) schema, and wired together."""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
from typing import Any

import pytest
import yaml

from dragdl.server.routes.health import router as health_router

from .manifests import K8S_DIR, find, k8s_documents, k8s_errors, kustomization, pod_specs

DOCUMENTS = k8s_documents()
KINDS = {(document["kind"], document["metadata"]["name"]) for document in DOCUMENTS}


def _config() -> dict[str, str]:
    data: dict[str, str] = find(DOCUMENTS, "ConfigMap", "dragdl-config")["data"]
    return data


def _dragdl_pods() -> list[tuple[str, dict[str, Any]]]:
    """The pods running the DragDL image: the API and every Ray node."""
    api = find(DOCUMENTS, "Deployment", "dragdl-api")
    ray = find(DOCUMENTS, "RayCluster", "dragdl")
    return [*pod_specs(api), *pod_specs(ray)]


def test_the_kustomization_lists_the_expected_objects() -> None:
    assert {
        ("Namespace", "dragdl"),
        ("ConfigMap", "dragdl-config"),
        ("PersistentVolumeClaim", "dragdl-data"),
        ("Service", "dragdl-postgres"),
        ("StatefulSet", "dragdl-postgres"),
        ("RayCluster", "dragdl"),
        ("Deployment", "dragdl-api"),
        ("Service", "dragdl-api"),
    } <= KINDS


@pytest.mark.parametrize(
    "document", DOCUMENTS, ids=[f"{d['kind']}/{d['metadata']['name']}" for d in DOCUMENTS]
)
def test_document_matches_its_schema(document: dict[str, Any]) -> None:
    assert k8s_errors(document) == []


def test_schema_check_refuses_misspelt_fields() -> None:
    """The checks above can fail: strict schemas refuse fields the API server would drop."""
    api = copy.deepcopy(find(DOCUMENTS, "Deployment", "dragdl-api"))
    container = api["spec"]["template"]["spec"]["containers"][0]
    container["volumeMount"] = container.pop("volumeMounts")
    assert any("volumeMount" in error for error in k8s_errors(api))

    ray = copy.deepcopy(find(DOCUMENTS, "RayCluster", "dragdl"))
    ray["spec"]["workerGroupSpec"] = ray["spec"].pop("workerGroupSpecs")
    assert any("workerGroupSpec" in error for error in k8s_errors(ray))

    ray = copy.deepcopy(find(DOCUMENTS, "RayCluster", "dragdl"))
    ray["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["image"] = 7
    assert any("image" in error for error in k8s_errors(ray))


def test_kustomize_builds_the_same_objects() -> None:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed here (the schema checks above ran)")
    built = subprocess.run(
        ["kubectl", "kustomize", str(K8S_DIR)], capture_output=True, text=True, check=True
    ).stdout
    documents = [document for document in yaml.safe_load_all(built) if document]
    assert {(d["kind"], d["metadata"]["name"]) for d in documents} == KINDS
    namespace = kustomization()["namespace"]
    for document in documents:
        assert k8s_errors(document) == [], document["kind"]
        if document["kind"] != "Namespace":
            assert document["metadata"]["namespace"] == namespace
    images = [
        container["image"]
        for document in documents
        for _, pod in pod_specs(document)
        for container in pod["containers"]
    ]
    overrides = {f"{image['newName']}:{image['newTag']}" for image in kustomization()["images"]}
    assert overrides <= set(images), "kustomization.yaml's images replace the DragDL images"


def test_images_are_pinned_by_tag() -> None:
    for document in DOCUMENTS:
        for where, pod in pod_specs(document):
            for container in pod["containers"]:
                name, _, tag = container["image"].rpartition(":")
                assert name and tag and tag != "latest", f"{where}: {container['image']}"
    for image in kustomization()["images"]:
        assert image["newTag"] and image["newTag"] != "latest"


def test_the_database_password_comes_from_a_secret() -> None:
    assert not any(kind == "Secret" for kind, _ in KINDS), "the operator creates the Secret"
    postgres = find(DOCUMENTS, "StatefulSet", "dragdl-postgres")["spec"]["template"]["spec"]
    api = find(DOCUMENTS, "Deployment", "dragdl-api")["spec"]["template"]["spec"]
    references = []
    for pod in (postgres, api):
        env = {variable["name"]: variable for variable in pod["containers"][0]["env"]}
        references.append(env["POSTGRES_PASSWORD"]["valueFrom"]["secretKeyRef"])
        for variable in env.values():
            if re.search("PASSWORD|SECRET|TOKEN", variable["name"]):
                assert "value" not in variable, variable["name"]
    assert references[0] == references[1] == {"name": "dragdl-postgres", "key": "password"}
    for key in _config():
        assert not re.search("PASSWORD|SECRET|TOKEN", key), key


def test_the_api_reaches_postgres_through_its_service() -> None:
    api = find(DOCUMENTS, "Deployment", "dragdl-api")["spec"]["template"]["spec"]["containers"][0]
    names = [variable["name"] for variable in api["env"]]
    url = next(variable["value"] for variable in api["env"] if variable["name"] == "DRAGDL_DATABASE_URL")
    # Kubernetes expands $(POSTGRES_PASSWORD) only from variables defined before this one.
    assert names.index("POSTGRES_PASSWORD") < names.index("DRAGDL_DATABASE_URL")
    match = re.fullmatch(r"postgresql\+psycopg://(\w+):\$\(POSTGRES_PASSWORD\)@([\w-]+):(\d+)/(\w+)", url)
    assert match, url
    user, host, port, database = match.groups()
    service = find(DOCUMENTS, "Service", host)
    assert int(port) in {p["port"] for p in service["spec"]["ports"]}
    postgres = find(DOCUMENTS, "StatefulSet", "dragdl-postgres")
    assert service["spec"]["selector"].items() <= postgres["spec"]["template"]["metadata"]["labels"].items()
    env = {v["name"]: v.get("value") for v in postgres["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert (user, database) == (env["POSTGRES_USER"], env["POSTGRES_DB"])


def test_the_api_joins_the_ray_head_service() -> None:
    ray = find(DOCUMENTS, "RayCluster", "dragdl")
    host, _, port = _config()["DRAGDL_RAY_ADDRESS"].partition(":")
    assert host == f"{ray['metadata']['name']}-head-svc", "KubeRay's name for the head's Service"
    head = ray["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    assert int(port) in {p["containerPort"] for p in head["ports"] if p["name"] == "gcs"}
    assert ray["spec"]["headGroupSpec"]["rayStartParams"]["include-dashboard"] == "false"


def test_every_dragdl_pod_mounts_the_shared_data_volume_at_the_data_dir() -> None:
    data_dir = _config()["DRAGDL_DATA_DIR"]
    claim = find(DOCUMENTS, "PersistentVolumeClaim", "dragdl-data")
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"], "every Ray node writes task artifacts"
    pods = _dragdl_pods()
    assert len(pods) >= 3
    for where, pod in pods:
        claims = {
            volume["name"]: volume["persistentVolumeClaim"]["claimName"]
            for volume in pod["volumes"]
            if "persistentVolumeClaim" in volume
        }
        (container,) = pod["containers"]
        mounts = {mount["mountPath"]: mount["name"] for mount in container["volumeMounts"]}
        assert claims.get(mounts.get(data_dir, "")) == "dragdl-data", where
        assert {"configMapRef": {"name": "dragdl-config"}} in container["envFrom"], where
        assert pod["securityContext"]["runAsNonRoot"] is True, where
        assert pod["securityContext"]["runAsUser"] == pods[0][1]["securityContext"]["runAsUser"], where


def test_nothing_is_exposed_outside_the_cluster() -> None:
    for document in DOCUMENTS:
        if document["kind"] == "Service":
            assert document["spec"].get("type", "ClusterIP") == "ClusterIP", document["metadata"]["name"]
            assert 6379 not in {p["port"] for p in document["spec"]["ports"]}
        for where, pod in pod_specs(document):
            assert not pod.get("hostNetwork"), where
            for container in pod["containers"]:
                assert all("hostPort" not in port for port in container.get("ports", [])), where
    ray = find(DOCUMENTS, "RayCluster", "dragdl")
    assert ray["spec"]["headGroupSpec"]["serviceType"] == "ClusterIP"


def test_the_api_probes_ask_the_health_route() -> None:
    health = next(route.path for route in health_router.routes if route.name == "health")  # type: ignore[attr-defined]
    api = find(DOCUMENTS, "Deployment", "dragdl-api")["spec"]["template"]["spec"]["containers"][0]
    port = api["ports"][0]
    assert str(port["containerPort"]) == _config()["DRAGDL_PORT"]
    for probe in ("readinessProbe", "livenessProbe"):
        assert api[probe]["httpGet"] == {"path": health, "port": port["name"]}
    assert _config()["DRAGDL_HOST"] == "0.0.0.0"


def _all_pods() -> list[tuple[str, dict[str, Any]]]:
    return [pod for document in DOCUMENTS for pod in pod_specs(document)]


@pytest.mark.parametrize("name,pod", _all_pods(), ids=[name for name, _ in _all_pods()])
def test_every_pod_meets_the_restricted_pod_security_standard(name: str, pod: dict[str, Any]) -> None:
    level = pod.get("securityContext") or {}
    for container in [*pod.get("initContainers", []), *pod["containers"]]:
        own = container.get("securityContext") or {}
        where = f"{name}/{container['name']}"
        assert own.get("allowPrivilegeEscalation") is False, where
        assert own.get("capabilities", {}).get("drop") == ["ALL"], where
        assert not own.get("capabilities", {}).get("add"), where
        assert own.get("runAsNonRoot", level.get("runAsNonRoot")) is True, where
        seccomp = own.get("seccompProfile", level.get("seccompProfile")) or {}
        assert seccomp.get("type") in ("RuntimeDefault", "Localhost"), where
        assert not own.get("privileged"), where


def test_ray_authenticates_with_a_token_and_serves_no_ray_client() -> None:
    assert _config()["RAY_AUTH_MODE"] == "token"
    assert _config()["RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO"] == "1"
    for name, pod in _dragdl_pods():
        for container in pod["containers"]:
            env = {item["name"]: item for item in container.get("env", [])}
            secret = env["RAY_AUTH_TOKEN"]["valueFrom"]["secretKeyRef"]
            assert secret == {"name": "dragdl-ray-token", "key": "token"}, name
    ray = find(DOCUMENTS, "RayCluster", "dragdl")
    assert ray["spec"]["headGroupSpec"]["rayStartParams"]["ray-client-server-port"] == "0"
    head = ray["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    assert 10001 not in {port["containerPort"] for port in head.get("ports", [])}


def test_the_ray_nodes_hold_no_database_secret() -> None:
    ray = find(DOCUMENTS, "RayCluster", "dragdl")
    for name, pod in pod_specs(ray):
        for container in pod["containers"]:
            names = {item["name"] for item in container.get("env", [])}
            assert not names & {"POSTGRES_PASSWORD", "DRAGDL_DATABASE_URL"}, name
    assert not {"POSTGRES_PASSWORD", "DRAGDL_DATABASE_URL"} & set(_config())
    # The API is a Ray node too: its `ray start` runs without the database's variables.
    serve = (K8S_DIR.parent / "docker" / "dragdl-serve").read_text()
    assert "env -u DRAGDL_DATABASE_URL -u POSTGRES_PASSWORD ray start" in serve
