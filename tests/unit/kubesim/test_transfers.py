"""Configured transfer durations of the rehearsal node side (both backends): image pulls per node, the
trace staging hold, and which commands count as a model download."""

import time

from kubesim.standins import download, transfers

ENGINE = "nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.5.1"


def pod(node: str, image: str = ENGINE, command=("sh", "-c", "exit 0"), env=None) -> dict:
    return {"metadata": {"name": "p", "uid": "u"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": image, "command": list(command),
                                                       "env": env or []}]}}


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_an_engine_image_pulls_once_per_node_and_later_pods_wait_only_for_the_rest():
    clock = Clock()
    images = transfers.NodeImages(40, ("aiperf", "curl", "python"), clock=clock)
    assert images.remaining(pod("n1")) == (40, [ENGINE])
    clock.now += 15
    assert images.remaining(pod("n1")) == (25, [ENGINE])   # joins the pull under way
    assert images.remaining(pod("n2"))[0] == 40            # another node pulls on its own
    assert images.present("n1") == []
    clock.now += 25
    assert images.remaining(pod("n1")) == (0.0, [])
    assert images.present("n1") == [ENGINE]
    assert transfers.node_status_images([ENGINE])[0]["names"] == [ENGINE]


def test_utility_images_and_the_download_pull_at_once():
    images = transfers.NodeImages(30, ("aiperf", "curl", "python"))
    assert images.remaining(pod("n1", "nvcr.io/nvidia/ai-dynamo/aiperf:0.13.0"))[0] == 0
    assert images.remaining(pod("n1", "busybox", ("sh", "-c", "hf download org/m --max-workers 16")))[0] == 0


def test_instant_pulls_are_still_listed_on_the_node():
    images = transfers.NodeImages(0, ())
    assert images.remaining(pod("n1")) == (0.0, [])
    assert images.present("n1") == [ENGINE]


def test_trace_staging_is_held_for_its_configured_time():
    staging = pod("n1", "curlimages/curl:8.11.1", env=[{"name": "TRACE_URL", "value": "file:///t"}])
    assert transfers.trace_hold(staging, time.time(), 5)
    assert not transfers.trace_hold(staging, time.time() - 6, 5)
    assert not transfers.trace_hold(pod("n1"), time.time(), 5)


def test_download_commands_of_every_source_are_recognised():
    assert download.download_repos(["sh", "-c", 'hf download org/m "$@" --max-workers 8']) == ["org/m"]
    s3 = 'aws s3 sync "s3://w/p/hub/models--meta-models--Muse-NVFP4" "/model/hub/models--meta-models--Muse-NVFP4" --x'
    assert download.is_download(s3) and download.download_repos(["sh", "-c", s3]) == ["meta-models/Muse-NVFP4"]
    assert not download.is_download("hf cache verify org/m")


def test_the_collections_download_job_names_its_repositories_as_arguments():
    """The script is constant text; the repositories (and their pinned revisions) are its arguments."""
    argv = ["sh", "-c", 'for spec in "$@"; do hf download "$repo"; done', "model-download", "org/m@" + "a" * 40, "o/d"]
    assert download.is_download(" ".join(argv))
    assert download.download_specs(argv) == {"org/m": "a" * 40, "o/d": None}


def test_the_soonest_pull_under_way_is_when_the_kubelet_looks_again():
    clock = Clock()
    images = transfers.NodeImages(40, ("aiperf", "curl", "python"), clock=clock)
    assert images.next_pull_done() is None
    images.remaining(pod("n1"))
    clock.now += 10
    images.remaining(pod("n2"))
    assert images.next_pull_done() == 1040.0
    clock.now += 30
    assert images.next_pull_done() == 1050.0
    clock.now += 10
    assert images.next_pull_done() is None
