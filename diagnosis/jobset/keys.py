"""The label and annotation keys JobSet, the Job controller and Kueue put on a JobSet's objects
(kubernetes-sigs/jobset `api/jobset/v1alpha2/jobset_types.go` and `pkg/constants/constants.go`; the
Job controller's `batch.kubernetes.io/job-completion-index`; Kueue's `kueue.x-k8s.io/queue-name`).
The JobSet-name label itself is `relations.JOBSET_NAME_LABEL`, which the readers share."""

from __future__ import annotations

REPLICATED_JOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
JOB_INDEX_LABEL = "jobset.sigs.k8s.io/job-index"
RESTART_ATTEMPT_LABEL = "jobset.sigs.k8s.io/restart-attempt"
"""`status.restarts` when the Job was created: Jobs of earlier attempts carry a smaller number."""
COMPLETION_INDEX_KEY = "batch.kubernetes.io/job-completion-index"
"""Annotation (and, on newer Kubernetes, label) of an Indexed Job's pod; index 0 is the leader."""
EXCLUSIVE_TOPOLOGY_KEY = "alpha.jobset.sigs.k8s.io/exclusive-topology"
"""Annotation whose value is the node label key of exclusive placement."""
NODE_SELECTOR_STRATEGY_KEY = "alpha.jobset.sigs.k8s.io/node-selector"
"""Annotation of the node-selector strategy, under which JobSet's pod webhooks step aside."""
QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
