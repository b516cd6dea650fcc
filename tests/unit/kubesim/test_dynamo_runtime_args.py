"""Each rendered target becomes the runtime processes its DGD describes (no process is started here)."""

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.render import objects as render
from kubesim.standins import dynamo_runtime as rt


def _processes(**request):
    dgd = render.dynamo_graph_deployment(build_plan(request), "muse")
    return rt.graph_processes(dgd, model_path="/snap", profile_path="/p.npz", http_host="127.0.0.1",
                              http_port=8000, python="py")


def _flag(argv, name):
    return argv[argv.index(name) + 1] if name in argv else None


@pytest.mark.parametrize("framework", ["sglang", "vllm"])
def test_aggregated_target_runs_one_frontend_and_one_mocker_of_its_engine(framework):
    procs = _processes(sku="gb300", mode="agg", framework=framework)
    frontend, worker = procs
    assert frontend.component == "Frontend"
    assert frontend.argv[:3] == ["py", "-m", "dynamo.frontend"]
    assert _flag(frontend.argv, "--http-port") == "8000" and frontend.argv.count("--http-port") == 1
    assert _flag(frontend.argv, "--discovery-backend") == "file"
    assert worker.argv[:3] == ["py", "-m", "dynamo.mocker"]
    assert _flag(worker.argv, "--engine-type") == framework
    assert _flag(worker.argv, "--model-name") == "meta-models/Muse-Spark-Open-816B-A42B-NVFP4"
    assert _flag(worker.argv, "--planner-profile-data") == "/p.npz"
    assert "--disaggregation-mode" not in worker.argv


def test_kv_router_target_keeps_its_rendered_router_and_runs_one_mocker_per_replica():
    procs = _processes(sku="gb300", mode="kv-router")
    frontend = procs[0]
    assert _flag(frontend.argv, "--router-mode") == "kv"
    workers = procs[1:]
    assert [p.name for p in workers] == ["Worker-0", "Worker-1"]
    assert _flag(workers[0].argv, "--block-size") == _flag(frontend.argv, "--kv-cache-block-size") == "64"


def test_disaggregated_target_runs_prefill_and_decode_mockers_with_the_kv_transfer():
    procs = _processes(sku="gb300", mode="disagg")
    modes = {p.component: _flag(p.argv, "--disaggregation-mode") for p in procs[1:]}
    assert modes == {"PrefillWorker": "prefill", "DecodeWorker": "decode"}
    prefill = procs[1]
    assert float(_flag(prefill.argv, "--kv-transfer-bandwidth")) == rt.NVLINK_KV_TRANSFER_GBPS
    # FP8 KV: half the catalog's BF16 bytes per token
    assert _flag(prefill.argv, "--kv-bytes-per-token") == str(163840 // 2)


def test_workers_advertise_loopback_and_the_frontend_receives_on_it():
    procs = _processes(sku="gb200", mode="agg")
    assert procs[0].env == {"DYN_TCP_RESPONSE_STREAM_HOST": "lo"}
    assert procs[1].env == {"DYN_TCP_RPC_HOST": "127.0.0.1"}


def test_a_missing_runtime_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setenv(rt.RUNTIME_PYTHON_ENV, str(tmp_path / "nope" / "python"))
    assert "run `make setup`" in rt.available()


def test_workers_hold_the_kv_capacity_of_the_published_load_when_the_trace_is_given():
    dgd = render.dynamo_graph_deployment(build_plan({"sku": "gb300", "mode": "agg"}), "muse")
    trace = rt.mocker_profile.TraceShape(median_new_tokens=800, mean_context_tokens=6000)
    worker = rt.graph_processes(dgd, model_path="/snap", profile_path="/p.npz", http_host="127.0.0.1",
                                http_port=8000, python="py", trace=trace)[1]
    figures = rt.mocker_profile.PublishedFigures.from_annotations(dgd["metadata"]["annotations"])
    assert int(_flag(worker.argv, "--num-gpu-blocks-override")) == rt.mocker_profile.kv_blocks(figures, trace, 64)
    # without a trace the mocker keeps its own pool, which retracts requests at this model's contexts
    assert "--num-gpu-blocks-override" not in _processes(sku="gb300", mode="agg")[1].argv


def test_a_slowed_worker_runs_its_steps_at_the_given_ratio():
    container = {"command": ["python3", "-m", "dynamo.vllm", "--block-size", "32"]}
    assert rt.mocker_args("worker", container) == ["--engine-type", "vllm", "--block-size", "32"]
    assert _flag(rt.mocker_args("worker", container, speedup=0.5), "--speedup-ratio") == "0.5"
    assert rt.block_size(container) == 32 and rt.block_size({"command": ["vllm", "serve", "m"]}) == 64


def test_the_inotify_instance_limit_is_raised_for_the_frontends_file_discovery(tmp_path, caplog, monkeypatch):
    """At 128 instances per user a frontend started beside a few control planes ends its discovery stream at once and
    answers 404 for ever (measured in a `make test`); the rehearsal raises the limit, and says when it cannot."""
    limit = tmp_path / "max_user_instances"
    limit.write_text("128\n")
    assert rt.ensure_inotify_instances(1024, limit) == 1024 and limit.read_text().strip() == "1024"
    assert rt.ensure_inotify_instances(512, limit) == 1024            # never lowered
    assert rt.ensure_inotify_instances(1024, tmp_path / "absent") is None
    refused = tmp_path / "refused"
    refused.write_text("128\n")

    def not_permitted(self, *args, **kwargs):
        raise PermissionError("Operation not permitted")   # a container, or a user who is not root
    monkeypatch.setattr(type(refused), "write_text", not_permitted)
    assert rt.ensure_inotify_instances(1024, refused) == 128
    assert "cannot be raised" in caplog.text
