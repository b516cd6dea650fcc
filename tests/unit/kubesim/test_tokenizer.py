"""The offline HF-cache tokenizer: layout, idempotence, and that transformers loads it with HF_HUB_OFFLINE."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kubesim.tokenizer import MOCKER_OUTPUT_IDS, installed_snapshot, repo_cache_dir, write_hf_cache_tokenizer

REPO = Path(__file__).resolve().parents[3]
REPO_ID = "meta-models/Muse-Spark-Open-816B-A42B-NVFP4"


def test_layout_and_idempotence(tmp_path):
    snap = write_hf_cache_tokenizer(tmp_path, REPO_ID)
    repo_dir = tmp_path / "hub" / "models--meta-models--Muse-Spark-Open-816B-A42B-NVFP4"
    assert repo_cache_dir(tmp_path, REPO_ID) == repo_dir
    assert snap.parent == repo_dir / "snapshots" and len(snap.name) == 40
    assert (repo_dir / "refs" / "main").read_text() == snap.name
    assert {p.name for p in snap.iterdir()} == {"tokenizer.json", "tokenizer_config.json", "config.json"}
    mtime = (snap / "tokenizer.json").stat().st_mtime_ns
    assert write_hf_cache_tokenizer(tmp_path, REPO_ID) == snap
    assert (snap / "tokenizer.json").stat().st_mtime_ns == mtime
    assert installed_snapshot(tmp_path, REPO_ID) == snap


def test_every_id_a_mocker_emits_decodes_alone_to_text(tmp_path):
    from tokenizers import Tokenizer

    snap = write_hf_cache_tokenizer(tmp_path, REPO_ID)
    tok = Tokenizer.from_file(str(snap / "tokenizer.json"))
    silent = [i for i in MOCKER_OUTPUT_IDS if not tok.decode([i]).strip() or "\ufffd" in tok.decode([i])]
    assert not silent, f"{len(silent)} ids stream no text, e.g. {silent[:5]}"
    assert json.loads((snap / "config.json").read_text())["vocab_size"] == tok.get_vocab_size() >= MOCKER_OUTPUT_IDS.stop


def test_bad_repo_id(tmp_path):
    with pytest.raises(ValueError, match="org/name"):
        write_hf_cache_tokenizer(tmp_path, "no-slash")


@pytest.mark.slow
def test_transformers_loads_it_offline_and_counts_one_token_words(tmp_path):
    write_hf_cache_tokenizer(tmp_path, REPO_ID)
    code = (
        "from transformers import AutoTokenizer\n"
        "from kubesim.tokenizer import ONE_TOKEN_WORDS as W\n"
        f"t = AutoTokenizer.from_pretrained({REPO_ID!r})\n"
        "print(len(t.encode(W[0].capitalize() + ''.join(' ' + W[i % len(W)] for i in range(1, 50)))))\n"
        "print(t.decode(t.encode('Hello, world! 123')))\n"
    )
    env = dict(os.environ, HF_HOME=str(tmp_path), HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                         check=False, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["50", "Hello, world! 123"]


def test_stale_revision_is_replaced(tmp_path):
    repo_dir = repo_cache_dir(tmp_path, REPO_ID)
    old = repo_dir / "snapshots" / ("0" * 40)
    old.mkdir(parents=True)
    for name in ("tokenizer.json", "tokenizer_config.json", "config.json"):
        (old / name).write_text("{}")
    (repo_dir / "refs").mkdir()
    (repo_dir / "refs" / "main").write_text("0" * 40)
    snap = write_hf_cache_tokenizer(tmp_path, REPO_ID)
    assert snap != old and (repo_dir / "refs" / "main").read_text() == snap.name
