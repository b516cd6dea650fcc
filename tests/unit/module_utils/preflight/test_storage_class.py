"""The model cache's StorageClass: the named one, else the only ReadWriteMany one, else a clear refusal."""

from ansible_collections.inferops.dynamo.plugins.module_utils.preflight.storage_class import choose

RWX = ["nfs.csi.k8s.io", "efs.csi.aws.com"]
NFS = {"metadata": {"name": "shared-rwx"}, "provisioner": "nfs.csi.k8s.io"}
EFS = {"metadata": {"name": "efs"}, "provisioner": "efs.csi.aws.com"}
LOCAL = {"metadata": {"name": "local-rwo"}, "provisioner": "rancher.io/local-path"}


def test_the_only_shared_filesystem_class_is_chosen():
    assert choose([LOCAL, NFS], "", RWX, "c1") == {"name": "shared-rwx", "problem": ""}


def test_a_named_class_is_used_when_it_exists_even_without_a_known_provisioner():
    assert choose([LOCAL, NFS], "local-rwo", RWX, "c1") == {"name": "local-rwo", "problem": ""}


def test_a_named_class_that_does_not_exist_lists_the_available_ones():
    out = choose([LOCAL, NFS], "fast-nfs", RWX, "c1")
    assert out["name"] == ""
    assert out["problem"].startswith("StorageClass 'fast-nfs' does not exist on c1. Available: local-rwo, shared-rwx.")


def test_no_class_at_all_says_none():
    assert "Available: none." in choose([], "shared-rwx", RWX, "c1")["problem"]
    problem = choose([], "", RWX, "c1")["problem"]
    assert problem.startswith("No StorageClass on c1 can serve ReadWriteMany (found: none).")
    assert "-e storage_class=NAME" in problem


def test_no_shared_filesystem_names_every_class_with_its_provisioner():
    problem = choose([LOCAL], "", RWX, "c1")["problem"]
    assert "(found: local-rwo [rancher.io/local-path])" in problem


def test_several_shared_filesystems_ask_for_a_choice():
    out = choose([NFS, EFS], "", RWX, "c1")
    assert out == {"name": "", "problem": "Several StorageClasses can serve ReadWriteMany (shared-rwx, efs): "
                                          "choose one with -e storage_class=NAME."}


def test_classes_that_cannot_be_listed_trust_a_named_one_and_ask_for_one_otherwise():
    assert choose(None, "shared-rwx", RWX, "c1") == {"name": "shared-rwx", "problem": ""}
    assert "-e storage_class=NAME" in choose(None, "", RWX, "c1")["problem"]
