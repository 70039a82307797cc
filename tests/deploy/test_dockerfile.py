"""Dockerfile, .dockerignore and the API container's command, read as text (no Docker daemon here)."""

from __future__ import annotations

import fnmatch
import re
import subprocess
from pathlib import Path

import dragdl.server
from dragdl.server.frontend import STATIC_DIR
from dragdl.server.routes.health import router as health_router

from .manifests import DOCKERFILE, REPO, SERVE_SCRIPT

TEXT = DOCKERFILE.read_text(encoding="utf-8")
# One instruction per logical line: continuation lines joined.
INSTRUCTIONS = [
    line.strip()
    for line in re.sub(r"\\\n", " ", TEXT).splitlines()
    if line.strip() and not line.lstrip().startswith("#")
]


def _args() -> dict[str, str]:
    return dict(re.findall(r"^ARG (\w+)=(\S+)$", "\n".join(INSTRUCTIONS), re.MULTILINE))


def _stages() -> list[tuple[str, str]]:
    """(image, stage name) of each FROM, with ARG defaults filled in."""
    args = _args()
    stages = []
    for line in INSTRUCTIONS:
        if match := re.fullmatch(r"FROM (\S+) AS (\w+)", line):
            image = re.sub(r"\$\{(\w+)\}", lambda m: args[m[1]], match[1])
            stages.append((image, match[2]))
    return stages


def _dockerignore() -> list[str]:
    lines = (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def _ignored(path: str) -> bool:
    return any(
        fnmatch.fnmatch(path, pattern.removeprefix("**/")) or fnmatch.fnmatch(path, pattern)
        for pattern in _dockerignore()
    ) or any(path.startswith(pattern.rstrip("/") + "/") for pattern in _dockerignore())


def test_the_ui_is_built_in_a_node_stage_and_the_package_installed_in_the_next() -> None:
    (node, ui), (python, _) = _stages()
    assert node.startswith("node:") and python.startswith("python:")
    assert "RUN npm ci --no-audit --no-fund" in INSTRUCTIONS
    assert "RUN npm run build" in INSTRUCTIONS
    assert any(line.startswith("RUN pip install .") for line in INSTRUCTIONS)
    assert any(line.startswith(f"COPY --from={ui} ") for line in INSTRUCTIONS)


def test_the_ui_build_lands_where_the_server_serves_it() -> None:
    """The Dockerfile copies /build/src/dragdl/server/static: vite's outDir seen from /build/frontend."""
    vite = (REPO / "frontend" / "vite.config.ts").read_text(encoding="utf-8")
    assert "'../src/dragdl/server/static'" in vite
    assert "WORKDIR /build/frontend" in INSTRUCTIONS
    assert "COPY --from=ui /build/src/dragdl/server/static /tmp/static" in INSTRUCTIONS
    assert Path(dragdl.server.__file__).parent / "static" == STATIC_DIR


def test_base_images_are_pinned_to_exact_versions() -> None:
    for image, stage in _stages():
        tag = image.partition(":")[2]
        assert re.match(r"\d+\.\d+\.\d+-", tag), f"{stage}: {image}"


def test_the_variant_chooses_the_torch_build() -> None:
    assert _args()["VARIANT"] == "cpu"
    install = next(line for line in INSTRUCTIONS if 'case "$VARIANT" in' in line)
    assert 'cpu) pip install --index-url "$TORCH_CPU_INDEX" torch torchvision' in install
    assert "cuda) ;;" in install
    assert "exit 2" in install, "an unknown variant fails the build"


def test_runs_as_a_fixed_non_root_user() -> None:
    users = [line.split()[1] for line in INSTRUCTIONS if line.startswith("USER ")]
    assert users == ["1000:1000"]
    assert "useradd --uid 1000" in TEXT


def test_no_secret_in_the_image() -> None:
    for line in INSTRUCTIONS:
        if line.startswith(("ENV ", "ARG ")):
            assert not re.search("PASSWORD|SECRET|TOKEN|DATABASE_URL", line), line
    assert ".env" in _dockerignore()
    assert _ignored(".env") and _ignored("deploy/.env")


def test_the_healthcheck_asks_the_health_route() -> None:
    health = next(route.path for route in health_router.routes if route.name == "health")  # type: ignore[attr-defined]
    check = next(line for line in INSTRUCTIONS if line.startswith("HEALTHCHECK "))
    assert f"http://127.0.0.1:%s{health}" in check


def test_everything_copied_exists_and_is_not_ignored() -> None:
    copied = []
    for line in INSTRUCTIONS:
        if line.startswith("COPY ") and "--from=" not in line:
            copied.extend(line.split()[1:-1])
    assert copied
    for source in copied:
        assert (REPO / source).exists(), source
        assert not _ignored(source.rstrip("/")), f"{source} is excluded by .dockerignore"
    for built in (".venv", "frontend/node_modules", "src/dragdl/server/static"):
        assert _ignored(built), built


def test_serve_script_is_valid_sh_and_joins_ray_without_cpus() -> None:
    subprocess.run(["sh", "-n", str(SERVE_SCRIPT)], check=True)
    script = SERVE_SCRIPT.read_text(encoding="utf-8")
    assert 'ray start --address="$DRAGDL_RAY_ADDRESS" --num-cpus=0 --num-gpus=0' in script
    assert 'exec dragdl serve --host "${DRAGDL_HOST:-127.0.0.1}" --port "${DRAGDL_PORT:-8000}"' in script
    assert SERVE_SCRIPT.stat().st_mode & 0o111, "executable"


def test_readme_keeps_the_single_machine_commands_and_links_the_guide() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "make serve   # installs everything" in readme and "make test    # installs everything" in readme
    assert "(docs/deploy.md)" in readme and (REPO / "docs" / "deploy.md").is_file()
