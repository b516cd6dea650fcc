"""AWX / execution-environment tests: data only, no AWX server, no cluster."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
for p in (REPO / "collections", REPO):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
