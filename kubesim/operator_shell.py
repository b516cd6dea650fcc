"""kubesim's shell of the Dynamo operator: a DynamoGraphDeployment's component pods and frontend
Service, from the operator's rules (standins/operator_rules.py), and ComputeDomains ready."""

from __future__ import annotations

import logging

from .objects import CD, DGD, PODS, cluster_ip
from .standins import operator_rules as operator
from .store import now, rand_suffix

log = logging.getLogger("kubesim.controllers")


class OperatorShell:
    """A part of :class:`kubesim.controllers.Controllers` (a mixin): it uses the controllers' ``make_pod``,
    ``owned_pods``, ``store``."""

    # ------------------------------------------------------------------ ComputeDomain
    def reconcile_computedomains(self) -> None:
        for cd in self.store.items(CD):
            m = cd["metadata"]
            tmpl = operator.compute_domain_claim_template(cd)
            if tmpl and self.store.raw_get("resource.k8s.io/resourceclaimtemplates", m["namespace"],
                                           tmpl["metadata"]["name"]) is None:
                self.store.raw_put("resource.k8s.io/resourceclaimtemplates", tmpl)
            if (cd.get("status") or {}).get("status") != "Ready":
                self.store.raw_set_status(CD, m["namespace"], m["name"], dict(operator.COMPUTE_DOMAIN_READY))

    # ------------------------------------------------------------------ DGDs
    def reconcile_dgds(self) -> None:
        """The Dynamo operator: decisions shared with the real backend's stand-in (standins/operator_rules.py)."""
        for dgd in self.store.items(DGD):
            m = dgd["metadata"]
            ns, name = m["namespace"], m["name"]
            comps = {c.name: c for c in operator.components(dgd)}
            plan = operator.reconcile(dgd, [operator.pod_view(p) for p in self.owned_pods(dgd)], now())
            for pname in plan.delete:
                self.store.raw_delete(PODS, ns, pname)
            for c in plan.create:
                self.make_pod(dgd, f'{c["name_prefix"]}-{rand_suffix()}'[:63], comps[c["component"]].template,
                              c["labels"], c["annotations"])
            if plan.status != dgd.get("status"):
                self.store.raw_set_status(DGD, ns, name, plan.status)
            if plan.frontend_service:
                self.ensure_frontend_service(plan.frontend_service)

    def ensure_frontend_service(self, svc: dict) -> None:
        m = svc["metadata"]
        if self.store.raw_get("/services", m["namespace"], m["name"]) is not None:
            return
        ip = cluster_ip(m["name"])
        self.store.raw_put("/services", {**svc, "spec": {
            **svc["spec"], "clusterIP": ip, "clusterIPs": [ip], "sessionAffinity": "None",
            "internalTrafficPolicy": "Cluster", "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack"},
            "status": {"loadBalancer": {}}})
