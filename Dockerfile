# syntax=docker/dockerfile:1
# DragDL in one image: the web UI is built in a Node stage, the Python package installed in the next.
# The same image runs the API server (the default command) and the Ray head and workers (docs/deploy.md).
#
#   docker build -t dragdl:cpu .                             # CPU-only torch (smaller image)
#   docker build --build-arg VARIANT=cuda -t dragdl:cuda .   # PyPI's torch, which bundles CUDA
#
# No secret is baked in: the database password and every other setting come from the environment.

ARG NODE_IMAGE=node:20.19.0-bookworm-slim
ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

FROM ${NODE_IMAGE} AS ui
WORKDIR /build/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
# vite writes the build to ../src/dragdl/server/static, the folder the server serves.
RUN npm run build

FROM ${PYTHON_IMAGE} AS app
# cpu: torch and torchvision from the PyTorch CPU index (no CUDA libraries, about 4 GB less).
# cuda: the ordinary torch from PyPI, which carries its CUDA runtime; the host needs the NVIDIA driver
# and the NVIDIA container toolkit, nothing else.
ARG VARIANT=cpu
ARG TORCH_CPU_INDEX=https://download.pytorch.org/whl/cpu
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/dragdl \
    PATH=/opt/dragdl/bin:$PATH \
    DRAGDL_DATA_DIR=/data \
    RAY_USAGE_STATS_ENABLED=0

# tini reaps the Ray daemons the API container starts (the server is PID 1's only child).
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini \
    && rm -rf /var/lib/apt/lists/*

RUN python -m venv /opt/dragdl
RUN case "$VARIANT" in \
      cpu) pip install --index-url "$TORCH_CPU_INDEX" torch torchvision ;; \
      cuda) ;; \
      *) echo "VARIANT must be cpu or cuda, not $VARIANT" >&2; exit 2 ;; \
    esac

WORKDIR /build/python
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install . && rm -rf /build/python

# The built UI is no package data of the wheel: it goes next to the installed server module, where
# `dragdl.server.frontend.STATIC_DIR` looks for it, and the build fails when it is not found there.
COPY --from=ui /build/src/dragdl/server/static /tmp/static
RUN target="$(python -c 'import dragdl.server.frontend as f; print(f.STATIC_DIR)')" \
    && rm -rf "$target" && mv /tmp/static "$target" && test -f "$target/index.html"

COPY deploy/docker/dragdl-serve /usr/local/bin/dragdl-serve

# A fixed numeric user: the API and every Ray node write the shared data volume as the same owner.
RUN useradd --uid 1000 --user-group --create-home dragdl \
    && mkdir -p /data && chown dragdl:dragdl /data && chmod 0700 /data
USER 1000:1000
WORKDIR /home/dragdl
VOLUME ["/data"]
EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD python -c "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/api/health' % os.environ.get('DRAGDL_PORT', '8000'), timeout=4)"

ENTRYPOINT ["tini", "--"]
CMD ["dragdl-serve"]
