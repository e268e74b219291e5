# bugsleuth service image: API (`bugsleuth serve`) and workers (`bugsleuth worker`).
FROM python:3.11-slim

RUN apt-get update \
    && apt-get install -y --no-install-recommends git ca-certificates \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY requirements.lock pyproject.toml ./
RUN pip install --no-cache-dir -r requirements.lock
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
