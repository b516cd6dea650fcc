#!/usr/bin/python
# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: release_lease
short_description: Hold a target's release Lease so that two updates of it never interleave
version_added: "0.1.0"
description:
  - Takes (O(state=acquired)) or gives back (O(state=released)) a C(coordination.k8s.io/v1) Lease named O(name) in
    O(namespace), with O(holder) as its C(holderIdentity). The release role holds it from reading the revisions
    to recording the new one, so a second deploy, rollback or rollout of the same target waits for the first and
    allocates the next revision number after it, instead of applying during the first one's wait and recording
    the same number.
  - A free Lease is taken by a create, which only one client wins. A Lease whose holder stopped renewing for
    longer than its C(leaseDurationSeconds) (a controller that died mid-update) is taken over by an update with
    the C(resourceVersion) read, which only one client wins. Giving it back is a delete with C(uid) and
    C(resourceVersion) preconditions, so a Lease taken over in the meantime stays with its new holder.
  - While another holder's Lease is live, the module polls every O(poll_interval) seconds for up to
    O(wait_seconds), then fails naming the holder, since when it holds the Lease, and how to release a Lease
    left by a controller that died. Run in the controller (the default on the C(local) connection), it also
    says every few seconds whose Lease it waits for, since when, and the command that ends a stale one.
  - The Lease names the process of the run that holds it (O(holder_process), in the annotation
    C(inferops.dynamo/holder-process)). A run killed before it could give the Lease back (SIGKILL, a lost
    session) leaves it behind; a later run on the same control node sees that this process has ended and takes
    the Lease over at once (RV(took_over), RV(took_over_because)) instead of waiting for it to expire. A holder on
    another control node, or in another container, is waited for.
  - With O(reads), it then runs those reads (the same specification as M(inferops.dynamo.cluster_facts)) and
    returns them in RV(reads), so that what the update decides from (the revisions, the live workload) is read
    only once the Lease is held.
  - In check mode the Lease is neither taken nor given back; O(reads) are run.
  - C(changed) is always false. The Lease is a lock held for the length of one play, and the play gives it back
    when it ends. It does not change the target.
author:
  - inferops team (@inferops)
extends_documentation_fragment:
  - inferops.dynamo.attributes
  - kubernetes.core.k8s_auth_options
options:
  name:
    description: Name of the Lease, for example C(<workload>-release).
    type: str
    required: true
  namespace:
    description: Namespace of the target.
    type: str
    required: true
  holder:
    description:
      - Who holds the Lease. Make it unique per run, for example the user and a run id, and readable. It is the
        name another run's refusal shows.
    type: str
    required: true
  state:
    description: C(acquired) takes it (waiting while another holder has it), C(released) gives it back.
    type: str
    choices: [acquired, released]
    default: acquired
  duration_seconds:
    description:
      - C(leaseDurationSeconds). After this long without renewal another run may take the Lease over. Set it
        longer than the longest update (the waits for settle and readiness together).
    type: int
    default: 3600
  wait_seconds:
    description: How long to wait for another holder to give the Lease back before failing.
    type: int
    default: 900
  poll_interval:
    description: Seconds between looks while waiting.
    type: float
    default: 2
  labels:
    description: Labels of the Lease (for example the target's, so that teardown finds it).
    type: dict
    default: {}
  reads:
    description: Reads to run once the Lease is held, as in M(inferops.dynamo.cluster_facts).
    type: dict
    default: {}
  holder_process:
    description:
      - The process whose end frees the Lease, as recorded in it (control node, boot, PID namespace, PID, start
        time). The action plugin sets it to the C(ansible-playbook) process of the run; leave it unset.
    type: dict
notes:
  - Needs C(get), C(create), C(update) and C(delete) on C(leases.coordination.k8s.io) in the namespace. The
    built-in C(edit) role grants these.
requirements:
  - kubernetes >= 24.2.0 (Python client)
seealso:
  - module: inferops.dynamo.cluster_facts
  - name: Leases (Kubernetes documentation)
    description: Leases as locks for coordination.
    link: https://kubernetes.io/docs/concepts/architecture/leases/
"""

EXAMPLES = r"""
- name: Hold the release of the target, then read its revisions
  inferops.dynamo.release_lease:
    name: muse-spark-sglang-aggregate-gb300-release
    namespace: dynamo
    holder: "alice run 4242"
    duration_seconds: 20000
    reads:
      revisions:
        api_version: v1
        plural: configmaps
        namespace: dynamo
        label_selectors: ["inferops.dynamo/record=revision"]
  register: lease

- name: Give it back
  inferops.dynamo.release_lease:
    name: muse-spark-sglang-aggregate-gb300-release
    namespace: dynamo
    holder: "alice run 4242"
    state: released
"""

RETURN = r"""
waited_s:
  description: Seconds spent waiting for another holder (O(state=acquired)).
  returned: success
  type: float
waited_for:
  description: The holder waited for, or an empty string.
  returned: success
  type: str
took_over:
  description: The holder of a Lease that was taken over (it had expired, or its run's process had ended), or an
    empty string.
  returned: success
  type: str
took_over_because:
  description: Why the Lease of RV(took_over) was taken over, for example C(its process (PID 4242 on ctl-01) has
    ended), or an empty string.
  returned: success
  type: str
released:
  description: Whether the Lease was given back (O(state=released)). False when it was not held by O(holder).
  returned: success
  type: bool
held_by:
  description: Who holds the Lease instead of O(holder) at release (empty when nobody does).
  returned: success
  type: str
reads:
  description: The results of O(reads), by name, shaped as in M(inferops.dynamo.cluster_facts).
  returned: success
  type: dict
holder:
  description: Who holds the Lease, when the module failed because another holder kept it.
  returned: failure
  type: str
"""


from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import release_lease as rl  # noqa: E402
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc  # noqa: E402
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import reads as cr  # noqa: E402
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import runner  # noqa: E402

ARGUMENT_SPEC = dict(
    kc.AUTH_ARG_SPEC,
    name=dict(type="str", required=True),
    namespace=dict(type="str", required=True),
    holder=dict(type="str", required=True),
    state=dict(type="str", choices=["acquired", "released"], default="acquired"),
    duration_seconds=dict(type="int", default=3600),
    wait_seconds=dict(type="int", default=900),
    poll_interval=dict(type="float", default=2),
    labels=dict(type="dict", default={}),
    reads=dict(type="dict", default={}),
    holder_process=dict(type="dict"),
)
MODULE_OPTIONS = dict(supports_check_mode=True)


def work(module) -> dict:
    p = module.params
    api = kc.get_api(p)
    try:
        if module.check_mode:      # --check writes nothing, not even the Lease: only the reads
            result = {"waited_s": 0.0, "waited_for": "", "took_over": "", "took_over_because": "", "released": False,
                      "held_by": ""}
        elif p["state"] == "released":
            return rl.release(api, p["namespace"], p["name"], p["holder"])
        else:
            # the controller's stand-in shows what the wait reports as it happens; a module process cannot
            result = rl.acquire(api, p["namespace"], p["name"], p["holder"], p["duration_seconds"], p["wait_seconds"],
                                p["poll_interval"], p["labels"], holder_process=p["holder_process"],
                                report=getattr(module, "report", None))
        result["reads"] = cr.survey(api, p["reads"])["reads"] if p["reads"] else {}
    except rl.LeaseHeld as exc:
        raise runner.ModuleFailure(str(exc), holder=exc.holder) from None
    except cr.ReadSpecError as exc:
        raise runner.ModuleFailure(str(exc)) from None
    return result


def run_module(module) -> None:
    """The module's work, for an ``AnsibleModule`` here or the controller's stand-in (plugin_utils.in_process)."""
    runner.run(module, work)


def main() -> None:
    runner.main(ARGUMENT_SPEC, MODULE_OPTIONS, run_module)


if __name__ == "__main__":
    main()
