# ruff: noqa: E501  (controller and scheduler messages are kept whole, as the API serves them)
"""Storage for the /triage volume cases: StorageClasses, PVCs, PVs, CSI drivers, their published
capacity and CSINodes."""

from __future__ import annotations

from devtools.jobset_corpus.world import Obj, World, ts


def storage_class(
    w: World, name: str, provisioner: str, mode: str, *, parameters: dict[str, str] | None = None,
    allowed: list[Obj] | None = None,
) -> Obj:
    return w.add(
        {
            "allowVolumeExpansion": provisioner != "kubernetes.io/no-provisioner",
            **({"allowedTopologies": allowed} if allowed else {}),
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"creationTimestamp": ts(90000), "name": name, "resourceVersion": w.rv(), "uid": w.uid()},
            **({"parameters": parameters} if parameters else {}),
            "provisioner": provisioner,
            "reclaimPolicy": "Delete" if provisioner != "kubernetes.io/no-provisioner" else "Retain",
            "volumeBindingMode": mode,
        }
    )


def claim(
    w: World, ns: str, name: str, storage_class_name: str, size: str, *, selected_node: str = "",
    access: str = "ReadWriteOnce",
) -> Obj:
    """A PVC as the API serves it before binding (`bind` binds it to a PV)."""
    annotations = {"volume.kubernetes.io/selected-node": selected_node} if selected_node else {}
    return w.add(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                **({"annotations": annotations} if annotations else {}),
                "creationTimestamp": ts(3000),
                "finalizers": ["kubernetes.io/pvc-protection"],
                "name": name,
                "namespace": ns,
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": {
                "accessModes": [access],
                "resources": {"requests": {"storage": size}},
                "storageClassName": storage_class_name,
                "volumeMode": "Filesystem",
            },
            "status": {"phase": "Pending"},
        }
    )


def volume(
    w: World, name: str, storage_class_name: str, size: str, *, driver: str = "", handle: str = "",
    affinity: tuple[str, list[str]] | None = None, labels: dict[str, str] | None = None,
    local_path: str = "", bound_to: Obj | None = None, access: str = "ReadWriteOnce",
) -> Obj:
    """A PV: a CSI volume (`driver`, `handle`) or a local one (`local_path`), with a required node
    affinity `(key, values)`, and bound to the PVC `bound_to` (which is then bound to it)."""
    source: Obj = (
        {"csi": {"driver": driver, "fsType": "ext4", "volumeHandle": handle}}
        if driver
        else {"local": {"path": local_path}}
    )
    spec: Obj = {
        "accessModes": [access],
        "capacity": {"storage": size},
        **source,
        "persistentVolumeReclaimPolicy": "Delete" if driver else "Retain",
        "storageClassName": storage_class_name,
        "volumeMode": "Filesystem",
    }
    if affinity is not None:
        key, values = affinity
        term = {"matchExpressions": [{"key": key, "operator": "In", "values": values}]}
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [term]}}
    phase = "Available"
    if bound_to is not None:
        meta = bound_to["metadata"]
        spec["claimRef"] = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "name": meta["name"],
            "namespace": meta["namespace"],
            "resourceVersion": meta["resourceVersion"],
            "uid": meta["uid"],
        }
        phase = "Bound"
        bound_to["spec"]["volumeName"] = name
        bound_to["metadata"].setdefault("annotations", {}).update(
            {
                "pv.kubernetes.io/bind-completed": "yes",
                "pv.kubernetes.io/bound-by-controller": "yes",
                **({"volume.beta.kubernetes.io/storage-provisioner": driver,
                    "volume.kubernetes.io/storage-provisioner": driver} if driver else {}),
            }
        )
        bound_to["status"] = {"accessModes": [access], "capacity": {"storage": size}, "phase": "Bound"}
    return w.add(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {
                "annotations": {"pv.kubernetes.io/provisioned-by": driver} if driver else {},
                "creationTimestamp": ts(2990),
                "finalizers": ["kubernetes.io/pv-protection"],
                **({"labels": labels} if labels else {}),
                "name": name,
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": spec,
            "status": {"lastPhaseTransitionTime": ts(2990), "phase": phase},
        }
    )


def pod_volume(volume_name: str, claim_name: str) -> Obj:
    """The pod spec volume `volume_name` backed by the PVC `claim_name`."""
    return {"volumes": [{"name": volume_name, "persistentVolumeClaim": {"claimName": claim_name}}]}


PD_CSI = "pd.csi.storage.gke.io"
GKE_TOPOLOGY_ZONE = "topology.gke.io/zone"


def csi_driver(w: World, name: str) -> Obj:
    """The CSIDriver a CSI driver's chart installs, opted into storage capacity tracking."""
    return w.add(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIDriver",
            "metadata": {"creationTimestamp": ts(90000), "name": name, "resourceVersion": w.rv(), "uid": w.uid()},
            "spec": {
                "attachRequired": False,
                "fsGroupPolicy": "ReadWriteOnceWithFSType",
                "podInfoOnMount": True,
                "requiresRepublish": False,
                "seLinuxMount": False,
                "storageCapacity": True,
                "volumeLifecycleModes": ["Persistent"],
            },
        }
    )


def capacity_class(w: World, name: str, driver: str, parameters: dict[str, str]) -> Obj:
    """A WaitForFirstConsumer StorageClass of a CSI driver that publishes its capacity."""
    csi_driver(w, driver)
    return storage_class(w, name, driver, "WaitForFirstConsumer", parameters=parameters)


def local_capacity(
    w: World, ns: str, of: Obj, key: str, node: Obj, size: str, maximum: str = ""
) -> Obj:
    """The CSIStorageCapacity the external-provisioner of the class `of` publishes for one node's
    topology segment (`key`: the driver's topology label, which its node plugin puts on the node)."""
    host = node["metadata"]["name"]
    node["metadata"]["labels"][key] = host
    return w.add(
        {
            "apiVersion": "storage.k8s.io/v1",
            "capacity": size,
            "kind": "CSIStorageCapacity",
            **({"maximumVolumeSize": maximum} if maximum else {}),
            "metadata": {
                "creationTimestamp": ts(5000),
                "generateName": "csisc-",
                "labels": {
                    "csi.storage.k8s.io/drivername": of["provisioner"],
                    "csi.storage.k8s.io/managed-by": "external-provisioner",
                },
                "name": f"csisc-{w.suffix()}",
                "namespace": ns,
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "nodeTopology": {"matchLabels": {key: host}},
            "storageClassName": of["metadata"]["name"],
        }
    )


ONE_POD = "ReadWriteOncePod"


def one_pod_checkpoint(w: World, ns: str, name: str, size: str) -> Obj:
    """A ReadWriteOncePod PD-backed claim, bound, in us-central1-a (where the H100 nodes are)."""
    premium = storage_class(w, "premium-rwo", PD_CSI, "WaitForFirstConsumer", parameters={"type": "pd-ssd"})
    pvc = claim(w, ns, name, premium["metadata"]["name"], size, access=ONE_POD)
    pv = f"pvc-{pvc['metadata']['uid']}"
    volume(w, pv, "premium-rwo", size, driver=PD_CSI, access=ONE_POD,
           handle=f"projects/ml-platform-prod/zones/us-central1-a/disks/{pv}",
           affinity=(GKE_TOPOLOGY_ZONE, ["us-central1-a"]), bound_to=pvc)
    return pvc


def csinode(w: World, node: Obj, driver: str, count: int) -> Obj:
    """The CSINode the kubelet registers for `node`: `driver` may attach `count` volumes."""
    name = node["metadata"]["name"]
    return w.add(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {
                "annotations": {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/aws-ebs"},
                "creationTimestamp": node["metadata"]["creationTimestamp"],
                "name": name,
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Node", "name": name, "uid": node["metadata"]["uid"]}
                ],
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": {
                "drivers": [
                    {
                        "allocatable": {"count": count},
                        "name": driver,
                        "nodeID": node["spec"]["providerID"].rsplit("/", 1)[-1] or name,
                        "topologyKeys": ["kubernetes.io/os", "topology.ebs.csi.aws.com/zone", "topology.kubernetes.io/zone"],
                    }
                ]
            },
        }
    )
