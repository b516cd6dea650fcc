"""A small, real, offline tokenizer in Hugging Face cache layout.

AIPerf tokenizes prompts and responses client-side with ``transformers.AutoTokenizer``.
The rehearsal environment has no Hub access, and aiperf 0.13.0 cannot use a local
tokenizer *directory* for trace datasets (its decode workers force ``HF_HUB_OFFLINE=1``),
so we write a byte-level BPE tokenizer (trained here, deterministically, on a built-in
corpus; nothing is downloaded) under the repo id the benchmark uses::

    <hf_home>/hub/models--<org>--<name>/refs/main                -> <40-hex revision>
    <hf_home>/hub/models--<org>--<name>/snapshots/<rev>/tokenizer.json
    <hf_home>/hub/models--<org>--<name>/snapshots/<rev>/tokenizer_config.json
    <hf_home>/hub/models--<org>--<name>/snapshots/<rev>/config.json

after which ``HF_HOME=<hf_home> HF_HUB_OFFLINE=1 aiperf profile --tokenizer <repo_id>`` works.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

VOCAB_SIZE = 2048
SPECIAL_TOKENS = ["<|begin_of_text|>", "<|end_of_text|>", "<|pad|>"]
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}<|{{ message['role'] }}|>\n"
    "{{ message['content'] }}\n{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
_FILES = ("tokenizer.json", "tokenizer_config.json", "config.json")

_CORPUS_TEXT = (
    "the of and to a in is that for it as was with be by on not he i this are or his from at which but have an "
    "they you were her she there been one all we their has would when if so no will what can more who out up "
    "into them do some time could about than other then only its over also after two first may new any these "
    "model token tokens inference throughput latency prefill decode cache router worker frontend kernel memory "
    "network benchmark request requests response stream streaming user users answer question cluster node gpu "
    "rack batch sequence length input output second seconds millisecond percentile deploy rollout graph "
    "thou thee thy hath doth lord king queen love heart night day death life sweet good fair noble speak "
    "come go know make give take see say tell think well like must shall upon such where why how"
)
# Words the corpus weighs four times over (once the replies of an earlier stand-in server): each is one token, so a
# reply made of them has as many tokens as words. Changing them changes every trained merge.
ONE_TOKEN_WORDS = (
    "the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "while", "model", "keeps",
    "streaming", "tokens", "across", "rack", "to", "every", "user", "that", "asked", "for", "one", "more",
    "answer", "about", "inference", "and", "throughput", "latency", "cache", "prefill", "decode", "router",
    "worker", "frontend", "kernel", "memory", "network",
)


def repo_cache_dir(hf_home: Path, repo_id: str) -> Path:
    """``<hf_home>/hub/models--<org>--<name>`` (the layout ``huggingface_hub`` reads)."""
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise ValueError(f"repo_id must look like 'org/name', got {repo_id!r}")
    return Path(hf_home) / "hub" / ("models--" + repo_id.replace("/", "--"))


# The token ids ai-dynamo 1.5.1's mocker engines emit (measured: uniform in [1000, 2000), whatever the model's
# vocabulary). An id the tokenizer cannot decode on its own streams nothing, so the frontend sends no chunk for it and
# a client's time to first token and inter-token latency stretch over the silent tokens.
MOCKER_OUTPUT_IDS = range(1000, 2000)


def _corpus() -> list[str]:
    """A deterministic pseudo-text (word salad with punctuation) to train the BPE merges on. Its numbers run to
    9999 so the merges fill the vocabulary past ``MOCKER_OUTPUT_IDS`` with whole ASCII pieces."""
    words, lines, state = _CORPUS_TEXT.split() + list(ONE_TOKEN_WORDS) * 4, [], 12345
    for _ in range(3000):
        line = []
        for _ in range(12):
            state = (1103515245 * state + 12345) % (1 << 31)
            line.append(words[state % len(words)])
        lines.append(" ".join(line).capitalize() + (". " if state % 3 else ", ") + str(state % 10000))
    return lines


def build_tokenizer_json() -> str:
    """Train the byte-level BPE tokenizer and return its ``tokenizer.json`` text."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=SPECIAL_TOKENS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(_corpus(), trainer=trainer)
    return tok.to_str()


def _tokenizer_config(repo_id: str) -> dict:
    return {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": SPECIAL_TOKENS[0],
        "eos_token": SPECIAL_TOKENS[1],
        "pad_token": SPECIAL_TOKENS[2],
        "add_bos_token": False,
        "clean_up_tokenization_spaces": False,
        "model_max_length": 131072,
        "chat_template": CHAT_TEMPLATE,
        "name_or_path": repo_id,
        "comment": "kubesim rehearsal tokenizer (byte-level BPE, trained offline); not the real model's",
    }


def _config(repo_id: str, tokenizer_json: str) -> dict:
    # The corpus is too small to fill VOCAB_SIZE; the config names the vocabulary the tokenizer really has, so a
    # simulated engine that samples token ids below vocab_size (dynamo.mocker) only emits ids that decode.
    vocab = len(json.loads(tokenizer_json)["model"]["vocab"])
    return {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": vocab,
            "max_position_embeddings": 131072, "_name_or_path": repo_id}


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def installed_snapshot(hf_home: Path, repo_id: str) -> Path | None:
    """The snapshot ``refs/main`` points at, if it holds every file; else None."""
    repo_dir = repo_cache_dir(hf_home, repo_id)
    ref = repo_dir / "refs" / "main"
    if not ref.is_file():
        return None
    snapshot = repo_dir / "snapshots" / ref.read_text().strip()
    return snapshot if all((snapshot / f).is_file() for f in _FILES) else None


def write_hf_cache_tokenizer(hf_home: Path, repo_id: str) -> Path:
    """Write the tokenizer for ``repo_id`` into the HF cache under ``hf_home``; return the snapshot dir.

    Idempotent: when ``refs/main`` already points at a complete snapshot of the same content (the
    revision is a hash of the files), nothing is written; an older revision is replaced.
    Building takes well under a second.
    """
    tokenizer_json = build_tokenizer_json()
    files = {
        "tokenizer.json": tokenizer_json,
        "tokenizer_config.json": json.dumps(_tokenizer_config(repo_id), indent=2, sort_keys=True) + "\n",
        "config.json": json.dumps(_config(repo_id, tokenizer_json), indent=2, sort_keys=True) + "\n",
    }
    digest = hashlib.sha1(usedforsecurity=False)
    for name in _FILES:
        digest.update(name.encode() + b"\0" + files[name].encode() + b"\0")
    revision = digest.hexdigest()
    existing = installed_snapshot(Path(hf_home), repo_id)
    if existing is not None and existing.name == revision:
        return existing
    repo_dir = repo_cache_dir(Path(hf_home), repo_id)
    snapshot = repo_dir / "snapshots" / revision
    for name, text in files.items():
        _atomic_write(snapshot / name, text)
    _atomic_write(repo_dir / "refs" / "main", revision)  # last: marks the snapshot complete
    return snapshot
