"""The Dynamo platform as a platform team installs it: the real operator's CRDs, then its platform chart rendered by
the real Helm (its RBAC and ClusterRoles, its configuration file, its webhooks with ``failurePolicy: Fail``, its
Deployment in ``dynamo-system`` with its own ServiceAccount, the PodMonitors it ships where the prometheus-operator's
CRDs are installed), applied to the cluster.

The operator's pod runs on a kwok node like any other; the pod runner (``standins/runner.py``) runs its container
as a process of the cluster's network namespace, from the binary ``make control-plane`` built from the operator's
source. Its admission webhooks are real: the API server calls them at the operator pod's address (the endpoint
routing ``--enable-aggregator-routing`` gives, there being no kube-proxy here), with the certificates the operator
provisions itself.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml

from . import build

HERE = Path(__file__).resolve().parent
RELEASE = "dynamo-platform"
NAMESPACE = "dynamo-system"
REHEARSAL_VALUES = HERE / "dynamo-platform-values.yaml"
# the operator chart's own image repository: the pod runner runs its /manager from the binary built from source
OPERATOR_IMAGE = "nvcr.io/nvidia/ai-dynamo/kubernetes-operator"
OPERATOR_COMMAND = "/manager"
FULLNAME = f"{RELEASE}-dynamo-operator"
OPERATOR_DEPLOYMENT = f"{FULLNAME}-controller-manager"
WEBHOOK_CONFIGURATIONS = (("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", f"{FULLNAME}-validating"),
                          ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", f"{FULLNAME}-mutating"))


@dataclass(frozen=True)
class PlatformOptions:
    grove: bool = False          # the operator's Grove gate (global.grove.enabled): DGDs become PodCliqueSets
    monitoring: bool = True      # the prometheus-operator's CRDs are installed: the chart ships its PodMonitors


def chart_values(options: PlatformOptions) -> dict:
    """The values Helm gives the operator component when the platform chart installs it: the platform chart's
    ``dynamo-operator`` section and its globals over the component's defaults, then the rehearsal's own choices
    (``dynamo-platform-values.yaml``)."""
    platform = yaml.safe_load((build.platform_chart().parents[1] / "values.yaml").read_text())
    values = dict(platform.get("dynamo-operator") or {})
    values["global"] = dict(platform.get("global") or {})
    ours = yaml.safe_load(REHEARSAL_VALUES.read_text()) or {}
    for key, value in ours.items():
        if isinstance(value, dict) and isinstance(values.get(key), dict):
            values[key] = {**values[key], **value}
        else:
            values[key] = value
    values["global"]["grove"] = {**(values["global"].get("grove") or {}), "enabled": options.grove}
    return values


def render(options: PlatformOptions, work_dir: Path) -> list[dict]:
    """``helm template`` of the operator component, as ``helm install -n dynamo-system dynamo-platform`` renders it."""
    helm = build.helm_binary()
    if not helm.is_file():
        raise RuntimeError(f"no helm in {helm.parent}: run `make control-plane`")
    values = work_dir / "dynamo-platform-values.yaml"
    values.parent.mkdir(parents=True, exist_ok=True)
    values.write_text(yaml.safe_dump(chart_values(options)))
    argv = [str(helm), "template", RELEASE, str(build.platform_chart()), "--namespace", NAMESPACE,
            "--values", str(values)]
    if options.monitoring:
        argv += ["--api-versions", "monitoring.coreos.com/v1"]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False,
                          env={"HOME": str(work_dir), "PATH": "/usr/bin:/bin",
                               "HELM_CACHE_HOME": str(work_dir / "helm"), "HELM_CONFIG_HOME": str(work_dir / "helm"),
                               "HELM_DATA_HOME": str(work_dir / "helm")})
    if proc.returncode != 0:
        raise RuntimeError(f"helm template of the Dynamo platform chart failed: {proc.stderr.strip()}")
    return [o for o in yaml.safe_load_all(proc.stdout) if o]


def as_installed(crd: dict) -> dict:
    """A CRD as the chart's crd-apply step installs it: a conversion webhook pointed at the release's webhook Service
    (the source names a kustomize default), its CA left for the operator to inject once its certificate exists."""
    client = ((((crd.get("spec") or {}).get("conversion") or {}).get("webhook") or {}).get("clientConfig") or {})
    if client.get("service"):
        client["service"].update(name=f"{FULLNAME}-webhook-service", namespace=NAMESPACE)
        client.pop("caBundle", None)
    return crd


def grove_crd_files(options: PlatformOptions) -> list[Path]:
    """Grove's CRDs, installed beside the operator where its Grove gate is on (the platform chart's grove subchart)."""
    return sorted(build.grove_crd_dir().glob("*.yaml")) if options.grove else []


def install(dyn, objects: list[dict]) -> None:
    """Apply the rendered chart: namespaced objects into the release namespace, as Helm does."""
    for obj in objects:
        api = dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
        ns = (obj["metadata"].get("namespace") or NAMESPACE) if api.namespaced else None
        if ns:
            obj["metadata"]["namespace"] = ns
        api.server_side_apply(body=obj, name=obj["metadata"]["name"], namespace=ns, field_manager="helm",
                              force_conflicts=True)


def webhooks_ready(dyn) -> bool:
    """Whether the operator injected its CA into both webhook configurations (it does once its certificate exists)."""
    for api_version, kind, name in WEBHOOK_CONFIGURATIONS:
        obj = dyn.resources.get(api_version=api_version, kind=kind).get(name=name).to_dict()
        if not all((w.get("clientConfig") or {}).get("caBundle") for w in obj.get("webhooks") or []):
            return False
    return True
