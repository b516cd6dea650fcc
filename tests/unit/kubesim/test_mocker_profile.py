"""The mocker's timing profile follows the published figures at the trace's prompt lengths."""

import io

import numpy as np
import pytest

from kubesim.standins import mocker_profile as mp

FIGURES = mp.PublishedFigures(ttft_ms=289.4, tokens_per_s_per_user=62.12, concurrency=16)
TRACE = mp.TraceShape(median_new_tokens=2000, mean_context_tokens=4800)


def test_figures_come_from_the_annotations_the_collection_renders():
    ann = {"inferops.dynamo/expected-ttft-p50-ms": "221.7", "inferops.dynamo/expected-output-tps-per-user-p50": "57.43",
           "inferops.dynamo/expected-concurrency": "12"}
    fig = mp.PublishedFigures.from_annotations(ann)
    assert (fig.ttft_ms, fig.tokens_per_s_per_user, fig.concurrency) == (221.7, 57.43, 12)
    assert fig.itl_ms == pytest.approx(1000 / 57.43)
    assert fig.output_tokens_per_s is None      # a workload rendered before it was annotated
    with_throughput = mp.PublishedFigures.from_annotations({**ann, "inferops.dynamo/expected-output-tps": "620.5"})
    assert with_throughput.output_tokens_per_s == 620.5


def test_missing_and_invalid_figures_are_named_all_at_once():
    with pytest.raises(mp.ProfileError) as err:
        mp.PublishedFigures.from_annotations({"inferops.dynamo/expected-ttft-p50-ms": "-5"})
    text = str(err.value)
    assert "expected-ttft-p50-ms='-5' (must be > 0)" in text
    assert "expected-output-tps-per-user-p50=None" in text and "expected-concurrency=None" in text


def test_first_token_at_the_trace_median_is_the_published_ttft():
    # the mocker's first token is the prefill step plus one decode step
    first = mp.prefill_ms(FIGURES, TRACE, TRACE.median_new_tokens) + mp.decode_step_ms(FIGURES, TRACE, 0)
    assert first == pytest.approx(FIGURES.ttft_ms)


def test_prefill_grows_linearly_with_the_new_tokens_above_a_fixed_share():
    at = mp.prefill_ms(FIGURES, TRACE, TRACE.median_new_tokens)
    assert mp.prefill_ms(FIGURES, TRACE, 0) == pytest.approx(at * mp.FIXED_PREFILL_SHARE)
    doubled = mp.prefill_ms(FIGURES, TRACE, 2 * TRACE.median_new_tokens)
    assert doubled - at == pytest.approx(at - mp.prefill_ms(FIGURES, TRACE, 0))


def test_decode_keeps_the_published_speed_up_to_the_published_load_and_slows_past_it():
    load = FIGURES.concurrency * TRACE.mean_context_tokens
    assert mp.decode_step_ms(FIGURES, TRACE, load) == pytest.approx(FIGURES.itl_ms)
    assert mp.decode_step_ms(FIGURES, TRACE, load / 4) == pytest.approx(FIGURES.itl_ms)
    assert mp.decode_step_ms(FIGURES, TRACE, 2 * load) == pytest.approx(FIGURES.itl_ms * (1 + mp.OVERLOAD_SLOPE))


def test_trace_shape_counts_only_the_prompt_blocks_no_earlier_request_sent():
    rows = [{"input_length": 2048, "output_length": 100, "hash_ids": [1, 2, 3, 4]},
            {"input_length": 2100, "output_length": 100, "hash_ids": [1, 2, 3, 5]},   # 3 blocks cached
            {"input_length": 1000, "output_length": 100, "hash_ids": [9, 1]}]         # 1 shared, not leading
    shape = mp.TraceShape.from_rows(rows)
    assert shape.median_new_tokens == 1000            # [2048, 2100 - 3 * 512 = 564, 1000]
    assert shape.mean_context_tokens == round((2048 + 2100 + 1000) / 3 + 50)


def test_an_empty_or_malformed_trace_is_refused():
    with pytest.raises(mp.ProfileError, match="no requests"):
        mp.TraceShape.from_rows([])
    with pytest.raises(mp.ProfileError, match="row 1 has no integer input_length"):
        mp.TraceShape.from_rows([{"output_length": 3}])


def test_the_npz_has_the_arrays_and_shapes_the_mocker_reads(tmp_path):
    path = mp.write(tmp_path / "p.npz", FIGURES, TRACE)
    with np.load(io.BytesIO(path.read_bytes())) as data:
        assert set(data.files) == {"prefill_isl", "prefill_ttft_ms", "decode_active_kv_tokens",
                                   "decode_context_length", "decode_itl"}
        assert data["decode_itl"].shape == (len(data["decode_active_kv_tokens"]), len(data["decode_context_length"]))
        assert list(data["prefill_isl"]) == sorted(data["prefill_isl"])
        assert TRACE.median_new_tokens in data["prefill_isl"]
        at = list(data["prefill_isl"]).index(TRACE.median_new_tokens)
        assert data["prefill_ttft_ms"][at] == pytest.approx(FIGURES.ttft_ms - FIGURES.itl_ms)
        assert data["decode_active_kv_tokens"][0] == 0 and data["decode_itl"][0][0] == pytest.approx(FIGURES.itl_ms)


def test_kv_capacity_holds_the_published_load_with_room_for_the_slowdown_past_it():
    blocks = mp.kv_blocks(FIGURES, TRACE, 64)
    published_load = FIGURES.concurrency * TRACE.mean_context_tokens
    assert blocks * 64 >= mp.KV_CAPACITY_MULTIPLE * published_load > (blocks - 1) * 64
    assert mp.kv_blocks(FIGURES, TRACE, 16) == 4 * blocks
    with pytest.raises(mp.ProfileError, match="positive number of tokens"):
        mp.kv_blocks(FIGURES, TRACE, 0)
