"""`/docs`: Swagger UI for the OpenAPI schema, with a Content-Security-Policy of its own.

The service-wide policy allows only the service's own scripts; Swagger UI loads its bundle from a CDN and starts
with one inline script. This page alone allows that CDN and exactly that inline script (by hash), nothing else.
"""

from __future__ import annotations

import base64
import hashlib
import re

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse

router = APIRouter(include_in_schema=False)

_CDN = "https://cdn.jsdelivr.net"
_INLINE = re.compile(r"<script>(.*?)</script>", re.S)


def _policy(html: str) -> str:
    hashes = " ".join(
        f"'sha256-{base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()}'" for body in _INLINE.findall(html)
    )
    return (
        f"default-src 'self'; script-src 'self' {_CDN} {hashes}; style-src 'self' {_CDN}; "
        "img-src 'self' data: https://fastapi.tiangolo.com; connect-src 'self'; frame-ancestors 'none'; "
        "base-uri 'none'; form-action 'self'"
    )


@router.get("/docs")
async def swagger_ui(request: Request) -> HTMLResponse:
    """Interactive API documentation."""
    page = get_swagger_ui_html(openapi_url=request.app.openapi_url or "/openapi.json", title="bugsleuth API")
    html = page.body.decode()
    return HTMLResponse(html, headers={"Content-Security-Policy": _policy(html)})
