"""When kubesim's reconcile loop looks again: a pod due to turn Ready or to exit is seen then, not up to an
interval later (the controller-bound rollout bench's clusters answer at once), and a kubelet change of phase or
readiness is one the Job controller and the operator must see in the next pass."""

from pathlib import Path

from kubesim.pod_lifecycle import PodRuntime, next_due, phase_and_readiness


def runtime(kind: str, started: float, **fields) -> PodRuntime:
    return PodRuntime("u", "ns", "p", kind, Path("/dev/null"), started=started, **fields)


def test_a_loading_worker_is_due_when_its_ready_time_comes():
    assert next_due([runtime("server", 100.0)], ready_seconds=1.0, now=100.2) == 101.0


def test_a_ready_worker_a_past_due_one_and_a_crash_looping_one_are_not_waited_for():
    loaded = runtime("server", 100.0, progress=100)
    held = runtime("server", 90.0)          # past its time and still not Ready: held back, never-ready, crash loop
    assert next_due([loaded, held], ready_seconds=1.0, now=100.2) is None


def test_a_download_or_simulated_container_is_due_when_it_exits_and_the_soonest_wins():
    download = runtime("download", 100.0, duration=30.0)
    simulated = runtime("sim", 100.0, duration=1.0)
    assert next_due([download, simulated], ready_seconds=60.0, now=100.5) == 101.0
    assert next_due([download], ready_seconds=60.0, now=100.5) == 130.0


def test_a_container_past_its_end_and_a_process_are_not_waited_for():
    exited = runtime("sim", 100.0, duration=0.5, exit_code=1)     # its exit code is known from the start
    process = runtime("exec", 100.0)     # a real process: its exit is polled, it has no known end
    assert next_due([exited, process], ready_seconds=1.0, now=100.6) is None
    assert next_due([exited], ready_seconds=1.0, now=100.1) == 100.5


def test_phase_and_readiness_is_what_the_job_controller_and_the_operator_read():
    running = {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}]}}
    ready = {"status": {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"},
                                                           {"type": "Ready", "status": "True"}]}}
    assert phase_and_readiness(running) == ("Running", False)
    assert phase_and_readiness(ready) == ("Running", True)
    assert phase_and_readiness(None) == (None, False)
    assert phase_and_readiness({"status": {"phase": "Succeeded"}}) == ("Succeeded", False)
