"""The kubectl anchor applies what the first deploy created, without what the servers set on it."""

from bench.control_node_cost import strip_server_fields


def test_a_claim_read_back_loses_its_binding_so_the_real_pv_controller_binds_it_afresh():
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
             "metadata": {"name": "shared-model-cache", "namespace": "cost", "uid": "u", "resourceVersion": "7",
                          "labels": {"app.kubernetes.io/part-of": "muse-spark"},
                          "annotations": {"pv.kubernetes.io/bind-completed": "yes",
                                          "pv.kubernetes.io/bound-by-controller": "yes",
                                          "volume.beta.kubernetes.io/storage-provisioner": "nfs.csi.k8s.io",
                                          "volume.kubernetes.io/storage-provisioner": "nfs.csi.k8s.io",
                                          "inferops.dynamo/fingerprint": "abc"}},
             "spec": {"volumeName": "pvc-1", "storageClassName": "shared-rwx", "accessModes": ["ReadWriteMany"]},
             "status": {"phase": "Bound"}}
    out = strip_server_fields(claim)
    assert out["metadata"]["annotations"] == {"inferops.dynamo/fingerprint": "abc"}
    assert out["metadata"]["labels"] == {"app.kubernetes.io/part-of": "muse-spark"}
    assert "volumeName" not in out["spec"] and "status" not in out
    assert out["spec"]["storageClassName"] == "shared-rwx"
