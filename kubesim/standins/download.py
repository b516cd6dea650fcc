"""The simulated model download (no network here): what it recognises and the progress it prints."""

from __future__ import annotations

import re

DOWNLOAD_RX = re.compile(r"(?:\bhf|huggingface-cli)\s+download\s+(?:--\S+\s+)*([A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-]+)")
# A bucket holding the Hugging Face cache layout, synced down: .../hub/models--<org>--<name>
S3_SYNC_RX = re.compile(r"aws\s+s3\s+sync\s+\"?s3://\S*?/hub/models--([A-Za-z0-9_.\-]+?)--([A-Za-z0-9_.\-]+?)\"?\s")
CHECKPOINT_GB = 533.0


def progress_line(repo: str, pct: int, total_gb: float = CHECKPOINT_GB) -> str:
    return f"Downloading {repo}: {pct}% ({total_gb * pct / 100:.1f} GB / {total_gb:.0f} GB)"


def is_download(text: str) -> bool:
    return bool(DOWNLOAD_RX.search(text) or S3_SYNC_RX.search(text))


def download_repos(text: str) -> list[str]:
    """The repositories a download command fetches (hf download, or an S3 sync of their cache folders)."""
    return DOWNLOAD_RX.findall(text) + [f"{org}/{name}" for org, name in S3_SYNC_RX.findall(text)]
