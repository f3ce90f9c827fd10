"""The pure core: objects in, verdicts out. No I/O, no clock, no Slack, no kubernetes client.

Three questions, four subpackages, one shared core:

- `diagnosis.triage` answers `/triage NS POD`: `triage.classify.classify` walks the ladder
  (`triage.classify.RUNGS`) and then the node funnel (`triage.classify.FUNNEL`), each rung and step a
  module of `triage.steps`; `triage.funnel` is the protocol they share, `triage.runner` runs the funnel,
  `triage.scheduling` and `triage.resources` hold the scheduler's rules, `triage.evidence` and
  `triage.commands` write the answer;
  `triage.dra` (claims, devices, the allocator, `triage.dra.cel` for the selectors) checks ResourceClaims
  against the cluster's devices, and its `evidence` and `changes` write that part of the answer.
- `diagnosis.jobset` answers `/jobset why NS NAME`: `jobset.explain.explain` reads `jobset.explain.CHECKS`
  top to bottom. It may use `diagnosis.triage` (the leader's triage); triage never imports jobset.
- `diagnosis.lws` answers `kubewhy lws why NS NAME`: `lws.explain.explain` reads `lws.explain.CHECKS`
  over the groups of `lws.group`, the placement checks in `lws.placement`. It shares the JobSet
  explainer's pod triage (`jobset.creation.triage_in`) and restart exits.
- `diagnosis.trainjob` answers `/jobset why NS NAME` when NAME is a TrainJob: `trainjob.explain.CHECKS`
  (its own states), then `jobset.explain.explain` on its JobSet, the runtime in front.
- The core (this package's modules): `objects` (field access on API objects), `quantity`, `names`,
  `relations`, `events`, `dra_objects` (DRA objects of every served version, in one shape),
  `views` (what a reader hands in), `model` (verdicts and the Diagnosis), `missing`,
  and `commands`, the one kubectl command builder (quoting, name checks); `triage.commands`,
  `jobset.commands` and `lws.commands` add the commands only their question suggests.

Where each verdict is decided (a function named after it), in the order the checks run; ARCHITECTURE.md
has the same tables:

| `/triage` verdict | function |
| --- | --- |
| no-request | `triage.steps.no_request.no_request` |
| ok | `triage.steps.ok.ok` |
| gated | `triage.steps.gated.gated` |
| preempting | `triage.steps.preempting.preempting` |
| claim | `triage.steps.claim.claim` |
| label-mismatch | `triage.steps.label_mismatch.label_mismatch` (funnel step) |
| taint | `triage.steps.taint.taint` (funnel step) |
| no-gpu-node | `triage.steps.no_gpu_node.no_gpu_node` (funnel step) |
| allocatable-zero | `triage.steps.allocatable_zero.allocatable_zero` (funnel step) |
| exhausted | `triage.steps.exhausted.exhausted` (funnel step) |
| node-resources | `triage.steps.node_resources.node_resources` (funnel step) |
| host-port | `triage.steps.host_port.host_port` (funnel step) |
| volume | `triage.steps.volume.volume` (funnel step) |
| topology-spread | `triage.steps.topology_spread.topology_spread` (funnel step) |
| pod-affinity | `triage.steps.pod_affinity.pod_affinity` (funnel step) |
| schedulable | `triage.steps.schedulable.schedulable` |

| `/jobset why` verdict | function |
| --- | --- |
| completed | `jobset.explain.completed` |
| failed | `jobset.explain.failed` |
| suspended | `jobset.explain.suspended` |
| webhook-unavailable | `jobset.creation.webhook_unavailable` |
| leader-duplicate | `jobset.creation.leader_duplicate` |
| topology-label-missing | `jobset.creation.topology_label_missing` |
| leader-pending | `jobset.creation.leader_pending` |
| create-rejected | `jobset.creation.create_rejected` |
| restarting | `jobset.explain.restarting` |
| gang-unsatisfiable | `jobset.explain.gang_unsatisfiable` |
| pods-pending | `jobset.explain.pods_pending` |
| starting | `jobset.explain.starting` |
| running | `jobset.explain.running` |

| `kubewhy lws why` verdict | function |
| --- | --- |
| gang-unsatisfiable | `lws.gang.gang_unsatisfiable` |
| leader-pending | `lws.placement.leader_pending` |
| workers-not-created | `lws.placement.workers_not_created` |
| restarting | `lws.explain.restarting` |
| partial-groups | `lws.placement.partial_groups` |
| workers-pending | `lws.placement.workers_pending` |
| update-stuck | `lws.explain.update_stuck` |
| starting | `lws.explain.starting` |
| running | `lws.explain.running` |

| `/jobset why NS TRAINJOB` verdict | function |
| --- | --- |
| deadline-exceeded | `trainjob.explain.deadline_exceeded` |
| runtime-unsupported | `trainjob.explain.runtime_unsupported` |
| suspended | `trainjob.explain.suspended` |
| runtime-missing | `trainjob.explain.runtime_missing` |
| jobset-not-created | `trainjob.explain.jobset_not_created` |
| gang-unsatisfiable | `trainjob.explain.gang_unsatisfiable` |
| waiting-initializer | `trainjob.explain.waiting_initializer` |
"""
