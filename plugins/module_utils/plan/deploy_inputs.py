# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The deploy's inputs that are not the target's (where it goes, where the weights come from, which images the
Jobs run, who may reach the endpoint), checked by the plan with the target's inputs, every broken one at once.

Each is a free-text value from extra vars, an inventory or an AWX survey; the plan refuses any that is not of
its kind's grammar (plan.grammar) before anything is rendered. Pure Python: no Ansible imports.
"""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.module_utils.plan import grammar
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError
from ansible_collections.inferops.dynamo.plugins.module_utils.render import model_transfer

# The settings the plan checks, by their public names, and each one's kind.
IMAGES = ("model_cache_download_image", "model_cache_s3_image", "model_cache_trace_image", "benchmark_image")
URLS = ("prometheus_url",)
FETCH_URLS = ("model_cache_trace_url",)
NAMES = ()
# model_cache_source's text fields and their kinds (its structure is model_transfer.model_source's).
SOURCE_FIELDS = {"bucket": "s3_uri", "endpoint": "url", "secret": "dns_subdomain", "ca_configmap": "dns_subdomain",
                 "ca_key": "label_value", "region": "region", "claim": "dns_subdomain"}


# The model_cache_source types that fetch the weights from a Hub (huggingface.co, or a mirror of it through
# HF_ENDPOINT) at a revision: there an unpinned repository is a branch resolved at download time, which can move.
# An s3 bucket is copied as it is, and a pvc is adopted as it is: the collection chooses no revision there (the
# bytes are whatever the operator put in the bucket or claim), so no pin is asked for; the revision history still
# records the commit the copied or adopted cache holds.
HUB_SOURCES = ("hub", "mirror")


def _blank(value) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def fetches_from_hub(raw_source) -> bool:
    """Whether the model_cache_source ``raw_source`` (unset: the Hub) downloads the weights from a Hub. A source
    the plan refuses counts by its type as written (unknown or unreadable: the Hub, the default)."""
    if _blank(raw_source) or raw_source == {}:
        return True
    kind = raw_source.get("type") if isinstance(raw_source, dict) else raw_source
    kind = "hub" if _blank(kind) or not isinstance(kind, str) else kind.strip()
    return kind in HUB_SOURCES or kind not in model_transfer.SOURCE_TYPES


def _source(raw, parallelism, retries) -> list[PlanError]:
    errors: list[PlanError] = []
    said = ""
    try:
        source = model_transfer.model_source(raw, parallelism, retries)
    except model_transfer.SourceError as exc:
        errors += [PlanError(p + ".", "invalid-model-cache-source", list(model_transfer.SOURCE_TYPES),
                             inputs=["model_cache_source"]) for p in exc.problems]
        source, said = (raw if isinstance(raw, dict) else {}), " ".join(exc.problems)
    for key, kind in SOURCE_FIELDS.items():
        value = source.get(key)
        if not _blank(value) and f"model_cache_source.{key} " not in said:   # one refusal a field
            errors += [e for e in [grammar.refusal(f"model_cache_source.{key}", kind, str(value).strip())] if e]
    return errors


def clients_refusals(raw) -> list[PlanError]:
    """network_policy_clients: who may call the endpoint, as NetworkPolicy peers: a list of mappings with
    ``namespace`` (a name) and/or ``pod_labels`` (label key: value); an empty list lets no other pod in."""
    form = "[{namespace: <name>, pod_labels: {<key>: <value>}}, ...]"
    if not isinstance(raw, list) or not all(isinstance(c, dict) and c and set(c) <= {"namespace", "pod_labels"}
                                            for c in raw):
        return [PlanError(f"network_policy_clients must be a list of {{namespace, pod_labels}} mappings, got "
                          f"{raw!r:.120}.", "invalid-network-policy-clients", [form],
                          inputs=["network_policy_clients"])]
    errors = []
    for n, client in enumerate(raw):
        if "namespace" in client:
            errors.append(grammar.refusal(f"network_policy_clients[{n}].namespace", "dns_label", client["namespace"]))
        labels = client.get("pod_labels", {})
        if not isinstance(labels, dict):
            errors.append(PlanError(f"network_policy_clients[{n}].pod_labels must be a mapping.",
                                    "invalid-network-policy-clients", [form], inputs=["network_policy_clients"]))
            continue
        for key, value in labels.items():
            errors.append(grammar.refusal(f"network_policy_clients[{n}].pod_labels key", "label_key", key))
            errors.append(grammar.refusal(f"network_policy_clients[{n}].pod_labels.{key}", "label_value",
                                          "" if value is None else str(value)))
    return [e for e in errors if e]


def refusals(namespace, storage_class=None, settings: dict | None = None) -> list[PlanError]:
    """Every broken deploy input: the namespace, the storage class and ``settings`` (the public names above,
    model_cache_source and benchmark_aiperf_extra_args; unset ones are skipped)."""
    settings = settings or {}
    errors = [grammar.refusal("k8s_namespace", "dns_label", namespace)]
    if not _blank(storage_class):
        errors.append(grammar.refusal("storage_class", "dns_subdomain", storage_class))
    for names, kind in ((IMAGES, "image"), (URLS, "url"), (FETCH_URLS, "fetch_url"), (NAMES, "dns_label")):
        errors += [grammar.refusal(name, kind, settings[name]) for name in names if not _blank(settings.get(name))]
    errors = [e for e in errors if e]
    if not _blank(settings.get("model_cache_source")):
        parallelism, retries = (settings.get("model_cache_download_parallelism"),
                                settings.get("model_cache_download_retries"))
        errors += _source(settings["model_cache_source"], 1 if _blank(parallelism) else parallelism,
                          model_transfer.DOWNLOAD_RETRIES if _blank(retries) else retries)
    if not _blank(settings.get("benchmark_aiperf_extra_args")):
        try:
            grammar.argument_list("benchmark_aiperf_extra_args", settings["benchmark_aiperf_extra_args"])
        except PlanError as exc:
            errors.append(exc)
    return errors
