"""Property-based API fuzzing from the OpenAPI schema: no input may produce a server error."""

from __future__ import annotations

import tempfile
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings

from app.config import Settings
from app.main import create_app
from tests.app._service_fixtures import StubInvestigator

_DATA = Path(tempfile.mkdtemp(prefix="bugsleuth-schemathesis-"))
app = create_app(
    Settings(data_dir=_DATA, register_self=True, workers=1, log_level="WARNING", allowed_hosts=["testserver"]),
    investigate_fn=StubInvestigator(),
)
schema = schemathesis.openapi.from_asgi("/openapi.json", app)


@schema.parametrize()
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_input_makes_the_api_fail_with_a_server_error(case):
    case.call_and_validate(checks=[schemathesis.checks.not_a_server_error])
