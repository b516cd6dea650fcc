"""The simulated model download (no network here): what it recognises and the progress it prints."""

from __future__ import annotations

import re

DOWNLOAD_RX = re.compile(r"(?:\bhf|huggingface-cli)\s+download\s+(?:--\S+\s+)*([A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-]+)")
CHECKPOINT_GB = 533.0


def progress_line(repo: str, pct: int, total_gb: float = CHECKPOINT_GB) -> str:
    return f"Downloading {repo}: {pct}% ({total_gb * pct / 100:.1f} GB / {total_gb:.0f} GB)"
