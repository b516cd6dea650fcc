"""pvc_change: an existing model cache PVC is adopted, grown or refused, never replaced or shrunk."""

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.render.pvc_change import (
    pvc_change,
    quantity_bytes,
)

RWX = {"metadata": {"name": "shared-rwx"}, "allowVolumeExpansion": True}
FIXED = {"metadata": {"name": "fixed-rwx"}, "allowVolumeExpansion": False}


def pvc(size="700Gi", sc="shared-rwx"):
    return {"metadata": {"name": "shared-model-cache"},
            "spec": {"storageClassName": sc, "resources": {"requests": {"storage": size}}}}


def test_no_pvc_yet_is_created_at_the_plan_size():
    assert pvc_change(None, "", 700, [RWX]) == {"action": "create", "size": "700Gi", "messages": []}


def test_same_or_smaller_need_keeps_the_live_size():
    assert pvc_change(pvc("800Gi"), None, 700, [RWX]) == {"action": "keep", "size": "800Gi", "messages": []}


def test_an_unnamed_class_adopts_whatever_class_the_pvc_has():
    assert pvc_change(pvc(sc="hand-made"), "", 700, [])["action"] == "keep"


def test_a_named_different_class_is_refused_with_the_way_out():
    out = pvc_change(pvc(), "local-rwo", 700, [RWX])
    assert out["action"] == "refuse"
    (msg,) = out["messages"]
    assert msg.startswith("[pvc-storage-class-immutable] PVC shared-model-cache exists on StorageClass 'shared-rwx'")
    assert "storage_class=shared-rwx" in msg and "purge_model_cache=true" in msg


def test_a_bigger_need_grows_an_expandable_class():
    out = pvc_change(pvc("700Gi"), None, 2100, [RWX])
    assert out["action"] == "grow" and out["size"] == "2100Gi"
    assert "grows from 700Gi to 2100Gi" in out["messages"][0]


def test_a_bigger_need_on_a_fixed_class_is_refused():
    out = pvc_change(pvc("700Gi", "fixed-rwx"), None, 2100, [FIXED])
    assert out["action"] == "refuse"
    assert out["messages"][0].startswith("[pvc-cannot-grow]")
    assert "does not allow volume expansion" in out["messages"][0]


def test_every_broken_rule_is_reported_at_once():
    out = pvc_change(pvc("700Gi", "fixed-rwx"), "other", 2100, [FIXED])
    assert [m.split("]")[0] + "]" for m in out["messages"]] == ["[pvc-storage-class-immutable]", "[pvc-cannot-grow]"]


@pytest.mark.parametrize(("q", "n"), [("533Gi", 533 * 2**30), ("1T", 10**12), ("1000", 1000), ("1.5Ti", int(1.5 * 2**40))])
def test_quantity_bytes(q, n):
    assert quantity_bytes(q) == n
