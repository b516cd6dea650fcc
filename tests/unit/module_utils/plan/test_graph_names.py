from ansible_collections.inferops.dynamo.plugins.module_utils.plan.graph_names import dynamo_namespace_error

GRAPH = {"kind": "DynamoGraphDeployment", "name": "muse-spark-sglang-aggregate-gb200-kv"}     # 36 characters


def test_a_namespace_that_fits_the_operators_label_is_accepted_up_to_the_last_character():
    assert dynamo_namespace_error("n" * 26, GRAPH) is None                 # 26 + 1 + 36 = 63


def test_one_character_more_is_refused_naming_the_label_and_the_longest_namespace():
    err = dynamo_namespace_error("n" * 27, GRAPH)
    assert err.rule == "dynamo-namespace-too-long"
    assert "nvidia.com/dynamo-namespace=" in err.message and "(64 characters)" in err.message
    assert err.valid == ["-e k8s_namespace=<at most 26 characters>"]


def test_a_standalone_deployment_gets_no_such_label():
    assert dynamo_namespace_error("n" * 60, {"kind": "Deployment", "name": "muse-spark-vllm"}) is None
