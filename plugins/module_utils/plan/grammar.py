# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The grammar of every free-text input: what a Kubernetes name, an image reference, a Hub repository id, an
S3 URI or a URL may look like, checked before anything is rendered.

A value that passes here can still be wrong (a repository that does not exist), but it can never be more than
one token of its kind: nothing the user typed is pasted into shell text, and these checks make sure a value
cannot carry a second word, a newline or a shell metacharacter into a field that expects one name.
Pure Python: no Ansible imports.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError

# Kubernetes (apimachinery validation): a label (namespaces, Services, container names) and a subdomain
# (most object names: ConfigMaps, Secrets, PVCs, StorageClasses).
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
# A label key's name part and a label value (both at most 63), the key's optional prefix a subdomain.
_LABEL_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
# The Hub's repository ids (huggingface_hub.utils.validate_repo_id): org/name, each part at most 96 characters of
# letters, digits, '-', '_' and '.', neither '--' nor '..', not starting or ending with '-' or '.'.
_HUB_PART = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,94}[A-Za-z0-9])?")
# A pinned revision: a full commit id. Branches and tags move, so they pin nothing.
_COMMIT = re.compile(r"[0-9a-f]{40}")
# The distribution reference grammar (github.com/distribution/reference): [domain[:port]/]path[:tag][@digest].
_DOMAIN_PART = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"{_DOMAIN_PART}(?:\.{_DOMAIN_PART})*(?::[0-9]+)?"
_PATH_PART = r"[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*"
_IMAGE = re.compile(rf"(?:{_DOMAIN}/)?{_PATH_PART}(?:/{_PATH_PART})*(?::[\w][\w.-]{{0,127}})?"
                    r"(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?")
# S3 bucket names (3-63 of lowercase letters, digits, '.' and '-') and the object key characters AWS calls safe.
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_S3_KEY = re.compile(r"[A-Za-z0-9!_.*'()/-]*")
_REGION = re.compile(r"[a-z]{2}(-[a-z0-9]+)+")
# UCX_NET_DEVICES: device[:port] names separated by commas (mlx5_0:1,mlx5_1:1).
_NET_DEVICES = re.compile(r"[A-Za-z0-9_.-]+(:[0-9]+)?(,[A-Za-z0-9_.-]+(:[0-9]+)?)*")
# What never belongs in a single-token input: whitespace, control characters, quotes and shell metacharacters.
_URL_FORBIDDEN = re.compile(r"[\s\x00-\x1f\x7f\"'`$\\;|&<>{}]")

DNS_LABEL = "a DNS-1123 label: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit"
DNS_SUBDOMAIN = ("a DNS-1123 subdomain: at most 253 lowercase letters, digits, '-' and '.', each dot-separated part "
                 "starting and ending with a letter or digit")
HUB_REPO = "a Hub repository id org/name (letters, digits, '-', '_', '.'; at most 96 per part; no '--' or '..')"
COMMIT = "a full 40-character commit id (lowercase hex), as `hf api` or the Hub's page shows it"
IMAGE = "an image reference [registry[:port]/]path[:tag][@sha256:digest]"
S3_URI = "s3://bucket[/prefix] (bucket: 3-63 lowercase letters, digits, '.', '-'; prefix: letters, digits, !_.*'()/-)"
URL = "an http:// or https:// URL with a host, no credentials, spaces, quotes or shell characters"
REGION = "an AWS region such as us-east-1"
NET_DEVICES = "device[:port] names separated by commas, e.g. mlx5_0:1,mlx5_1:1"
LABEL_KEY = "a label key [prefix/]name (name: at most 63 letters, digits, '-', '_', '.')"
LABEL_VALUE = "a label value: at most 63 letters, digits, '-', '_', '.' (or empty)"


def _text(value) -> str | None:
    return value if isinstance(value, str) else None


def is_dns_label(value) -> bool:
    text = _text(value)
    return text is not None and len(text) <= 63 and bool(_DNS_LABEL.fullmatch(text))


def is_dns_subdomain(value) -> bool:
    text = _text(value)
    return text is not None and len(text) <= 253 and bool(_DNS_SUBDOMAIN.fullmatch(text))


def is_hub_repo(value) -> bool:
    text = _text(value)
    if text is None or text.count("/") != 1 or "--" in text or ".." in text:
        return False
    return all(_HUB_PART.fullmatch(part) for part in text.split("/"))


def is_commit(value) -> bool:
    text = _text(value)
    return text is not None and bool(_COMMIT.fullmatch(text))


def is_image(value) -> bool:
    text = _text(value)
    return text is not None and len(text) <= 512 and bool(_IMAGE.fullmatch(text))


def is_s3_uri(value) -> bool:
    text = _text(value)
    if text is None or not text.startswith("s3://"):
        return False
    bucket, _, key = text[len("s3://"):].partition("/")
    return bool(_BUCKET.fullmatch(bucket)) and ".." not in bucket and bool(_S3_KEY.fullmatch(key))


def is_url(value) -> bool:
    text = _text(value)
    if text is None or _URL_FORBIDDEN.search(text):
        return False
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and not (parts.username or parts.password)


def is_fetch_url(value) -> bool:
    """What curl may fetch a file from: an http(s) URL, or a file:/// URL of an absolute path (a mirror on the
    nodes, or the rehearsal's own data)."""
    text = _text(value)
    if text is not None and text.startswith("file:///"):
        return not _URL_FORBIDDEN.search(text)
    return is_url(value)


def is_cidr(value) -> bool:
    text = _text(value)
    try:
        ipaddress.ip_network(text or "", strict=False)
    except ValueError:
        return False
    return "/" in text


def is_region(value) -> bool:
    text = _text(value)
    return text is not None and len(text) <= 32 and bool(_REGION.fullmatch(text))


def is_net_devices(value) -> bool:
    text = _text(value)
    return text is not None and len(text) <= 512 and bool(_NET_DEVICES.fullmatch(text))


def is_label_key(value) -> bool:
    text = _text(value)
    if text is None:
        return False
    prefix, _, name = text.rpartition("/")
    if prefix and not is_dns_subdomain(prefix):
        return False
    return len(name) <= 63 and bool(_LABEL_NAME.fullmatch(name))


def is_label_value(value) -> bool:
    text = _text(value)
    return text is not None and (text == "" or (len(text) <= 63 and bool(_LABEL_NAME.fullmatch(text))))


# Each kind: its check, what the message calls it, and its form (the refusal's valid value).
KINDS = {
    "dns_label": (is_dns_label, "a DNS-1123 label", DNS_LABEL),
    "dns_subdomain": (is_dns_subdomain, "a DNS-1123 subdomain", DNS_SUBDOMAIN),
    "hub_repo": (is_hub_repo, "a Hub repository id", HUB_REPO),
    "commit": (is_commit, "a commit id", COMMIT),
    "image": (is_image, "an image reference", IMAGE),
    "s3_uri": (is_s3_uri, "an S3 URI", S3_URI),
    "url": (is_url, "an http(s) URL", URL),
    "fetch_url": (is_fetch_url, "an http(s) or file:/// URL", URL + ", or file:///absolute/path"),
    "region": (is_region, "a region", REGION),
    "cidr": (is_cidr, "an address range", "an address range in CIDR form, e.g. 10.0.0.0/24"),
    "net_devices": (is_net_devices, "a UCX device list", NET_DEVICES),
    "label_key": (is_label_key, "a label key", LABEL_KEY),
    "label_value": (is_label_value, "a label value", LABEL_VALUE),
}


def _shown(value) -> str:
    """The refused value as the message quotes it: one line, bounded, so a hostile value cannot forge output."""
    text = value if isinstance(value, str) else repr(value)
    text = text.encode("unicode_escape").decode("ascii")
    return text if len(text) <= 120 else text[:117] + "..."


def input_name(name: str) -> str:
    """The public input a field belongs to: model_cache_source for model_cache_source.bucket."""
    return re.split(r"[.\[ ]", name, maxsplit=1)[0]


def refusal(name: str, kind: str, value) -> PlanError | None:
    """A PlanError naming ``name``, the rule (invalid-<input>) and the valid form when ``value`` is not a
    ``kind``; else None."""
    test, called, form = KINDS[kind]
    if test(value):
        return None
    top = input_name(name)
    return PlanError(f"{name}='{_shown(value)}' is not {called}.", f"invalid-{top.replace('_', '-')}", [form],
                     inputs=[top])


def check(name: str, kind: str, value) -> None:
    """Raise the refusal of ``value`` (see refusal)."""
    error = refusal(name, kind, value)
    if error is not None:
        raise error


def argument_list(name: str, value) -> list[str]:
    """Extra command-line arguments: a list of strings, each passed as one argument (never through a shell).
    A control character is refused: no engine or AIPerf option takes one, and it would forge log lines."""
    items = value if isinstance(value, list) else None
    if items is None or not all(isinstance(a, str | int | float) and not isinstance(a, bool) for a in items):
        raise PlanError(f"{name} must be a list of arguments (strings), got {_shown(value)}.",
                        f"invalid-{name.replace('_', '-')}", ['["--option", "value", ...]'], inputs=[name])
    args = [str(a) for a in items]
    bad = [a for a in args if re.search(r"[\x00-\x1f\x7f]", a)]
    if bad:
        raise PlanError(f"{name} has an argument with a control character: {_shown(bad[0])}.",
                        f"invalid-{name.replace('_', '-')}", ["arguments without newlines or control characters"],
                        inputs=[name])
    return args
