"""A wait that ends when the workload changes: the collection's waiter (a watch of one object from the
resourceVersion of the last look) against kubesim's watch and the real kube-apiserver's, which must agree."""

from __future__ import annotations

import threading
import time

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import waiter

pytestmark = pytest.mark.cluster


def _configmap(dyn, ns: str, name: str):
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    other = cms.create(namespace=ns, body={"metadata": {"name": f"{name}-other"}, "data": {"k": "0"}})
    created = cms.create(namespace=ns, body={"metadata": {"name": name}, "data": {"k": "0"}})
    return cms, created.metadata.resourceVersion, other


def _wait(api, ns: str, name: str, rv: str, seconds: float) -> tuple[bool, float]:
    start = time.monotonic()
    changed = waiter.wait_for_change(api, "v1", "configmaps", ns, name, rv, seconds)
    return changed, time.monotonic() - start


def test_the_wait_ends_at_the_objects_change_not_at_the_interval(backend_cluster, backend_dynamic, backend_namespace):
    ns, name = backend_namespace, "watched"
    cms, rv, _ = _configmap(backend_dynamic, ns, name)
    api = kc.get_api({"kubeconfig": str(backend_cluster.kubeconfig)})

    # nothing changes: the whole interval (an object that was there before the resourceVersion is not news)
    changed, took = _wait(api, ns, name, rv, 2.0)
    assert not changed and 1.9 <= took < 3.5, took

    # another object of the namespace changes: still the whole interval
    timer = threading.Timer(0.5, lambda: cms.patch(namespace=ns, name=f"{name}-other", body={"data": {"k": "1"}}))
    timer.start()
    changed, took = _wait(api, ns, name, rv, 3.0)
    timer.join()
    assert not changed and took >= 2.9, took

    # the object changes after 1 s: the wait ends then, well before the 5 s interval
    timer = threading.Timer(1.0, lambda: cms.patch(namespace=ns, name=name, body={"data": {"k": "1"}}))
    timer.start()
    changed, took = _wait(api, ns, name, rv, 5.0)
    timer.join()
    assert changed and 0.9 <= took < 2.5, took

    # a change made before the watch, after the look's resourceVersion, is not missed
    changed, took = _wait(api, ns, name, rv, 5.0)
    assert changed and took < 1.5, took
