#!/usr/bin/env bash
# Run the molecule scenarios from the repository root (what `make molecule` calls).
#   molecule/run.sh                 every scenario
#   molecule/run.sh kv-router-gb300 one or more scenarios by name
# The collection root has a galaxy.yml, so molecule would look for extensions/molecule/; MOLECULE_GLOB
# points it at the top-level molecule/ directory instead. Each scenario starts and stops its own kubesim
# (state in the scenario's ephemeral directory), so scenarios never touch .kubesim/ or each other.
set -uo pipefail
cd "$(dirname "$0")/.."
export MOLECULE_GLOB='molecule/*/molecule.yml'
export ANSIBLE_CONFIG="$PWD/ansible.cfg"
BIN="${BIN:-$PWD/.venv/bin}"
export PATH="$BIN:$PATH"
if [ $# -eq 0 ]; then
  set -- $(for d in molecule/*/molecule.yml; do basename "$(dirname "$d")"; done)
fi
failed=()
start=$SECONDS
for s in "$@"; do
  t=$SECONDS
  if molecule test -s "$s"; then
    echo "molecule: $s passed in $((SECONDS - t)) s"
  else
    echo "molecule: $s FAILED in $((SECONDS - t)) s"
    failed+=("$s")
  fi
done
echo "molecule: $# scenario(s) in $((SECONDS - start)) s; failed: ${failed[*]:-none}"
[ ${#failed[@]} -eq 0 ]
