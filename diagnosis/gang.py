"""Gang scheduling: the PodGroups a workload's pods belong to, and whether a group's gang can be met.

Two PodGroup APIs: scheduler-plugins' coscheduling (`scheduling.x-k8s.io/v1alpha1`, a pod names its
group by the label `scheduling.x-k8s.io/pod-group`; `apis/scheduling/v1alpha1/types.go`) and
Volcano's (`scheduling.volcano.sh/v1beta1`, by the annotation `scheduling.k8s.io/group-name`;
volcano-sh/apis `pkg/apis/scheduling/v1beta1/labels.go`). Both hold every pod of the group until
`spec.minMember` of them can be placed together (coscheduling's PreFilter: `cannot find enough
sibling pods`; Volcano's gang plugin: `tasks in gang unschedulable`), and Volcano admits the group
only when `spec.minResources` fit at once. Trainer names the group after the TrainJob on every pod
of its JobSet; LeaderWorkerSet's Volcano provider makes one per group (kubeflow/trainer@v2.3.0
`pkg/runtime/framework/plugins/{coscheduling,volcano}`; `lws.upstream.SOURCE`,
`pkg/schedulerprovider/volcano_provider.go`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from diagnosis import events
from diagnosis.objects import Object, labels, mapping, name, namespace, spec, status, text
from diagnosis.objects import annotations as annotations_of  # the bare name is the __future__ import
from diagnosis.quantity import exact

COSCHEDULING = "scheduling.x-k8s.io"
VOLCANO = "scheduling.volcano.sh"
VERSIONS = {COSCHEDULING: "v1alpha1", VOLCANO: "v1beta1"}
"""The served version of each PodGroup API."""
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
"""Coscheduling: the label naming a pod's PodGroup."""
GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
"""Volcano: the annotation naming a pod's PodGroup."""


def group_of(pod: Object) -> tuple[str, str] | None:
    """(API group, name) of the PodGroup the pod belongs to, or None."""
    if named := text(labels(pod).get(POD_GROUP_LABEL)):
        return COSCHEDULING, named
    if named := text(annotations_of(pod).get(GROUP_NAME_ANNOTATION)):
        return VOLCANO, named
    return None


def named_by(pods: Iterable[Object]) -> set[tuple[str, str, str]]:
    """(API group, namespace, name) of every PodGroup the pods name."""
    return {(found[0], namespace(p), found[1]) for p in pods if (found := group_of(p)) is not None}


def api_of(group: Object) -> str:
    return text(group.get("apiVersion")).partition("/")[0]


def members(group: Object, pods: Iterable[Object]) -> list[Object]:
    """The pods that name the PodGroup."""
    return [
        p for p in pods if group_of(p) == (api_of(group), name(group)) and namespace(p) == namespace(group)
    ]


@dataclass(frozen=True)
class Gang:
    """What one PodGroup asks, against the pods that exist and the nodes read."""

    group: Object
    pods: int
    """Its pods that exist now (not ended)."""
    lines: tuple[str, ...]
    """The evidence: the group, then each need that cannot be met."""
    short: tuple[str, ...]
    """The resources `minResources` asks beyond what every node read allocates together."""

    @property
    def min_member(self) -> int:
        value = spec(self.group).get("minMember")
        return value if isinstance(value, int) and not isinstance(value, bool) else 0


def weigh(group: Object, pods: int, nodes: Iterable[Object]) -> Gang:
    """The PodGroup's `minMember` against its `pods` that exist, and its `minResources` against what
    every node read allocates together (a gang asks them at once)."""
    listed = tuple(nodes)
    least = spec(group).get("minMember")
    lines = [
        f"PodGroup {name(group)} ({api_of(group)}): minMember {least}, phase "
        f"{text(status(group).get('phase')) or '?'}; {pods} of its pods exist now."
    ]
    short = []
    for resource, amount in sorted(mapping(spec(group).get("minResources")).items()):
        total = sum(exact(mapping(status(n).get("allocatable")).get(resource)) or 0 for n in listed)
        if total < (exact(amount) or 0):
            short.append(resource)
            lines.append(
                f"minResources {resource}={amount}: the {len(listed)} nodes read allocate {total} in all."
            )
    return Gang(group, pods, tuple(lines), tuple(short))


def refusals(pods: Iterable[Object], about: Iterable[Object]) -> list[str]:
    """What the scheduler said of the gang's pods (their FailedScheduling events among `about`), two
    lines at most."""
    found = tuple(about)
    return [
        f"Pod {name(p)}: `{events.message(e)}`."
        for p in pods
        for e in found
        if events.reason(e) == "FailedScheduling" and events.is_about(e, p)
    ][:2]
