# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The names Dynamo and this collection put on Kubernetes objects: API versions, labels, annotations and the
component types that run engines. Every other module reads them from here, so a rename happens once."""

# Dynamo's API groups (the operator's CRDs and the DRA driver's ComputeDomain)
DGD_API_VERSION = "nvidia.com/v1beta1"
COMPUTE_DOMAIN_API_VERSION = "resource.nvidia.com/v1beta1"

# labels the Dynamo operator sets on the pods of a DynamoGraphDeployment
DGD_LABEL = "nvidia.com/dynamo-graph-deployment-name"
COMPONENT_LABEL = "nvidia.com/dynamo-component"
COMPONENT_TYPE_LABEL = "nvidia.com/dynamo-component-type"
# the component types whose pods run an engine (and hold GPUs); a frontend or a planner does not
WORKER_TYPES = ("worker", "prefill", "decode")
# the operator's annotation for how a DGD rolls its workers (RollingUpdate unless Recreate)
STRATEGY_ANNOTATION = "nvidia.com/deployment-strategy"

# this collection's labels
MODEL_LABEL = "inferops.dynamo/model"
TARGET_LABEL = "inferops.dynamo/target"
RECORD_LABEL = "inferops.dynamo/record"
REVISION_LABEL = "inferops.dynamo/revision"
RUN_ID_LABEL = "inferops.dynamo/run-id"
PREPULL_LABEL = "inferops.dynamo/prepull"
OWN_COMPONENT_LABEL = "inferops.dynamo/component"

# this collection's annotations
FINGERPRINT_ANNOTATION = "inferops.dynamo/fingerprint"
ATTEMPT_ANNOTATION = "inferops.dynamo/attempt"
MAX_REPLICAS_ANNOTATION = "inferops.dynamo/autoscaling-max-replicas"
PLANNER_CONFIG_DIGEST_ANNOTATION = "inferops.dynamo/planner-config-digest"
EXPECTED_ANNOTATIONS = {
    "ttft_p50_ms": "inferops.dynamo/expected-ttft-p50-ms",
    "output_tokens_per_s_per_user_p50": "inferops.dynamo/expected-output-tps-per-user-p50",
    "concurrency": "inferops.dynamo/expected-concurrency",
    "output_tokens_per_s": "inferops.dynamo/expected-output-tps",
}
