"""cost: dollars per million tokens from a GPU-hour price, checked by hand."""

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.cost import CostError, check_price, cost


def test_hand_checked_figures():
    # 4 GPUs at $10/GPU-hour cost $40/h; 635.8 output tokens/s is 2,288,880 tokens/h:
    # 40 / 2,288,880 x 1,000,000 = $17.4757 per million output tokens.
    c = cost(10, 4, {"output_tokens_per_s": 635.8, "total_tokens_per_s": 6358.0})
    assert c["per_million_output_tokens"] == pytest.approx(17.4757, abs=1e-4)
    assert c["per_million_total_tokens"] == pytest.approx(1.74757, abs=1e-5)
    assert c["cluster_hour_cost"] == 40 and c["currency"] == "USD" and "x 3600" in c["formula"]


def test_no_price_or_no_throughput():
    assert cost(None, 4, {"output_tokens_per_s": 1.0}) is None
    assert cost(0, 4, {"output_tokens_per_s": 1.0}) is None
    c = cost(5, 4, {"output_tokens_per_s": 0.0})
    assert c["per_million_output_tokens"] is None and c["per_million_total_tokens"] is None


def test_bad_prices():
    assert check_price("2.5") == 2.5
    for bad in (-1, "cheap", float("nan")):
        with pytest.raises(CostError, match="benchmark_gpu_hour_cost"):
            check_price(bad)
