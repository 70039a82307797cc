"""docker-compose.yml: valid against the Compose Specification, and wired the way DragDL needs."""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
from urllib.parse import urlsplit

import pytest

from .manifests import (
    COMPOSE_FILE,
    COMPOSE_GPU_FILE,
    DOCKERFILE,
    REPO,
    MissingVariable,
    compose_errors,
    load_compose,
    load_yaml,
)

PASSWORD = "s3cretFromTheEnvironment"
TOKEN = "0123456789abcdef0123456789abcdef"
ENV = {"POSTGRES_PASSWORD": PASSWORD, "RAY_AUTH_TOKEN": TOKEN}
_URL_PASSWORD = re.compile(r"://[^:/@]+:(\$\{[^}]*\}|[^@]*)@")
"""The password of a URL `scheme://user:password@host`, a `${...}` reference included whole."""
DRAGDL_SERVICES = ("api", "ray-head", "ray-worker")
"""The services that run the DragDL image."""


def _image_data_dir() -> str:
    match = re.search(r"^\s*DRAGDL_DATA_DIR=(\S+)", DOCKERFILE.read_text(encoding="utf-8"), re.MULTILINE)
    assert match, "the Dockerfile sets DRAGDL_DATA_DIR"
    return match[1].rstrip("\\").strip()


def test_compose_file_matches_the_compose_specification() -> None:
    errors = compose_errors(load_compose(ENV))
    assert errors == []


def test_gpu_override_matches_the_compose_specification() -> None:
    assert compose_errors(load_compose(ENV, COMPOSE_GPU_FILE)) == []
    devices = load_compose(ENV, COMPOSE_GPU_FILE)["services"]["ray-worker"]["deploy"]["resources"]
    assert devices["reservations"]["devices"][0]["capabilities"] == ["gpu"]


def test_schema_check_refuses_a_misspelt_field() -> None:
    """The check above can fail: a field Compose does not know is an error."""
    broken = copy.deepcopy(load_compose(ENV))
    broken["services"]["api"]["volume"] = broken["services"]["api"].pop("volumes")
    errors = compose_errors(broken)
    assert any("volume" in error for error in errors), errors


@pytest.mark.parametrize("command", [["docker", "compose"], ["docker-compose"]])
def test_docker_compose_config_accepts_the_files(command: list[str]) -> None:
    """Compose's own check where a Compose is installed (the schema check above always runs)."""
    if (
        shutil.which(command[0]) is None
        or subprocess.run([*command, "version"], capture_output=True).returncode
    ):
        pytest.skip(f"{' '.join(command)} is not installed here")
    env = {**os.environ, **ENV}
    for files in (["-f", str(COMPOSE_FILE)], ["-f", str(COMPOSE_FILE), "-f", str(COMPOSE_GPU_FILE)]):
        result = subprocess.run(
            [*command, "--project-directory", str(REPO), *files, "config", "--quiet"],
            env=env,
            capture_output=True,
            text=True,
        )
        assert result.returncode == 0, result.stderr


def test_the_database_password_is_required_and_has_no_default() -> None:
    with pytest.raises(MissingVariable, match="POSTGRES_PASSWORD"):
        load_compose({"RAY_AUTH_TOKEN": TOKEN})
    with pytest.raises(MissingVariable, match="POSTGRES_PASSWORD"):
        load_compose({"POSTGRES_PASSWORD": "", "RAY_AUTH_TOKEN": TOKEN})


def test_no_secret_is_written_in_the_compose_file() -> None:
    raw = load_yaml(COMPOSE_FILE)
    url_passwords = 0
    for name, service in raw["services"].items():
        for key, value in (service.get("environment") or {}).items():
            text = str(value)
            if re.search("PASSWORD|SECRET|TOKEN", key):
                assert re.fullmatch(r"\$\{[A-Z_]+(:\?[^}]*)?\}", text), f"{name}: {key} is not ${{VAR}}"
            for password in _URL_PASSWORD.findall(text):
                assert password.startswith("${POSTGRES_PASSWORD"), f"{name}: {key} has a password in it"
                url_passwords += 1
    assert url_passwords == 1, "the API's DRAGDL_DATABASE_URL carries the password reference"


def test_the_api_reaches_postgres_with_its_credentials() -> None:
    services = load_compose(ENV)["services"]
    url = urlsplit(services["api"]["environment"]["DRAGDL_DATABASE_URL"])
    postgres = services["postgres"]["environment"]
    assert url.scheme == "postgresql+psycopg"
    assert url.hostname == "postgres" and url.hostname in services
    assert url.port == 5432
    assert url.username == postgres["POSTGRES_USER"]
    assert url.password == PASSWORD == postgres["POSTGRES_PASSWORD"]
    assert url.path == "/" + postgres["POSTGRES_DB"]
    assert services["api"]["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_the_api_joins_the_ray_head_every_worker_joins() -> None:
    services = load_compose(ENV)["services"]
    head_port = next(arg for arg in services["ray-head"]["command"] if arg.startswith("--port="))
    address = f"ray-head:{head_port.removeprefix('--port=')}"
    assert services["api"]["environment"]["DRAGDL_RAY_ADDRESS"] == address
    assert f"--address={address}" in " ".join(services["ray-worker"]["command"])
    assert "--head" in services["ray-head"]["command"]
    assert "--include-dashboard=false" in services["ray-head"]["command"]


def test_every_dragdl_node_mounts_the_same_data_volume_at_the_data_dir() -> None:
    compose = load_compose(ENV)
    data_dir = compose["services"]["api"]["environment"]["DRAGDL_DATA_DIR"]
    assert data_dir == _image_data_dir()
    for name in DRAGDL_SERVICES:
        service = compose["services"][name]
        assert f"dragdl-data:{data_dir}" in service["volumes"], name
        assert service["image"] == compose["services"]["api"]["image"], name
    assert "dragdl-data" in compose["volumes"]


def test_only_the_api_port_is_published_on_loopback_by_default() -> None:
    services = load_compose(ENV)["services"]
    published = {name: service["ports"] for name, service in services.items() if service.get("ports")}
    assert list(published) == ["api"]
    (port,) = published["api"]
    assert port["host_ip"] == "127.0.0.1"
    assert str(port["target"]) == services["api"]["environment"]["DRAGDL_PORT"]
    assert services["api"]["environment"]["DRAGDL_HOST"] == "0.0.0.0"
    for name in ("postgres", "ray-head", "ray-worker"):
        assert "expose" not in services[name] and services[name].get("network_mode") != "host", name


def test_the_operator_chooses_another_bind_address() -> None:
    services = load_compose({**ENV, "DRAGDL_BIND_ADDRESS": "0.0.0.0", "DRAGDL_PUBLISHED_PORT": "9000"})
    (port,) = services["services"]["api"]["ports"]
    assert (port["host_ip"], port["published"]) == ("0.0.0.0", "9000")


def test_images_are_pinned_by_tag() -> None:
    for variant in ("cpu", "cuda"):
        compose = load_compose({**ENV, "DRAGDL_VARIANT": variant})
        for name, service in compose["services"].items():
            image = service["image"]
            tag = image.rpartition(":")[2] if ":" in image else ""
            assert tag and tag != "latest", f"{name}: {image}"
        assert compose["services"]["api"]["build"]["args"]["VARIANT"] == variant
        assert compose["services"]["api"]["image"] == f"dragdl:{variant}"


def test_ray_authenticates_with_the_token_from_the_environment_and_serves_no_ray_client() -> None:
    services = load_compose(ENV)["services"]
    for name in DRAGDL_SERVICES:
        environment = services[name]["environment"]
        assert environment["RAY_AUTH_MODE"] == "token", name
        assert environment["RAY_AUTH_TOKEN"] == TOKEN, name
        assert environment["RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO"] == "1", name
    assert "--ray-client-server-port=0" in services["ray-head"]["command"]
    with pytest.raises(MissingVariable, match="RAY_AUTH_TOKEN"):
        load_compose({"POSTGRES_PASSWORD": PASSWORD})


def test_the_ray_nodes_hold_no_database_secret() -> None:
    services = load_compose(ENV)["services"]
    for name in ("ray-head", "ray-worker"):
        values = " ".join(str(value) for value in services[name]["environment"].values())
        assert PASSWORD not in values and "DATABASE_URL" not in " ".join(services[name]["environment"])


def test_every_service_has_a_memory_limit_and_the_dragdl_ones_no_privileges() -> None:
    services = load_compose(ENV)["services"]
    for name, service in services.items():
        assert re.fullmatch(r"\d+[kmg]", str(service.get("mem_limit", ""))), name
    for name in DRAGDL_SERVICES:
        assert services[name]["cap_drop"] == ["ALL"], name
        assert "no-new-privileges:true" in services[name]["security_opt"], name
