"""The DynamoWorkerMetadata a worker pod gets: its own model cards from its graph's file discovery (the wrapper the
1.5.1 planner reads, with the engine's max_num_batched_tokens), owned by the pod, once."""

import json

from kubesim.standins import worker_metadata as wm


def _card(tmp_path, name, ip, component):
    mdc = tmp_path / "v1" / "mdc"
    mdc.mkdir(parents=True, exist_ok=True)
    wrapper = {"type": "Model", "component": component, "endpoint": "generate", "instance_id": 7,
               "card_json": {"model_info": {"hf_config_json": {"path": f"http://{ip}:9090/v1/metadata/x/config.json"}},
                             "runtime_config": {"max_num_batched_tokens": 8192}}}
    (mdc / name).write_text(json.dumps(wrapper))
    return wrapper


class Kube:
    def __init__(self):
        self.created = []

    def served(self, api_version, kind):
        return True

    def create(self, obj):
        self.created.append(obj)


POD = {"metadata": {"name": "d-decodeworker-abc12", "namespace": "muse", "uid": "u1"}}


def test_a_worker_publishes_only_its_own_cards_owned_by_its_pod_once(tmp_path):
    mine = _card(tmp_path, "ns%2Fbackend%2Fgenerate%2F1", "10.244.0.7", "backend")
    _card(tmp_path, "ns%2Fbackend%2Fgenerate%2F2", "10.244.0.70", "backend")       # another pod's
    (tmp_path / "v1" / "mdc" / "half-written").write_text("{")
    kube = Kube()
    publisher = wm.WorkerMetadata(kube)
    publisher.publish(POD, tmp_path, "10.244.0.7")
    publisher.publish(POD, tmp_path, "10.244.0.7")
    (obj,) = kube.created
    assert obj["metadata"]["name"] == POD["metadata"]["name"]                 # the planner matches <dgd>-...
    assert obj["metadata"]["ownerReferences"][0]["uid"] == "u1"
    assert obj["spec"]["data"]["model_cards"] == {"ns%2Fbackend%2Fgenerate%2F1": mine}


def test_nothing_is_published_before_the_engine_registered(tmp_path):
    kube = Kube()
    wm.WorkerMetadata(kube).publish(POD, tmp_path, "10.244.0.7")
    assert kube.created == []
