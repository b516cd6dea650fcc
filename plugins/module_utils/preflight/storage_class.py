# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Which StorageClass a new model cache PVC uses: the one named, else the cluster's only ReadWriteMany one.

Every worker mounts the same cache, so the class must serve ReadWriteMany; Kubernetes does not say which
classes can, so the provisioner decides (the list of shared-filesystem provisioners is the preflight role's
``preflight_rwx_provisioners``).
"""

from __future__ import annotations

SHARED_FILESYSTEMS = "NFS, CephFS, EFS, Filestore, Azure Files, Lustre..."


def choose(classes: list[dict] | None, named: str, rwx_provisioners: list[str], cluster: str) -> dict:
    """``{"name": <class>, "problem": ""}``, or ``{"name": "", "problem": <what to do>}``.

    ``classes`` is None when they could not be listed (no permission): a named class is then taken on trust.
    """
    if classes is None:
        if named:
            return {"name": named, "problem": ""}
        return {"name": "", "problem": f"The StorageClasses of {cluster} cannot be listed: name the ReadWriteMany "
                                       "class of the model cache with -e storage_class=NAME."}
    names = [c["metadata"]["name"] for c in classes]
    if named:
        if named in names:
            return {"name": named, "problem": ""}
        return {"name": "", "problem": (
            f"StorageClass '{named}' does not exist on {cluster}. Available: {', '.join(names) or 'none'}. "
            "The model cache needs a ReadWriteMany class (every worker mounts the same PVC).")}
    suitable = [c["metadata"]["name"] for c in classes if c.get("provisioner") in rwx_provisioners]
    if len(suitable) == 1:
        return {"name": suitable[0], "problem": ""}
    if suitable:
        return {"name": "", "problem": (
            f"Several StorageClasses can serve ReadWriteMany ({', '.join(suitable)}): choose one with "
            "-e storage_class=NAME.")}
    found = ", ".join(f"{c['metadata']['name']} [{c.get('provisioner', '')}]" for c in classes) or "none"
    return {"name": "", "problem": (
        f"No StorageClass on {cluster} can serve ReadWriteMany (found: {found}). Install a shared filesystem "
        f"({SHARED_FILESYSTEMS}) and pass -e storage_class=NAME.")}
