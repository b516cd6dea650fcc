"""The simulated model download both backends run: progress, failure as the real client prints it, resume."""

from kubesim.standins.download import SimulatedDownload, download_failure, resumed_percent

REPO = "org/model"


def test_a_download_that_fills_the_volume_stops_where_it_was_and_the_next_attempt_resumes(tmp_path):
    first = SimulatedDownload([REPO], tmp_path, {"reason": "disk-full", "at": 40})
    lines = first.advance(0.25) + first.advance(1.0)
    assert lines[-1].startswith("Error: OSError: [Errno 28] No space left on device")
    assert [line.split(": ")[1].split("%")[0] for line in lines[:-1]] == ["10", "20", "30", "40"]
    assert first.exit_code == 1 and resumed_percent(tmp_path, REPO) == 40

    second = SimulatedDownload([REPO], tmp_path)
    lines = second.advance(0.0)
    assert lines == [f"Resuming {REPO} from 40% (213.2 GB already in the cache)"]
    lines = second.advance(0.6)
    assert lines[0].startswith(f"Downloading {REPO}: 50%") and lines[-1].startswith(f"Fetched {REPO} -> ")
    assert second.exit_code == 0 and resumed_percent(tmp_path, REPO) == 0
    assert (tmp_path / "hub" / "models--org--model" / "refs" / "main").exists()


def test_a_repository_that_does_not_exist_fails_at_once_and_leaves_nothing(tmp_path):
    run = SimulatedDownload([REPO], tmp_path, {"reason": "not-found"})
    assert run.advance(0.5) == [
        f"Error: huggingface_hub.errors.RepositoryNotFoundError: 404 Client Error. Repository Not Found for url: "
        f"https://huggingface.co/api/models/{REPO}/revision/main. Please make sure you specified the correct "
        "`repo_id` and `repo_type`. If you are trying to access a private or gated repo, make sure you are "
        "authenticated."]
    assert run.exit_code == 1 and resumed_percent(tmp_path, REPO) == 0


def test_the_fault_matches_names_by_glob_and_defaults_to_every_download():
    assert download_failure({"download-fail": {"reason": "disk-full"}}, "model-download", "model-download-x1")
    assert download_failure({"download-fail": {"pattern": "model-*"}}, "model-download")
    assert download_failure({"download-fail": {"pattern": "muse"}}, "model-download", "muse-x") is None
    assert download_failure({}, "model-download") is None
