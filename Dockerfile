# bugsleuth service image: API (`bugsleuth serve`) and workers (`bugsleuth worker`).
# The base image is pinned by digest with `make pin-base-image` (.ci/pin-base-image asks Docker Hub for the tag's
# current digest and rewrites the FROM line; re-run it to take a newer base).
# NOT PINNED YET: written where Docker Hub was unreachable, so the digest could not be looked up. Run `make pin-base-image`.
FROM python:3.11-slim

RUN apt-get update \
    && apt-get install -y --no-install-recommends git ca-certificates \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
# The production lock alone (hashed; no test packages: requirements-test.lock is not copied).
COPY requirements.lock pyproject.toml ./
RUN pip install --no-cache-dir --require-hashes -r requirements.lock
COPY schemas ./schemas
COPY repomap ./repomap
COPY funnel ./funnel
COPY app ./app
RUN pip install --no-cache-dir --no-deps --no-build-isolation -e . \
    && useradd --create-home --uid 1000 bugsleuth \
    && mkdir -p /data && chown bugsleuth /data

USER bugsleuth
ENV BUGSLEUTH_DATA_DIR=/data \
    PYTHONUNBUFFERED=1
EXPOSE 8000
CMD ["bugsleuth", "serve", "--host", "0.0.0.0", "--port", "8000"]
