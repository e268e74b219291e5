"""`/docs`: Swagger UI for the OpenAPI schema, served entirely by the service (works offline).

Swagger UI's files come from the pinned `fastapi-offline` package (it vendors the Swagger UI 5 dist, which
renders OpenAPI 3.1; `swagger-ui-bundle` 1.1.0 only ships Swagger UI 4, which refuses FastAPI's 3.1 schema).
The page starts Swagger UI from a static file (`app/static/swagger-init.js`), so it runs under the strict
site-wide Content-Security-Policy: no inline script or style, no other host. ReDoc stays disabled.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from html import escape
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, Response

router = APIRouter(include_in_schema=False)

STATIC_PREFIX = "/static/swagger"
"""Where the Swagger UI files are served (under `/static/`, so they are public and cacheable like other assets)."""
_INIT_SCRIPT = Path(__file__).resolve().parents[1] / "static" / "swagger-init.js"
_TYPES = {".css": "text/css", ".js": "text/javascript"}


def _vendor_dir() -> Path | None:
    try:
        import fastapi_offline  # lazy: only a Swagger asset needs it; without it that asset is not found
    except ImportError:
        return None
    return Path(fastapi_offline.__file__).resolve().parent / "static"


@lru_cache(maxsize=8)
def _asset(name: str) -> Path | None:
    """The file behind `/static/swagger/<name>`, or None: only Swagger UI's bundle, its CSS and our init script."""
    if name == "init.js":
        return _INIT_SCRIPT
    vendor = _vendor_dir()
    if vendor is not None and name in ("swagger-ui-bundle.js", "swagger-ui.css"):
        return vendor / name
    return None


@lru_cache(maxsize=8)
def _version(name: str) -> str:
    path = _asset(name)
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:10] if path else "0"
    except OSError:
        return "0"


def _url(root: str, name: str) -> str:
    return f"{root}{STATIC_PREFIX}/{name}?v={_version(name)}"


def swagger_page(openapi_url: str, *, title: str = "bugsleuth API", root: str = "") -> str:
    """The `/docs` HTML: same-origin stylesheet and scripts only, configuration in data attributes."""
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title>
<link rel="icon" href="{escape(root)}/static/favicon.svg">
<link rel="stylesheet" href="{escape(_url(root, 'swagger-ui.css'))}">
</head>
<body>
<main id="swagger-ui" data-openapi-url="{escape(root + openapi_url)}"></main>
<script src="{escape(_url(root, 'swagger-ui-bundle.js'))}"></script>
<script src="{escape(_url(root, 'init.js'))}"></script>
</body>
</html>
"""


@router.get("/docs")
async def swagger_ui(request: Request) -> HTMLResponse:
    """Interactive API documentation."""
    if _vendor_dir() is None:
        return HTMLResponse(
            "Swagger UI is not installed (package fastapi-offline); the schema is at /openapi.json", status_code=503
        )
    root = request.scope.get("root_path", "") or ""
    return HTMLResponse(swagger_page(request.app.openapi_url or "/openapi.json", root=root))


@router.get(STATIC_PREFIX + "/{name}")
async def swagger_asset(name: str) -> Response:
    """Swagger UI's bundle and stylesheet, and the script that starts it."""
    path = _asset(name)
    if path is None or not path.is_file():
        return Response("not found", status_code=404, media_type="text/plain")
    return FileResponse(path, media_type=_TYPES[path.suffix], headers={"Cache-Control": "public, max-age=86400"})
