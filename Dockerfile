# The image of `pykueue controller`, as `pykueue install` and charts/pykueue deploy it.
#   make image        (= make wheel, then docker build -t pykueue:<version> .)
# The package comes from the wheel `make wheel` builds in dist/, its dependencies at the exact
# versions of constraints.txt. The base image is pinned to an exact tag; it runs as a numeric
# non-root user, so the Deployment's runAsNonRoot holds, on a read-only root filesystem (only /tmp,
# an emptyDir, is written).
FROM python:3.11.7-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HOME=/tmp \
    MPLCONFIGDIR=/tmp/matplotlib

COPY constraints.txt /opt/pykueue-build/constraints.txt
COPY dist/ /opt/pykueue-build/dist/
RUN pip install -c /opt/pykueue-build/constraints.txt /opt/pykueue-build/dist/pykueue-*.whl \
    && rm -rf /opt/pykueue-build \
    && pykueue --version

USER 65532:65532
EXPOSE 9443 8443 8081
ENTRYPOINT ["pykueue"]
CMD ["controller"]
