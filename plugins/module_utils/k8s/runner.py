# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Runner layer: the one main every module of this collection shares.

A module's work is a function of the module that returns its result, or raises :class:`ModuleFailure` with the
message and result fields of a failure it names itself. The runner hides an inline kubeconfig's credentials in
everything the module returns, fails with the API's own message and status when the API refuses or cannot be
reached, and exits unchanged unless the work says otherwise. The same code runs under ``AnsibleModule`` and
under the controller's stand-in (plugin_utils.in_process).
"""

from __future__ import annotations

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc


class ModuleFailure(Exception):
    """A failure the module's work names: ``str()`` is the message, ``fields`` go into the failed result."""

    def __init__(self, msg: str, **fields):
        super().__init__(msg)
        self.fields = fields


def run(module, work) -> None:
    """End ``module`` with what ``work(module)`` returns (see the module docstring)."""
    kc.mask_inline_kubeconfig(module)
    start = time.monotonic()
    try:
        result = work(module)
    except ModuleFailure as exc:
        module.fail_json(msg=str(exc), changed=False, **exc.fields)
    except kc.K8sError as exc:
        module.fail_json(msg=str(exc), changed=False, status=getattr(exc, "status", None),
                         elapsed=round(time.monotonic() - start, 3))
    module.exit_json(**{"changed": False, **result})


def main(argument_spec: dict, options: dict, run_module) -> None:
    """The ``main()`` of a module file run by Ansible (``AnsiballZ``)."""
    run_module(AnsibleModule(argument_spec=argument_spec, **options))
