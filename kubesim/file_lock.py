"""One holder at a time on this machine: the control-plane build and each mocker-profile calibration run under an
exclusive lock on a file beside what they make, so a second caller waits for the first one's result instead of
making it again beside it."""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def held(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (made with its folder when missing) for the ``with`` block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
