"""candidates: a given list (two or more) or the min..max range."""

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.search import SearchError, candidates


def test_list_or_range():
    assert candidates([32, 8, 16, 8]) == [8, 16, 32]
    assert candidates([16], 4, 8) == [4, 5, 6, 7, 8]


def test_refusals():
    with pytest.raises(SearchError, match="benchmark_search_min < benchmark_search_max"):
        candidates(None, 8, 8)
    with pytest.raises(SearchError, match=">= 1"):
        candidates([0, 4])
