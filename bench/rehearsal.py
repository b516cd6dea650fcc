"""Where the benches find the project's rehearsal data: one place for the paths they all use."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
GROUP_VARS = REPO / "inventories" / "local" / "group_vars" / "dynamo_clusters"
TRACE = REPO / "inventories" / "rehearsal-data" / "agentic-rehearsal.jsonl"
