"""The control plane's wrapper module: the replace list comes from k8s.io/kubernetes's own go.mod."""

import re

import pytest

from kubesim.control_plane import build

UPSTREAM = """module k8s.io/kubernetes

go 1.26.0

require (
	k8s.io/api v0.0.0
	k8s.io/apimachinery v0.0.0
)

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/apimachinery => ./staging/src/k8s.io/apimachinery
	github.com/example/fork => github.com/example/fork v1.2.3
)

replace k8s.io/streaming => ./staging/src/k8s.io/streaming
"""


def test_staging_replaces_are_read_from_the_upstream_gomod():
    assert build.parse_staging_replaces(UPSTREAM) == ["k8s.io/api", "k8s.io/apimachinery", "k8s.io/streaming"]


def test_a_gomod_without_staging_replaces_is_refused():
    with pytest.raises(ValueError, match=r"no \./staging/src replace directives"):
        build.parse_staging_replaces("module example.com/x\n")


def test_each_staging_module_is_pinned_to_the_published_release():
    v = build.Versions(kubernetes="v1.36.3", etcd="v3.6.16", kwok="v0.8.0")
    text = build.render_gomod(v, ["k8s.io/api", "k8s.io/client-go"], "1.26.0")
    assert "\tk8s.io/api => k8s.io/api v0.36.3" in text
    assert "\tk8s.io/client-go => k8s.io/client-go v0.36.3" in text
    assert "\tk8s.io/kubernetes v1.36.3" in text and "\tgo.etcd.io/etcd/server/v3 v3.6.16" in text


def test_the_committed_gomod_matches_the_pins():
    v = build.versions()
    text = (build.GOMOD_DIR / "go.mod").read_text()
    pinned = dict(re.findall(r"^\t(\S+) => \S+ (v\S+)$", text, re.M))
    assert pinned and set(pinned.values()) == {v.staging}
    assert re.search(rf"^\tk8s.io/kubernetes {re.escape(v.kubernetes)}\b", text, re.M)


def test_the_version_is_stamped_for_both_the_servers_and_kubectl():
    flags = build._ldflags(build.Versions(kubernetes="v1.36.3", etcd="v3.6.16", kwok="v0.8.0"))
    for pkg in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        assert f"-X {pkg}.gitVersion=v1.36.3" in flags and f"-X {pkg}.gitMinor=36" in flags


def test_the_cache_is_keyed_by_every_pinned_version(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    d = build.bin_dir(build.Versions(kubernetes="v1.36.3", etcd="v3.6.16", kwok="v0.8.0"))
    assert d == tmp_path / "inferops-dynamo" / "k8s-v1.36.3-etcd-v3.6.16-kwok-v0.8.0" / "bin"


def test_a_build_waits_for_the_one_under_way_and_then_finds_nothing_to_do(monkeypatch, tmp_path):
    """`make test` builds in the background while tests run: a test that starts the real backend meanwhile must
    wait for that build, not start a second one beside it (two `go build`s of the same binaries on 2 cores)."""
    import io
    import threading

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    for path in build.binaries().values():
        path.parent.mkdir(parents=True, exist_ok=True)
    out, finished = io.StringIO(), threading.Event()
    worker = threading.Thread(target=lambda: (build.build(out=out), finished.set()))
    with build.building():
        worker.start()
        assert not finished.wait(0.5), "build() ran while another build held the lock"
        for path in build.binaries().values():   # the build under way finishes
            path.touch(mode=0o755)
    worker.join(5)
    assert finished.is_set() and "nothing to do" in out.getvalue()
