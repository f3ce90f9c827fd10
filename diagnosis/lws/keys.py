"""The labels and annotations the LeaderWorkerSet controller and webhooks write (`upstream.SOURCE`,
`api/leaderworkerset/v1/leaderworkerset_types.go`)."""

GROUP_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/group-index"
WORKER_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"
"""`0` is the leader."""
REVISION_LABEL = "leaderworkerset.sigs.k8s.io/template-revision-hash"
EXCLUSIVE_TOPOLOGY_KEY = "leaderworkerset.sigs.k8s.io/exclusive-topology"
"""On the LWS: one group per topology domain (the node label it names)."""
RECREATE_AFTER_START_KEY = "leaderworkerset.sigs.k8s.io/experimental-recreate-group-after-start"
"""v0.8's annotation for what v0.9 made the restartPolicy `RecreateGroupAfterStart` (still honoured)."""
GANG_GROUP_KEY = "scheduling.k8s.io/group-name"
"""The Volcano PodGroup a pod belongs to: LWS's webhook sets it when Volcano gang scheduling is on."""
