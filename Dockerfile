# kubewhy: the Slack bot (`kubewhy serve`), with the CLI and the demo snapshots (`bot/demo/`).
#
# Two stages: the build stage installs kubewhy and its runtime dependencies (no test extra) into a
# virtualenv; the runtime stage copies only that virtualenv onto a clean base and runs it as a
# non-root numeric user, so a Pod's `runAsNonRoot` can verify it without a passwd lookup.
# Bump the base by tag (and, for reproducible builds, pin its digest: python:3.11.14-slim-bookworm@sha256:…).
ARG PYTHON_IMAGE=python:3.11.14-slim-bookworm

FROM ${PYTHON_IMAGE} AS build

ENV PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/kubewhy
WORKDIR /src

# Dependencies first, from pyproject.toml alone, so a code change does not reinstall them.
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
        > requirements.txt \
    && /opt/kubewhy/bin/pip install --no-cache-dir --requirement requirements.txt

# Then kubewhy itself; .dockerignore admits only the packages, pyproject.toml and README.md.
COPY . .
RUN /opt/kubewhy/bin/pip install --no-cache-dir --no-deps .


FROM ${PYTHON_IMAGE}

LABEL org.opencontainers.image.title="kubewhy" \
      org.opencontainers.image.description="Why is this GPU pod or JobSet not running? A Slack bot and CLI for on-call engineers."

# The root filesystem is read-only in the Pod: bytecode was compiled at install time, nothing is written.
ENV PATH=/opt/kubewhy/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

RUN groupadd --system --gid 10001 kubewhy \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin kubewhy
COPY --from=build /opt/kubewhy /opt/kubewhy

USER 10001:10001
EXPOSE 3000

# The slim image has no curl: ask /healthz with the standard library (an HTTP error or a refused
# connection raises, and the exit status is then 1).
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('KUBEWHY_PORT', '3000') + '/healthz', timeout=4)"]

ENTRYPOINT ["kubewhy"]
CMD ["serve"]
