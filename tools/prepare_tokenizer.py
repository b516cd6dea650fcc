#!/usr/bin/env python3
"""Write the offline rehearsal tokenizer into ``<repo>/.cache/huggingface`` (HF_HOME for tests and demos).

Called by ``make setup``; quick and idempotent.  Usage::

    python tools/prepare_tokenizer.py [--hf-home DIR] [--repo-id ORG/NAME]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_REPO_ID = "meta-models/Muse-Spark-Open-816B-A42B-NVFP4"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hf-home", type=Path, default=REPO / ".cache" / "huggingface")
    parser.add_argument("--repo-id", default=DEFAULT_REPO_ID)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    from kubesim.tokenizer import write_hf_cache_tokenizer

    t0 = time.monotonic()
    snapshot = write_hf_cache_tokenizer(args.hf_home, args.repo_id)
    print(f"tokenizer {args.repo_id}: {snapshot} ({time.monotonic() - t0:.2f}s); "
          f"use HF_HOME={args.hf_home} HF_HUB_OFFLINE=1")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
