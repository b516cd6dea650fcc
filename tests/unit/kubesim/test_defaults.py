"""kubesim.defaults: what kube-apiserver leaves out of an omitempty NodeSpec."""

from kubesim import defaults


def node(spec):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "spec": spec}


def test_an_empty_taint_list_and_a_false_unschedulable_are_not_stored():
    n = node({"taints": [], "unschedulable": False, "podCIDR": "10.0.0.0/24"})
    defaults.apply("", "Node", n)
    assert n["spec"] == {"podCIDR": "10.0.0.0/24"}


def test_a_cordoned_tainted_node_keeps_both():
    n = node({"taints": [{"key": "k", "effect": "NoSchedule"}], "unschedulable": True})
    defaults.apply("", "Node", n)
    assert n["spec"]["unschedulable"] is True
    assert [t["key"] for t in n["spec"]["taints"]] == ["k"]


def test_a_noexecute_taint_gets_the_time_it_was_added():
    n = node({"taints": [{"key": "k", "effect": "NoExecute"}]})
    defaults.apply("", "Node", n)
    assert n["spec"]["taints"][0]["timeAdded"].endswith("Z")
