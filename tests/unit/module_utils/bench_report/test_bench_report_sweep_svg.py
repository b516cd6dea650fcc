"""sweep_svg: per-GPU vs per-user throughput curve, one labelled point per concurrency, expected marked."""

import xml.etree.ElementTree as ET

from ansible_collections.inferops.dynamo.plugins.module_utils.bench_report import sweep_svg

NS = "{http://www.w3.org/2000/svg}"


def points():
    out = []
    for conc, gpu, user in ((8, 110.0, 70.0), (1, 30.0, 150.0), (4, 80.0, 100.0), (16, 140.0, 50.0)):
        out.append({"concurrency": conc, "metrics": {"output_tokens_per_s_per_gpu": gpu, "output_tokens_per_s": gpu * 4,
                                                     "output_tokens_per_s_per_user_p50": user}})
    out.append({"concurrency": 32, "metrics": {"output_tokens_per_s_per_gpu": None}})
    return out


def test_curve_points_labels_and_expected():
    expected = {"concurrency": 12, "output_tokens_per_s_per_gpu": 128.58, "output_tokens_per_s_per_user_p50": 57.43}
    root = ET.fromstring(sweep_svg(points(), "sweep & co", expected=expected))
    assert root.get("viewBox") == "0 0 900 560"
    texts = [t.text for t in root.iter(f"{NS}text")]
    assert "sweep & co" in texts
    assert [t for t in texts if t.startswith("c=")] == ["c=1", "c=4", "c=8", "c=16"]
    assert "expected (c=12)" in texts
    assert any("per user p50" in t for t in texts) and any("per GPU" in t for t in texts)
    assert "not plotted (metrics missing): c=32" in texts
    circles = [c for c in root.iter(f"{NS}circle") if c.find(f"{NS}title") is not None]
    assert len(circles) == 4
    # the line joins the points in concurrency order: per-user throughput falls, x decreases
    xs = [float(p.split(",")[0]) for p in root.find(f"{NS}polyline").get("points").split()]
    assert xs == sorted(xs, reverse=True) and len(xs) == 4
    assert root.find(f"{NS}polygon") is not None  # the expected diamond


def test_total_throughput_without_gpu_count_and_empty():
    pts = [{"concurrency": 2, "metrics": {"output_tokens_per_s": 200.0, "output_tokens_per_s_per_user_p50": 90.0}}]
    texts = [t.text for t in ET.fromstring(sweep_svg(pts, "t")).iter(f"{NS}text")]
    assert any("Output tokens/s (total)" in t for t in texts) and "c=2" in texts
    texts = [t.text for t in ET.fromstring(sweep_svg([], "t")).iter(f"{NS}text")]
    assert "no sweep point has both metrics" in texts
