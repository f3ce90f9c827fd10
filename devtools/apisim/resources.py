"""The API surface the simulator serves: resource types, their discovery documents and field labels.

One table, in the order `kubectl api-resources` lists groups. Field labels are the ones the real API
server accepts for each resource (anything else is refused with 400, as there), so a generated
`--field-selector` that a real cluster would reject fails here too.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

KUBERNETES_VERSION = {
    "major": "1",
    "minor": "37",
    "emulationMajor": "1",
    "emulationMinor": "37",
    "minCompatibilityMajor": "1",
    "minCompatibilityMinor": "36",
    "gitVersion": "v1.37.1",
    "gitCommit": "5d5a7d1e2b9a2e7e8c0f9b1d6f3c2a4b8e7d6c5a",
    "gitTreeState": "clean",
    "buildDate": "2026-10-14T09:12:44Z",
    "goVersion": "go1.26.2",
    "compiler": "gc",
    "platform": "linux/amd64",
}

_REASONS = {
    400: "BadRequest",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    410: "Expired",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
}

_ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
_STATUS_VERBS = ("get", "patch", "update")

_EVENT_REF_FIELDS = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(name, verbs) of each subresource: `("log", ("get",))`."""
    field_labels: tuple[str, ...] = ()
    """Field labels beyond metadata.name (and metadata.namespace when namespaced)."""
    field_aliases: tuple[tuple[str, str], ...] = ()
    """(field label, path in the stored object) where they differ (events.k8s.io reads core events)."""
    custom: bool = False
    """A custom resource (CRD): served as unstructured objects, which keep apiVersion/kind in lists."""

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def selectable(self) -> frozenset[str]:
        scope = ("metadata.name", "metadata.namespace") if self.namespaced else ("metadata.name",)
        return frozenset((*scope, *self.field_labels))

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    def discovery(self) -> list[dict[str, Any]]:
        """This resource's entries in its group version's APIResourceList."""
        entry: dict[str, Any] = {
            "name": self.plural,
            "singularName": self.singular,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": list(_ALL_VERBS),
            "storageVersionHash": f"{self.kind[:4].lower()}sim=",
        }
        if self.short_names:
            entry["shortNames"] = list(self.short_names)
        if self.categories:
            entry["categories"] = list(self.categories)
        subs = [
            {
                "name": f"{self.plural}/{sub}",
                "singularName": "",
                "namespaced": self.namespaced,
                "kind": self.kind,
                "verbs": list(verbs),
            }
            for sub, verbs in self.subresources
        ]
        return [entry, *subs]


_STATUS = (("status", _STATUS_VERBS),)


def _core(kind: str, plural: str, namespaced: bool = True, **more: Any) -> Resource:
    return Resource("", "v1", kind, plural, namespaced, **more)


def _crd(group: str, version: str, kind: str, plural: str, namespaced: bool = True, **more: Any) -> Resource:
    return Resource(group, version, kind, plural, namespaced, subresources=_STATUS, custom=True, **more)


# fmt: off
RESOURCES: tuple[Resource, ...] = (
    _core("Namespace", "namespaces", False, short_names=("ns",), subresources=_STATUS,
          field_labels=("status.phase",)),
    _core("Node", "nodes", False, short_names=("no",), subresources=(*_STATUS, ("proxy", ("get",))),
          field_labels=("spec.unschedulable",)),
    _core("Pod", "pods", short_names=("po",), categories=("all",),
          subresources=(("log", ("get",)), *_STATUS, ("exec", ("create", "get"))),
          field_labels=("spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
                        "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP",
                        "status.podIPs", "status.nominatedNodeName")),
    _core("PersistentVolumeClaim", "persistentvolumeclaims", short_names=("pvc",), subresources=_STATUS),
    _core("PersistentVolume", "persistentvolumes", False, short_names=("pv",), subresources=_STATUS),
    _core("Event", "events", short_names=("ev",),
          field_labels=(*(f"involvedObject.{f}" for f in _EVENT_REF_FIELDS), "reason", "reportingComponent",
                        "source", "type"),
          field_aliases=(("source", "source.component"),)),
    _core("ResourceQuota", "resourcequotas", short_names=("quota",), subresources=_STATUS),
    _core("LimitRange", "limitranges", short_names=("limits",)),
    _core("Service", "services", short_names=("svc",), categories=("all",), subresources=_STATUS),
    _core("Endpoints", "endpoints", short_names=("ep",)),
    _core("ServiceAccount", "serviceaccounts", short_names=("sa",)),
    _core("ConfigMap", "configmaps", short_names=("cm",)),
    Resource("apps", "v1", "Deployment", "deployments", True, short_names=("deploy",), categories=("all",),
             subresources=(*_STATUS, ("scale", _STATUS_VERBS))),
    Resource("apps", "v1", "ReplicaSet", "replicasets", True, short_names=("rs",), categories=("all",),
             subresources=_STATUS, field_labels=("status.replicas",)),
    Resource("apps", "v1", "DaemonSet", "daemonsets", True, short_names=("ds",), categories=("all",),
             subresources=_STATUS),
    Resource("apps", "v1", "StatefulSet", "statefulsets", True, short_names=("sts",), categories=("all",),
             subresources=_STATUS),
    Resource("events.k8s.io", "v1", "Event", "events", True, short_names=("ev",),
             field_labels=(*(f"regarding.{f}" for f in _EVENT_REF_FIELDS), "reason", "reportingController",
                           "type"),
             field_aliases=(*((f"regarding.{f}", f"involvedObject.{f}") for f in _EVENT_REF_FIELDS),
                            ("reportingController", "reportingComponent"))),
    Resource("batch", "v1", "Job", "jobs", True, categories=("all",), subresources=_STATUS,
             field_labels=("status.successful",)),
    Resource("batch", "v1", "CronJob", "cronjobs", True, short_names=("cj",), categories=("all",),
             subresources=_STATUS),
    Resource("coordination.k8s.io", "v1", "Lease", "leases", True),
    Resource("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", True),
    Resource("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", False),
    Resource("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False, short_names=("pc",)),
    Resource("storage.k8s.io", "v1", "StorageClass", "storageclasses", False, short_names=("sc",)),
    Resource("storage.k8s.io", "v1", "CSINode", "csinodes", False),
    Resource("storage.k8s.io", "v1", "CSIDriver", "csidrivers", False),
    Resource("storage.k8s.io", "v1", "CSIStorageCapacity", "csistoragecapacities", True),
    Resource("resource.k8s.io", "v1", "DeviceClass", "deviceclasses", False),
    Resource("resource.k8s.io", "v1", "ResourceClaim", "resourceclaims", True, subresources=_STATUS),
    Resource("resource.k8s.io", "v1", "ResourceClaimTemplate", "resourceclaimtemplates", True),
    Resource("resource.k8s.io", "v1", "ResourceSlice", "resourceslices", False,
             field_labels=("spec.driver", "spec.nodeName")),
    _crd("jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets"),
    _crd("kueue.x-k8s.io", "v1beta1", "Workload", "workloads", short_names=("wl",)),
    _crd("kueue.x-k8s.io", "v1beta1", "LocalQueue", "localqueues", short_names=("queue", "queues", "lq")),
    _crd("kueue.x-k8s.io", "v1beta1", "ClusterQueue", "clusterqueues", False, short_names=("cq",)),
    _crd("kueue.x-k8s.io", "v1beta1", "ResourceFlavor", "resourceflavors", False,
         short_names=("flavor", "flavors", "rf")),
    _crd("karpenter.sh", "v1", "NodePool", "nodepools", False, categories=("karpenter",)),
    _crd("karpenter.sh", "v1", "NodeClaim", "nodeclaims", False, categories=("karpenter",)),
    _crd("autoscaling.x-k8s.io", "v1", "ProvisioningRequest", "provisioningrequests",
         short_names=("provreq", "provreqs")),
    Resource("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet", "leaderworkersets", True,
             short_names=("lws",), subresources=(*_STATUS, ("scale", _STATUS_VERBS)), custom=True),
    _crd("trainer.kubeflow.org", "v1alpha1", "TrainJob", "trainjobs"),
    _crd("trainer.kubeflow.org", "v1alpha1", "TrainingRuntime", "trainingruntimes"),
    _crd("trainer.kubeflow.org", "v1alpha1", "ClusterTrainingRuntime", "clustertrainingruntimes", False),
    _crd("scheduling.x-k8s.io", "v1alpha1", "PodGroup", "podgroups", short_names=("pg", "pgs")),
    _crd("scheduling.volcano.sh", "v1beta1", "PodGroup", "podgroups", short_names=("pg", "podgroup-v1beta1")),
)

# fmt: on

CORE_EVENTS = next(r for r in RESOURCES if r.group == "" and r.plural == "events")
NEW_EVENTS = next(r for r in RESOURCES if r.group == "events.k8s.io")


def storage_of(resource: Resource) -> Resource:
    """Where a resource's objects are kept: events.k8s.io/v1 is another view of the core events."""
    return CORE_EVENTS if resource is NEW_EVENTS else resource


DRA_GROUP = "resource.k8s.io"
_DRA_BETAS = (f"{DRA_GROUP}/v1beta1", f"{DRA_GROUP}/v1beta2")


def served_version(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """The object as the simulator stores and serves it: `resource.k8s.io` objects of v1beta1 and
    v1beta2 converted to v1 (the one version served, as a 1.34 API server serves by default), the way
    the API server converts between the versions of one group."""
    api_version = str(obj.get("apiVersion", ""))
    if api_version not in _DRA_BETAS:
        return obj
    converted = copy.deepcopy(dict(obj))
    converted["apiVersion"] = f"{DRA_GROUP}/v1"
    if api_version.endswith("v1beta2"):
        return converted
    body = converted.get("spec") or {}
    if converted.get("kind") == "ResourceSlice":
        devices = body.get("devices") or []
        body["devices"] = [{"name": d.get("name"), **(d.get("basic") or {})} for d in devices]
    kind = str(converted.get("kind"))
    specs = {"ResourceClaim": body, "ResourceClaimTemplate": body.get("spec") or {}}.get(kind)
    for request in ((specs or {}).get("devices") or {}).get("requests") or []:
        if "firstAvailable" not in request and "exactly" not in request:
            fields = {k: request.pop(k) for k in list(request) if k != "name"}
            request["exactly"] = fields
    return converted


def by_kind(api_version: str, kind: str) -> Resource | None:
    """The resource that stores objects of this apiVersion and kind (events of both APIs → core)."""
    for resource in RESOURCES:
        if resource.group_version == api_version and resource.kind == kind:
            return storage_of(resource)
    return None


def lookup(group: str, version: str, plural: str) -> Resource | None:
    for resource in RESOURCES:
        if (resource.group, resource.version, resource.plural) == (group, version, plural):
            return resource
    return None


def group_versions(absent: frozenset[str]) -> dict[str, list[Resource]]:
    """Group version → its resources, for the groups the simulated cluster has, in table order."""
    served: dict[str, list[Resource]] = {}
    for resource in RESOURCES:
        if resource.group not in absent:
            served.setdefault(resource.group_version, []).append(resource)
    return served


def api_versions(address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}],
    }


def api_group(name: str, version: str) -> dict[str, Any]:
    gv = {"groupVersion": f"{name}/{version}", "version": version}
    return {"kind": "APIGroup", "apiVersion": "v1", "name": name, "versions": [gv], "preferredVersion": gv}


def api_group_list(absent: frozenset[str]) -> dict[str, Any]:
    groups = []
    for gv in group_versions(absent):
        if "/" in gv:
            name, version = gv.split("/", 1)
            preferred = {"groupVersion": gv, "version": version}
            groups.append({"name": name, "versions": [preferred], "preferredVersion": preferred})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def resource_list(group_version: str, resources: list[Resource]) -> dict[str, Any]:
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": [entry for r in resources for entry in r.discovery()],
    }


def status_object(code: int, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """An error as the API server writes it: a `Status` object (the body of an error answer, or the
    object of a watch's ERROR event)."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": _REASONS.get(code, "Unknown"),
        "details": details or {},
        "code": code,
    }
