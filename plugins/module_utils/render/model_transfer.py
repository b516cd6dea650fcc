# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The Jobs that move bytes before a worker can start: the model download (from the Hub, a Hub mirror, an
S3-compatible bucket, or an existing claim adopted as it is) and the pre-pull of the runtime image on the
SKU's nodes.

Facts of the Hugging Face client, checked against huggingface_hub 1.16.4 (its CLI's ``--help`` and
source): ``hf download REPO [FILENAMES]... --max-workers N`` (default 8); ``HF_XET_HIGH_PERFORMANCE=1``
(read by huggingface_hub's constants and by hf_xet); ``HF_HUB_ENABLE_HF_TRANSFER`` is deprecated there
(hf_transfer is no longer used; it only warns), so it is not set; a file already in the cache is never
fetched again, an HTTP transfer resumes from its ``.incomplete`` part with a Range request, and Xet
reuses the chunks already in its chunk cache (``HF_HOME/xet``, on the PVC here); ``hf cache verify
REPO`` checks every cached file against the Hub's checksums (from huggingface_hub 1.1.0 on; 1.0.0 and
0.x have no such command); ``HF_ENDPOINT`` points the client at a mirror; httpx and hf_xet both honour
``SSL_CERT_FILE`` for a private CA.
"""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.module_utils import naming
from ansible_collections.inferops.dynamo.plugins.module_utils.render import pod_security

DOWNLOAD_RETRIES = 3

DOWNLOAD_JOB = "model-download"
# The AIPerf image the benchmark pulls anyway carries the client: aiperf 0.13.0 requires
# huggingface-hub>=0.34,<2.0 (the `hf` CLI) and transformers. Nothing is installed at run time.
DOWNLOAD_IMAGE = "nvcr.io/nvidia/ai-dynamo/aiperf:0.13.0"
S3_IMAGE = "amazon/aws-cli:2.17.0"
SOURCE_TYPES = ("hub", "mirror", "s3", "pvc")
CA_DIR = "/etc/inferops/ca"
MAX_NAME = 63
_FIELDS = {
    "hub": set(),
    "mirror": {"endpoint", "ca_configmap", "ca_key"},
    "s3": {"bucket", "endpoint", "secret", "region", "ca_configmap", "ca_key"},
    "pvc": {"claim"},
}
_REQUIRED = {"mirror": {"endpoint"}, "s3": {"bucket", "secret"}, "pvc": {"claim"}}
# The workers write their compile caches here, beside hub/; made by the download so that its (non-root) owner's
# group, which a non-root server runs in too, may write it.
_COMPILE_CACHE = 'mkdir -p "$MODEL_MOUNT/compile-cache" && chmod g+rwxs "$MODEL_MOUNT/compile-cache"'



class SourceError(ValueError):
    """Every problem of a model_cache_source at once."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems))


def model_source(raw, parallelism: int = 1, retries: int = DOWNLOAD_RETRIES) -> dict:
    """``model_cache_source`` normalised (``None`` or ``{}`` is the Hub), or SourceError naming every broken
    field, and the download settings that do not fit it, with the valid choices."""
    if raw in (None, "", {}):
        raw = {"type": "hub"}
    if isinstance(raw, str):
        raw = {"type": raw}
    if not isinstance(raw, dict):
        raise SourceError([f"model_cache_source must be a mapping with a type ({', '.join(SOURCE_TYPES)}), "
                           f"got {type(raw).__name__}"])
    kind = str(raw.get("type") or "hub")
    if kind not in SOURCE_TYPES:
        raise SourceError([f"model_cache_source.type '{kind}' is not valid; valid: {', '.join(SOURCE_TYPES)}"])
    problems = []
    unknown = sorted(set(raw) - {"type"} - _FIELDS[kind])
    if unknown:
        problems.append(f"model_cache_source type {kind} takes no {', '.join(unknown)}"
                        f"; valid: {', '.join(sorted(_FIELDS[kind])) or 'no other field'}")
    missing = sorted(f for f in _REQUIRED.get(kind, ()) if not str(raw.get(f) or "").strip())
    if missing:
        problems.append(f"model_cache_source type {kind} needs {', '.join(missing)}")
    source = {"type": kind, **{k: str(v).strip() for k, v in raw.items() if k != "type" and v not in (None, "")}}
    for key in ("endpoint",):
        if key in source and not source[key].startswith(("https://", "http://")):
            problems.append(f"model_cache_source.{key} '{source[key]}' must be an http(s) URL")
    if "bucket" in source and not source["bucket"].startswith("s3://"):
        problems.append(f"model_cache_source.bucket '{source['bucket']}' must be an s3:// URL (s3://bucket/prefix)")
    if "ca_configmap" in source:
        source.setdefault("ca_key", "ca.crt")
    if int(parallelism) > 1 and kind not in ("hub", "mirror"):
        problems.append(f"model_cache_download_parallelism={parallelism} splits the shards of a Hub download; "
                        f"a {kind} source takes 1")
    if int(retries) < 0:
        problems.append(f"model_cache_download_retries={retries} must be 0 (fail at the first failed pod) or more")
    if problems:
        raise SourceError(problems)
    return source


def _cache_dir(repo: str) -> str:
    return "models--" + repo.replace("/", "--")


# The scripts below are constant text: every value reaches them as a positional argument (each repository as
# org/name@revision, which the plan checked against the Hub's grammar) or from the environment, never pasted in.
_EACH_REPO = "\n".join([
    'for spec in "$@"; do',
    'repo="${spec%%@*}"; revision=main',
    'case "$spec" in *@*) revision="${spec#*@}" ;; esac',
    'cache_dir="$MODEL_MOUNT/hub/models--$(printf %s "$repo" | sed \'s#/#--#\')"',
])
# What the collection records in the revision history: the commit the download got (a pinned revision is that
# commit; a branch is resolved by the client into refs/<branch>).
_REPORT_COMMIT = ('commit="$(cat "$cache_dir/refs/$revision" 2>/dev/null || printf %s "$revision")"; '
                  'echo "model-download: $repo at $commit"')


def _shard_picker() -> str:
    """The files of a repository this pod fetches: every Nth of the sorted listing, N pods of an Indexed Job."""
    return "\n".join([
        "shard_files() {",
        "python3 - \"$1\" \"$2\" <<'PY'",
        "import os, sys",
        "from huggingface_hub import HfApi",
        "files = sorted(HfApi().list_repo_files(sys.argv[1], revision=sys.argv[2]))",
        'index, count = int(os.environ["JOB_COMPLETION_INDEX"]), int(os.environ["DOWNLOAD_PODS"])',
        "print('\\n'.join(f for n, f in enumerate(files) if n % count == index))",
        "PY",
        "}",
    ])


_VERIFY_CHECK = ('hf cache verify --help >/dev/null 2>&1 || { echo "model-download: the hf CLI of this image has no '
                 "'hf cache verify' (huggingface_hub >= 1.1.0 has it): set model_cache_download_image to an image "
                 'that has it, or model_cache_download_verify=false" >&2; exit 3; }')


def _hub_script(pods: int, verify: bool) -> str:
    lines = ["set -eu"]
    if verify:
        lines.append(_VERIFY_CHECK)
    if pods > 1:
        lines += [_shard_picker(), 'echo "model-download: pod $JOB_COMPLETION_INDEX of $DOWNLOAD_PODS"']
    lines.append(_EACH_REPO)
    if pods > 1:
        lines += ['files="$(shard_files "$repo" "$revision")"',
                  # one file name a line (the Hub's names have no newline); no glob is expanded
                  'set -f; IFS="$(printf \'\\n_\')"; IFS="${IFS%_}"; set -- $files; set +f; unset IFS',
                  'if [ $# -gt 0 ]; then hf download "$repo" "$@" --revision "$revision" '
                  '--max-workers "$DOWNLOAD_WORKERS"; fi']
    else:
        lines.append('hf download "$repo" --revision "$revision" --max-workers "$DOWNLOAD_WORKERS"')
    if verify:
        lines.append('hf cache verify "$repo" --revision "$revision"')
    lines += [_REPORT_COMMIT, "done", _COMPILE_CACHE, "echo model-download complete"]
    return "\n".join(lines)


def _s3_script() -> str:
    return "\n".join([
        "set -eu",
        "export AWS_CONFIG_FILE=/tmp/aws-config",
        # The CLI's own parallel transfer; sync skips objects already present with the same size and time,
        # so a pod started again after a failure carries on where the last one stopped.
        "printf '[default]\\ns3 =\\n  max_concurrent_requests = 64\\n  multipart_chunksize = 64MB\\n' > \"$AWS_CONFIG_FILE\"",
        _EACH_REPO,
        'folder="${cache_dir##*/}"',
        'aws s3 sync "$S3_BUCKET/hub/$folder" "$cache_dir" --only-show-errors ${S3_ENDPOINT:+--endpoint-url "$S3_ENDPOINT"}',
        'test -s "$cache_dir/refs/main" || { echo "model-download: $S3_BUCKET/hub/$folder holds no Hugging Face cache '
        '(refs/main missing)" >&2; exit 2; }',
        _REPORT_COMMIT,
        "done",
        _COMPILE_CACHE,
        "echo model-download complete",
    ])


def _adopt_script() -> str:
    return "\n".join([
        "set -eu",
        _EACH_REPO,
        'test -d "$cache_dir/snapshots" || { echo "model-download: claim $CACHE_CLAIM has no $repo (expected the '
        'Hugging Face cache layout hub/${cache_dir##*/}/snapshots at its root)" >&2; exit 2; }',
        _REPORT_COMMIT,
        "done",
        'echo "model-download complete: claim $CACHE_CLAIM adopted as it is"',
    ])


def download_specs(plan: dict) -> list[str]:
    """Each repository the download fetches, as org/name@revision where the plan pins one."""
    revisions = plan["model_cache"].get("revisions") or {}
    return [f"{repo}@{revisions[repo]}" if repo in revisions else repo for repo in plan["model_cache"]["downloads"]]


def download_job(plan: dict, ns: str, meta: dict, cache_volume: dict, *, source: dict | None = None,
                 image: str = DOWNLOAD_IMAGE, s3_image: str = S3_IMAGE, parallelism: int = 1,
                 max_workers: int = 16, verify: bool = True, retries: int = DOWNLOAD_RETRIES) -> dict:
    """The model-download Job for ``source`` (see model_source). ``meta`` is its metadata, ``cache_volume``
    the PVC volume it writes into (render supplies both, as for every object). ``retries``: pods started
    again after a failed one, per download pod (a claim adopted as it is has nothing to retry)."""
    source = model_source(source, parallelism, retries)
    mount = plan["model_cache"]["mount_path"]
    pods = max(1, int(parallelism))
    env = [{"name": "HF_HOME", "value": mount}, {"name": "MODEL_MOUNT", "value": mount}]
    env_from = [{"secretRef": {"name": plan["model_cache"]["secret"]}}]
    mounts = [{"name": "model-cache", "mountPath": mount}]
    volumes = [cache_volume]
    kind = source["type"]
    if kind in ("hub", "mirror"):
        env += [{"name": "HF_XET_HIGH_PERFORMANCE", "value": "1"},
                {"name": "DOWNLOAD_WORKERS", "value": str(int(max_workers))}]
        script = _hub_script(pods, verify)
        if kind == "mirror":
            env.append({"name": "HF_ENDPOINT", "value": source["endpoint"]})
        if pods > 1:
            env.append({"name": "DOWNLOAD_PODS", "value": str(pods)})
    elif kind == "s3":
        image = s3_image
        script = _s3_script()
        env.append({"name": "S3_BUCKET", "value": source["bucket"].rstrip("/")})
        env_from = [{"secretRef": {"name": source["secret"]}}]
        if source.get("endpoint"):
            env.append({"name": "S3_ENDPOINT", "value": source["endpoint"]})
        if source.get("region"):
            env.append({"name": "AWS_DEFAULT_REGION", "value": source["region"]})
    else:
        script = _adopt_script()
        env.append({"name": "CACHE_CLAIM", "value": source["claim"]})
        env_from = []
    if source.get("ca_configmap"):
        ca = f"{CA_DIR}/{source['ca_key']}"
        env += [{"name": "SSL_CERT_FILE", "value": ca}]
        if kind == "s3":
            env.append({"name": "AWS_CA_BUNDLE", "value": ca})
        mounts.append({"name": "ca-bundle", "mountPath": CA_DIR, "readOnly": True})
        volumes.append({"name": "ca-bundle", "configMap": {"name": source["ca_configmap"]}})
    container = {
        "name": "model-download",
        "image": image,
        # sh -c SCRIPT NAME ARGS: the repositories are the script's "$@", each one argument
        "command": ["sh", "-c", script, DOWNLOAD_JOB],
        "args": download_specs(plan),
        "env": env,
        "securityContext": pod_security.restricted_container(),
        "volumeMounts": mounts,
    }
    if env_from:
        container["envFrom"] = env_from
    spec: dict = {
        # A failed pod is replaced and carries on from what is already on the PVC. Three retries by default: the
        # Job controller waits 10 s, 20 s, 40 s between them, so a download that cannot succeed (a wrong token,
        # a missing repository) fails in about a minute and a half instead of the ~11 minutes of six.
        "backoffLimit": int(retries) if kind in ("hub", "mirror", "s3") else 0,
        "completions": pods,
        "parallelism": pods,
        "template": {
            "metadata": {"labels": dict(meta["labels"])},
            # the token comes from its Secret, never from the API: no ServiceAccount token
            "spec": {"restartPolicy": "Never", "automountServiceAccountToken": False,
                     "securityContext": pod_security.restricted_pod(), "containers": [container], "volumes": volumes},
        },
    }
    if pods > 1:
        spec["completionMode"] = "Indexed"
        spec["backoffLimit"] = int(retries) * pods
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec}


def prepull_name(plan: dict) -> str:
    return f"{plan['name']}-image-prepull"[:MAX_NAME].rstrip("-")


def prepull_images(plan: dict) -> list[str]:
    """The images the workers run (the frontend may run elsewhere: it is not pre-pulled)."""
    return sorted({w["image"] for w in plan["workers"]})


def prepull_job(plan: dict, ns: str, nodes: int, labels: dict, deadline_s: int = 3600) -> dict:
    """One short-lived pod per SKU node (required anti-affinity on the hostname) that pulls the workers'
    images and exits: no GPU requested, every taint tolerated, a few millicores."""
    name = prepull_name(plan)
    pod_labels = {**labels, naming.PREPULL_LABEL: name}
    containers = [{
        "name": f"pull-{i}",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["sh", "-c", "exit 0"],
        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"memory": "64Mi"}},
        "securityContext": pod_security.restricted_container(),
    } for i, image in enumerate(prepull_images(plan))]
    count = max(1, int(nodes))
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": ns, "labels": dict(pod_labels)},
        "spec": {
            "completions": count,
            "parallelism": count,
            "backoffLimit": 2 * count,
            "activeDeadlineSeconds": int(deadline_s),
            # a safety net: the role removes it as soon as it has read its timings
            "ttlSecondsAfterFinished": 3600,
            "template": {
                "metadata": {"labels": pod_labels},
                "spec": {
                    "restartPolicy": "Never",
                    "automountServiceAccountToken": False,
                    "securityContext": pod_security.restricted_pod(),
                    "nodeSelector": {plan["sku"]["node_label_key"]: plan["sku"]["node_label_value"]},
                    "tolerations": [{"operator": "Exists"}],
                    "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                        "labelSelector": {"matchLabels": {naming.PREPULL_LABEL: name}},
                        "topologyKey": "kubernetes.io/hostname",
                    }]}},
                    "containers": containers,
                },
            },
        },
    }


def _normal(ref: str) -> str:
    """An image reference as a kubelet reports it: Docker Hub names get their registry and library/."""
    first = ref.split("/", 1)[0]
    if "/" not in ref or ("." not in first and ":" not in first and first != "localhost"):
        ref = ("docker.io/" + ("library/" + ref if "/" not in ref else ref))
    return ref


def nodes_missing_images(plan: dict, nodes: list[dict]) -> list[str]:
    """The SKU's nodes whose status.images lack one of the workers' images (what a pre-pull would fix)."""
    key, value = plan["sku"]["node_label_key"], plan["sku"]["node_label_value"]
    wanted = {_normal(i) for i in prepull_images(plan)}
    missing = []
    for node in nodes:
        if (node.get("metadata", {}).get("labels") or {}).get(key) != value:
            continue
        held = {_normal(n) for img in (node.get("status") or {}).get("images") or [] for n in img.get("names") or []}
        if not wanted <= held:
            missing.append(node["metadata"]["name"])
    return sorted(missing)
