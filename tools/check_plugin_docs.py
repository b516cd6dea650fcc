"""Fail when ansible-doc lists any plugin of this collection as UNDOCUMENTED, or lists none.

Runs `ansible-doc -t <type> -l inferops.dynamo` for every plugin type the collection ships.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TYPES = {"module": "modules", "filter": "filter", "lookup": "lookup", "callback": "callback", "strategy": "strategy"}


def main() -> int:
    env = {**os.environ, "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg")}
    ansible_doc = Path(sys.executable).with_name("ansible-doc")
    failures = []
    for plugin_type, folder in TYPES.items():
        shipped = sorted(p.stem for p in (ROOT / "plugins" / folder).glob("*.py") if p.stem != "__init__")
        if plugin_type == "filter":
            shipped = sorted(p.stem for p in (ROOT / "plugins" / folder).glob("*.yml"))
        if not shipped:
            continue
        out = subprocess.run([str(ansible_doc), "-t", plugin_type, "-l", "inferops.dynamo"],
                             capture_output=True, text=True, env=env, cwd=ROOT, check=False)
        listed = {line.split()[0]: line for line in out.stdout.splitlines() if line.startswith("inferops.dynamo.")}
        failures += [f"{plugin_type} {fqcn}: UNDOCUMENTED" for fqcn, line in listed.items()
                     if "UNDOCUMENTED" in line and fqcn.split(".")[-1] not in shipped]
        for name in shipped:
            fqcn = f"inferops.dynamo.{name}"
            if fqcn not in listed:
                failures.append(f"{plugin_type} {fqcn}: not listed by ansible-doc ({out.stderr.strip()[:300]})")
            elif "UNDOCUMENTED" in listed[fqcn]:
                failures.append(f"{plugin_type} {fqcn}: UNDOCUMENTED")
            else:
                # Listing is not enough: the documentation must also parse and render.
                shown = subprocess.run([str(ansible_doc), "-t", plugin_type, fqcn], capture_output=True, text=True,
                                       env=env, cwd=ROOT, check=False)
                if shown.returncode != 0 or "ERROR" in shown.stderr:
                    failures.append(f"{plugin_type} {fqcn}: ansible-doc cannot render it: {shown.stderr.strip()[:300]}")
        print(f"{plugin_type}: {len(shipped)} plugin(s) documented: {', '.join(shipped)}")
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
