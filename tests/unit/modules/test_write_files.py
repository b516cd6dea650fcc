"""The write_files module: a report's files written whole, only when they differ, and refused names."""

import json
import os

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.inferops.dynamo.plugins.modules import write_files


def run(capsys, **args):
    with patch_module_args(args), pytest.raises(SystemExit) as exc:
        write_files.main()
    return exc.value.code, json.loads(capsys.readouterr().out)


def test_writes_into_a_new_directory_then_leaves_unchanged_files_alone(capsys, tmp_path):
    dest = tmp_path / "rollout" / "20261206T000000Z"
    files = [{"name": "summary.md", "content": "# Rollout\n"}, {"name": "summary.json", "content": "[]\n"}]
    rc, out = run(capsys, dest=str(dest), files=files)
    assert rc == 0 and out["changed"] is True
    assert out["changed_files"] == [str(dest / "summary.md"), str(dest / "summary.json")]
    assert (dest / "summary.md").read_text() == "# Rollout\n" and oct(os.stat(dest / "summary.json").st_mode)[-3:] == "644"
    before = os.stat(dest / "summary.md").st_mtime_ns

    files[1]["content"] = '[{"cluster": "a"}]\n'
    rc, out = run(capsys, dest=str(dest), files=files)
    assert rc == 0 and out["changed_files"] == [str(dest / "summary.json")]
    assert os.stat(dest / "summary.md").st_mtime_ns == before          # an unchanged report keeps its date
    assert sorted(p.name for p in dest.iterdir()) == ["summary.json", "summary.md"]    # no temporary file left

    rc, out = run(capsys, dest=str(dest), files=files)
    assert rc == 0 and out["changed"] is False and out["changed_files"] == []


def test_check_mode_writes_nothing(capsys, tmp_path):
    rc, out = run(capsys, dest=str(tmp_path / "new"), files=[{"name": "a.md", "content": "x"}], _ansible_check_mode=True)
    assert rc == 0 and out["changed"] is True and not (tmp_path / "new").exists()


def test_every_bad_file_is_named_at_once(capsys, tmp_path):
    rc, out = run(capsys, dest=str(tmp_path), files=[{"name": "../escape.md", "content": "x"}, {"name": "ok.md"},
                                                    {"name": "fine.md", "content": "y"}])
    assert rc == 1 and out["failed"] is True
    assert "0: {'name': '../escape.md'" in out["msg"] and "1: {'name': 'ok.md'}" in out["msg"]
    assert "fine.md" not in out["msg"] and list(tmp_path.iterdir()) == []
