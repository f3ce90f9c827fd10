"""The JobSet corpus builder: writes the JobSet corpus (`tests/corpus/jobset/*.json`, `index.yaml`), the
JobSet demo snapshots (`bot/demo/jobset-*.json`) and the /triage cases of the placement filters.

Each snapshot is a `kind: List` shaped as `kubectl get nodes,pods,events,jobs,jobsets,resourcequotas
-A -o json` prints it, with objects as the controllers write them: the JobSet after its webhook's
defaulting, child Jobs `<js>-<rj>-<i>` with JobSet's labels, annotations and ownerReferences, pods
named by the Job controller (`<job>-<index>-<5 chars>`) with completion-index annotations and labels,
events as the Job controller, the JobSet controller and the scheduler record them, and nodes with
GKE/EKS/AKS labels and taints. Everything is derived from a seed per snapshot, so running this again
writes the same files:

    python -m devtools.jobset_corpus

The builders each model what one controller writes: `world` (the snapshot and its seeded random
source), `nodes`, `jobs` (the JobSet, its child Jobs and their status), `pods`, `events`, `objects`
(Kueue, quotas, runtime classes, other workloads) and `storage`. Each snapshot is one scenario
function in the module of its verdict family (`completion`, `suspension`, `creation`, `restarts`,
`running`, `exclusive`), registered with `@scenario` (its seed, file and the verdict `index.yaml`
records for it); `scenario` holds the registry and what several families share. The /triage cases
are in `triage_volumes`, `triage_placement` and `triage_started` (placed pods that do not run).
"""
