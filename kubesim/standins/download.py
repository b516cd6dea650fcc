"""The simulated model download (no network here): what it recognises, the progress it prints, where it
resumes, and how it fails when the ``download-fail`` fault is set. Both backends drive one
:class:`SimulatedDownload` per download pod with their own clock.

Like ``hf download``, a download that stops part-way leaves what it fetched in the cache (a
``blobs/*.incomplete`` file here, holding the percent reached), and the next attempt resumes from it.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..faults import match_any

DOWNLOAD_RX = re.compile(r"(?:\bhf|huggingface-cli)\s+download\s+(?:--\S+\s+)*([A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-]+)")
# A bucket holding the Hugging Face cache layout, synced down: .../hub/models--<org>--<name>
S3_SYNC_RX = re.compile(r"aws\s+s3\s+sync\s+\"?s3://\S*?/hub/models--([A-Za-z0-9_.\-]+?)--([A-Za-z0-9_.\-]+?)\"?\s")
CHECKPOINT_GB = 533.0
PARTIAL_FILE = "blobs/checkpoint.safetensors.incomplete"
# What the real client prints for each cause the download-fail fault can stand for: one a rerun can fix (the
# volume filled up; resumable) and one it cannot (the repository does not exist, or the token cannot see it).
FAIL_REASONS = {
    "disk-full": "OSError: [Errno 28] No space left on device: '{blob}'",
    "not-found": ("huggingface_hub.errors.RepositoryNotFoundError: 404 Client Error. Repository Not Found for url: "
                  "https://huggingface.co/api/models/{repo}/revision/main. Please make sure you specified the correct "
                  "`repo_id` and `repo_type`. If you are trying to access a private or gated repo, make sure you are "
                  "authenticated."),
}
DEFAULT_FAIL_AT = 40


def progress_line(repo: str, pct: int, total_gb: float = CHECKPOINT_GB) -> str:
    return f"Downloading {repo}: {pct}% ({total_gb * pct / 100:.1f} GB / {total_gb:.0f} GB)"


# The collection's scripts name no repository: they take each as an argument, org/name[@revision].
DOWNLOAD_MARK = re.compile(r"\b(?:hf|huggingface-cli)\s+download\b|\baws\s+s3\s+sync\b")
REPO_SPEC = re.compile(r"([A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-]+)(?:@([0-9A-Za-z_.\-]+))?")


def is_download(text: str) -> bool:
    return bool(DOWNLOAD_RX.search(text) or S3_SYNC_RX.search(text) or DOWNLOAD_MARK.search(text))


def download_specs(argv: list[str]) -> dict[str, str | None]:
    """The repositories a download command fetches and the revision each is pinned to (None: its main branch):
    named in the command (hf download org/name, or an S3 sync of its cache folder, as the recipe page writes
    it), or the arguments of ``sh -c SCRIPT NAME ARGS...`` (the collection's Job)."""
    text = " ".join(argv)
    named = DOWNLOAD_RX.findall(text) + [f"{org}/{name}" for org, name in S3_SYNC_RX.findall(text)]
    if named:
        return dict.fromkeys(named)
    positional = argv[4:] if len(argv) > 3 and argv[1] == "-c" else []
    return {m.group(1): m.group(2) for a in positional if (m := REPO_SPEC.fullmatch(a))}


def download_repos(argv: list[str]) -> list[str]:
    return list(download_specs(argv))


def download_failure(faults: dict, *names: str) -> dict | None:
    """The download-fail fault (``reason``, ``at``) when it applies to a pod of these names (its ``pattern``, a
    glob, defaults to every download); decided once, when the pod starts, on both backends."""
    fault = faults.get("download-fail")
    if not fault:
        return None
    return dict(fault) if match_any(fault.get("pattern") or "*", *names) else None


def _partial(hf_home: Path, repo: str) -> Path:
    from ..tokenizer import repo_cache_dir

    return repo_cache_dir(Path(hf_home), repo) / PARTIAL_FILE


def resumed_percent(hf_home: Path, repo: str) -> int:
    """How far an earlier attempt got (0 when none did, or when it finished)."""
    try:
        return max(0, min(99, int(_partial(hf_home, repo).read_text().strip() or 0)))
    except (OSError, ValueError):
        return 0


class SimulatedDownload:
    """One download pod's progress: ``advance(fraction)`` returns the log lines to append as the pod's clock
    moves (0.0 to 1.0 of the full download's time), and sets ``exit_code`` once the download ends.

    ``fail`` is the download-fail fault as the pod was admitted with it (``reason``, ``at`` percent), or None.
    """

    def __init__(self, repos: list[str] | dict[str, str | None], hf_home: Path, fail: dict | None = None):
        self.repos = list(repos)
        self.revisions = dict(repos) if isinstance(repos, dict) else {}
        self.hf_home = Path(hf_home)
        self.fail = dict(fail) if fail else None
        self.start = min((resumed_percent(self.hf_home, r) for r in self.repos), default=0)
        self.reached = self.start
        self.exit_code: int | None = None
        self._began = False

    @property
    def fail_at(self) -> int | None:
        if not self.fail:
            return None
        if self.fail.get("reason") == "not-found":
            return self.start     # the Hub answers 404 before the first byte
        return max(self.start, min(99, int(self.fail.get("at", DEFAULT_FAIL_AT))))

    def advance(self, fraction: float) -> list[str]:
        if self.exit_code is not None:
            return []
        lines = []
        if not self._began:
            self._began = True
            if self.start:
                lines += [f"Resuming {r} from {self.start}% ({CHECKPOINT_GB * self.start / 100:.1f} GB already in the "
                          f"cache)" for r in self.repos]
        target = min(100, int(self.start + max(0.0, fraction) * 100))
        stop = self.fail_at
        while self.reached < target and (stop is None or self.reached < stop):
            self.reached = min(100, (self.reached // 10 + 1) * 10)
            if stop is not None:
                self.reached = min(self.reached, stop)
            lines += [progress_line(r, self.reached) for r in self.repos]
        if stop is not None and self.reached >= stop:
            return lines + self._failed()
        if self.reached >= 100:
            return lines + self._finished()
        return lines

    def _failed(self) -> list[str]:
        reason = self.fail.get("reason") or "disk-full"
        lines = []
        for repo in self.repos:
            if reason != "not-found":
                partial = _partial(self.hf_home, repo)
                partial.parent.mkdir(parents=True, exist_ok=True)
                partial.write_text(str(self.reached))
            lines.append("Error: " + FAIL_REASONS.get(reason, FAIL_REASONS["disk-full"]).format(
                repo=repo, blob=_partial(self.hf_home, repo)))
        self.exit_code = 1
        return lines

    def _finished(self) -> list[str]:
        from ..tokenizer import repo_cache_dir, write_hf_cache_tokenizer

        lines = []
        for repo in self.repos:
            fetched = write_hf_cache_tokenizer(self.hf_home, repo)
            _partial(self.hf_home, repo).unlink(missing_ok=True)
            # as the collection's script reports it: the pinned commit, else the one the branch resolved to
            refs = repo_cache_dir(self.hf_home, repo) / "refs" / "main"
            commit = self.revisions.get(repo) or (refs.read_text().strip() if refs.is_file() else "main")
            lines += [f"model-download: {repo} at {commit}", f"Fetched {repo} -> {fetched}"]
        self.exit_code = 0
        return lines
