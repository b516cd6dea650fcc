"""AWX / execution-environment tests: no AWX server, no cluster (the job templates run on the rehearsal
cluster in tests/integration/test_awx_job_templates.py)."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
for p in (REPO / "collections", REPO):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
