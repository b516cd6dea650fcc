"""The NVIDIA DRA driver's ComputeDomain controller, as a client of a real API server: what cannot run here (it needs
GPUs and IMEX daemons). A ComputeDomain gets the ResourceClaimTemplate its workers' pods claim, and is Ready."""

from __future__ import annotations

from . import operator_rules as op

CD_API = ("resource.nvidia.com/v1beta1", "ComputeDomain")


class ComputeDomainDriver:
    def __init__(self, kube):
        self.kube = kube

    def reconcile(self) -> None:
        for cd in self.kube.list(*CD_API):
            m = cd["metadata"]
            tmpl = op.compute_domain_claim_template(cd)
            if tmpl and not self.kube.get("resource.k8s.io/v1", "ResourceClaimTemplate", tmpl["metadata"]["name"],
                                          m["namespace"]):
                self.kube.create(tmpl)
            if (cd.get("status") or {}).get("status") != "Ready":
                self.kube.patch(*CD_API, m["name"], {"status": dict(op.COMPUTE_DOMAIN_READY)}, namespace=m["namespace"],
                                subresource="status")
