# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Report files on the control node: written whole (a temporary file renamed over the old one, so a reader never
sees half a report), and left alone when their content is already there (their date stays that of the report)."""

from __future__ import annotations

import os
import tempfile


def write_if_changed(path: str, data: str | bytes, check_mode: bool = False, mode: int = 0o644) -> bool:
    """Write ``data`` to ``path`` unless it already holds exactly that; True when it changed (or would)."""
    data = data.encode("utf-8") if isinstance(data, str) else data
    try:
        with open(path, "rb") as fh:
            if fh.read() == data:
                return False
    except FileNotFoundError:
        pass
    if check_mode:
        return True
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".tmp-", suffix="-" + os.path.basename(path))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return True
