"""Unit-test setup: make ``ansible_collections.inferops.dynamo`` and ``kubesim`` importable."""

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
for p in (REPO / "collections", REPO):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

AIPERF_FIXTURES = REPO / "tests" / "fixtures" / "aiperf"


@pytest.fixture
def aiperf_fixtures() -> Path:
    return AIPERF_FIXTURES
