# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What a million tokens cost at a measured throughput, from a GPU-hour price (pure Python).

The catalog publishes no prices: the price is the user's (``benchmark_gpu_hour_cost``, per SKU in the
inventory's group_vars). The deployment is paid for by the GPU-hour whether it is busy or not, so::

    $ per million tokens = price per GPU-hour x GPUs / (tokens per second x 3600) x 1,000,000

for output tokens (AIPerf ``output_token_throughput``) and for input + output tokens
(``total_token_throughput``).
"""

from __future__ import annotations

import math

FORMULA = "$ per million tokens = price per GPU-hour x GPUs / (tokens/s x 3600 s/h) x 1,000,000"


class CostError(ValueError):
    """A price that cannot be used."""


def _positive(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if value > 0 and not math.isinf(value) else None


def check_price(price):
    """The price as a float, None when unset; CostError for a negative or non-numeric one."""
    if price in (None, ""):
        return None
    try:
        value = float(price)
    except (TypeError, ValueError):
        raise CostError(f"benchmark_gpu_hour_cost must be a price in dollars per GPU-hour, got {price!r}") from None
    if value < 0 or math.isnan(value) or math.isinf(value):
        raise CostError(f"benchmark_gpu_hour_cost must be >= 0 dollars per GPU-hour, got {price!r}")
    return value or None


def per_million(price, gpus, tokens_per_s):
    """Dollars per million tokens, or None when the throughput or GPU count is unknown or zero."""
    price, gpus, tps = _positive(price), _positive(gpus), _positive(tokens_per_s)
    if price is None or gpus is None or tps is None:
        return None
    return price * gpus / (tps * 3600.0) * 1_000_000


def cost(price, gpus, metrics):
    """``{gpu_hour_cost, gpus, cluster_hour_cost, per_million_output_tokens, per_million_total_tokens,
    output_tokens_per_s, total_tokens_per_s, formula}`` for one run, or None without a price."""
    price = check_price(price)
    if price is None:
        return None
    metrics = metrics or {}
    out_tps, total_tps = metrics.get("output_tokens_per_s"), metrics.get("total_tokens_per_s")
    return {"gpu_hour_cost": price, "gpus": gpus, "cluster_hour_cost": price * gpus if _positive(gpus) else None,
            "output_tokens_per_s": out_tps, "total_tokens_per_s": total_tps,
            "per_million_output_tokens": per_million(price, gpus, out_tps),
            "per_million_total_tokens": per_million(price, gpus, total_tps),
            "currency": "USD", "formula": FORMULA}
