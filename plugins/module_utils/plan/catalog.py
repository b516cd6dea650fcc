# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The catalog: models, SKUs and targets as data (YAML under ``catalog/`` of the collection).

Adding a model, a SKU or a target is adding data here; the plan layer reads nothing else.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.grammar import COMMIT, is_commit

PLACEHOLDER_PREFIX = "PLACEHOLDER:"
CATALOG_ENV = "INFEROPS_DYNAMO_CATALOG"


def default_catalog_dir() -> Path:
    """``catalog/`` at the collection root (two levels above ``plugins/module_utils``)."""
    override = os.environ.get(CATALOG_ENV)
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[3] / "catalog"


def is_placeholder(value) -> bool:
    return isinstance(value, str) and value.startswith(PLACEHOLDER_PREFIX)


@dataclass(frozen=True)
class Catalog:
    models: dict
    skus: dict
    targets: dict
    runtimes: dict
    benchmark_trace: dict

    def model(self, key: str) -> dict:
        if key not in self.models:
            raise PlanError(f"unknown model '{key}'.", "unknown-model", sorted(self.models), inputs=["model"])
        return self.models[key]

    def sku(self, key: str) -> dict:
        if key not in self.skus:
            raise PlanError(f"unknown sku '{key}'.", "unknown-sku", sorted(self.skus), inputs=["sku"])
        return self.skus[key]

    def target_key(self, framework: str, mode: str, sku: str) -> str:
        return f"{framework}-{mode}-{sku}"

    def target(self, framework: str, mode: str, sku: str) -> tuple[str, dict]:
        key = self.target_key(framework, mode, sku)
        if key not in self.targets:
            on_sku = sorted(k for k, t in self.targets.items() if t["sku"] == sku)
            raise PlanError(
                f"no target for framework={framework} mode={mode} sku={sku}; "
                f"targets on {sku}: {', '.join(on_sku) or 'none'}.",
                "no-such-target",
                sorted(self.targets),
            )
        return key, self.targets[key]

    def choices(self) -> dict:
        """Every value a user may pick, derived from the data (AWX surveys are checked against it)."""
        targets = self.targets.values()
        return {
            "model": sorted(self.models),
            "sku": sorted(self.skus),
            "framework": sorted({t["framework"] for t in targets}),
            "mode": sorted({t["mode"] for t in targets}),
            "target": sorted(self.targets),
        }


def _read(path: Path, key: str) -> dict:
    try:
        with path.open(encoding="utf-8") as handle:
            data = yaml.safe_load(handle) or {}
    except FileNotFoundError as exc:
        raise PlanError(f"catalog file {path} is missing.", "catalog-missing") from exc
    if key not in data or not isinstance(data[key], dict):
        raise PlanError(f"catalog file {path} has no '{key}' mapping.", "catalog-invalid")
    return data


_CACHE: dict[str, Catalog] = {}


def load_catalog(directory: str | os.PathLike | None = None) -> Catalog:
    base = Path(directory) if directory else default_catalog_dir()
    cache_key = str(base.resolve())
    if cache_key not in _CACHE:
        models = _read(base / "models.yml", "models")
        skus = _read(base / "skus.yml", "skus")
        targets = _read(base / "targets.yml", "targets")
        catalog = Catalog(
            models=models["models"],
            skus=skus["skus"],
            targets=targets["targets"],
            runtimes=targets.get("runtimes", {}),
            benchmark_trace=targets.get("benchmark_trace", {}),
        )
        _check_consistency(catalog)
        _CACHE[cache_key] = catalog
    return _CACHE[cache_key]


def _check_consistency(catalog: Catalog) -> None:
    """Fail loudly on a catalog edit that references something that does not exist, or pins weights to anything
    but a commit id (a branch or a tag moves)."""
    for model_key, model in catalog.models.items():
        entries = [*(model.get("checkpoints") or {}).items(), *(model.get("draft_models") or {}).items()]
        for key, entry in entries:
            revision = entry.get("revision")
            if revision not in (None, "") and not is_commit(revision):
                raise PlanError(f"catalog model '{model_key}' pins '{key}' to revision {revision!r}, which is not "
                                f"{COMMIT}.", "catalog-invalid")
    for key, target in catalog.targets.items():
        expected_key = f"{target['framework']}-{target['mode']}-{target['sku']}"
        if key != expected_key:
            raise PlanError(f"catalog target '{key}' must be named '{expected_key}'.", "catalog-invalid")
        if target["sku"] not in catalog.skus:
            raise PlanError(f"catalog target '{key}' names unknown sku '{target['sku']}'.", "catalog-invalid")
        if target["runtime"] not in catalog.runtimes:
            raise PlanError(f"catalog target '{key}' names unknown runtime.", "catalog-invalid")
        for model in catalog.models.values():
            if target["checkpoint"] not in model["checkpoints"]:
                raise PlanError(f"catalog target '{key}' names unknown checkpoint.", "catalog-invalid")
