"""What watches a target is deployed only where it can be: a cluster without the prometheus-operator's CRDs gets the
target unwatched and the run says why; -e monitoring=false leaves it out without a word. (Deployed, recorded and
removed: test_deploy_targets.py and real_backend/test_teardown.py.)"""

import pytest
from deploy_helpers import TARGET_ARGS

pytestmark = [pytest.mark.cluster]

SKIPPED = "Monitoring of sglang-agg-gb300 on rehearsal is skipped: the cluster serves no monitoring.coreos.com/v1 PrometheusRule"


def test_a_cluster_without_the_monitoring_crds_gets_the_target_unwatched_and_is_told(deploy_env, kubesim_factory):
    env = deploy_env(cluster=kubesim_factory(nodes="gb300:1", monitoring_crds=False))
    run = env.run("deploy.yml", "--check", *TARGET_ARGS["sglang-agg-gb300"])
    assert run.rc == 0, run.output[-3000:]
    assert SKIPPED in " ".join(run.stdout.split())
    assert "PrometheusRule muse-spark" not in run.stdout


def test_monitoring_false_leaves_it_out_without_a_word(deploy_env):
    env = deploy_env()
    watched = env.run("deploy.yml", "--check", *TARGET_ARGS["sglang-agg-gb300"])
    assert watched.rc == 0, watched.output[-3000:]
    assert "PrometheusRule muse-spark-sglang-aggregate-gb300-objectives" in watched.stdout
    quiet = env.run("deploy.yml", "--check", *TARGET_ARGS["sglang-agg-gb300"], "-e", "monitoring=false")
    assert quiet.rc == 0, quiet.output[-3000:]
    assert "PrometheusRule" not in quiet.stdout and "dashboard" not in quiet.stdout
    assert "Monitoring of" not in quiet.stdout
