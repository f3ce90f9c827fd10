"""A generated cluster (`devtools.cluster.generate`) whose NVIDIA GPUs are served by the DRA driver
instead of the device plugin, for the benchmarks: the same nodes, pods and pending work, with

- no `nvidia.com/gpu` in the GPU nodes' capacity and allocatable, and one ResourceSlice per node
  publishing its GPUs (`devtools.dra.gpu_devices`, the product read from the node's labels);
- each pod that asked `nvidia.com/gpu: N` asking instead, through a claim made from the template
  `gpus-N`, for N devices of class `gpu.nvidia.com`: running pods' claims allocated on their node's
  GPUs and reserved for them, pending pods' claims not allocated;
- the NVIDIA driver's DeviceClasses.

TPUs stay extended resources (their device plugin), as on GKE where the TPU DRA driver is opt-in.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from devtools import dra
from devtools.cluster import Cluster, Obj

RESOURCE = "nvidia.com/gpu"
GPU_LOST = [{"effect": "NoSchedule", "key": "gpu.nvidia.com/gpu-lost", "timeAdded": "2026-11-29T06:12:00Z"}]


@dataclass(frozen=True)
class DraCluster:
    cluster: Cluster
    dra_objects: list[Obj]

    def objects(self) -> list[Obj]:
        return [*self.cluster.objects(), *self.dra_objects]


def _product(node: Obj) -> dra.Gpu:
    labels = node["metadata"]["labels"]
    product = labels.get("nvidia.com/gpu.product", "NVIDIA-GPU").replace("-", " ")
    memory = f"{labels.get('nvidia.com/gpu.memory', '16384')}Mi"
    family = labels.get("nvidia.com/gpu.family", "unknown").capitalize()
    return dra.Gpu(product, family, "9.0.0", memory)


def _asked(pod: Obj) -> int:
    return sum(
        int(c["resources"].get("limits", {}).get(RESOURCE, 0)) for c in pod["spec"].get("containers", [])
    )


def on_dra(cluster: Cluster) -> DraCluster:
    """The cluster converted in place (its nodes and GPU pods are replaced by new objects)."""
    objects: list[Obj] = [*dra.device_classes()]
    next_gpu: defaultdict[str, int] = defaultdict(int)
    for i, node in enumerate(cluster.nodes):
        count = int(node["status"].get("capacity", {}).get(RESOURCE, 0))
        if not count:
            continue
        status = dict(node["status"])
        name = node["metadata"]["name"]
        for part in ("capacity", "allocatable"):
            status[part] = {k: v for k, v in status[part].items() if k != RESOURCE}
        cluster.nodes[i] = {**node, "status": status}
        # Where the device plugin reported allocatable 0 (unhealthy GPUs), the DRA driver taints them.
        lost = (
            {f"gpu-{g}": GPU_LOST for g in range(count)}
            if node["status"]["allocatable"][RESOURCE] == "0"
            else {}
        )
        objects.append(
            dra.resource_slice(name, dra.gpu_devices(name, _product(node), range(count), taints=lost))
        )
    namespaces: dict[str, set[int]] = defaultdict(set)
    for i, pod in enumerate(cluster.pods):
        count = _asked(pod)
        if not count:
            continue
        meta, spec = pod["metadata"], pod["spec"]
        namespace, pod_name, node_name = meta["namespace"], meta["name"], spec.get("nodeName")
        namespaces[namespace].add(count)
        generated = f"{pod_name}-gpus-{meta['uid'][:5]}"
        containers = [
            {
                **c,
                "resources": {
                    **{k: {r: q for r, q in v.items() if r != RESOURCE} for k, v in c["resources"].items()},
                    "claims": [{"name": "gpus"}],
                },
            }
            if RESOURCE in c["resources"].get("limits", {})
            else c
            for c in spec["containers"]
        ]
        template = f"gpus-{count}"
        cluster.pods[i] = {
            **pod,
            "spec": {
                **spec,
                "containers": containers,
                "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": template}],
            },
            "status": {
                **pod["status"],
                "resourceClaimStatuses": [{"name": "gpus", "resourceClaimName": generated}],
            },
        }
        alloc = None
        if node_name and pod["status"].get("phase") not in ("Succeeded", "Failed"):
            first = next_gpu[node_name]
            next_gpu[node_name] += count
            alloc = dra.allocation(node_name, [("gpus", f"gpu-{g}") for g in range(first, first + count)])
        claim = dra.resource_claim(
            namespace,
            generated,
            dra.claim_spec([dra.request("gpus", count=count)]),
            alloc,
            [pod_name] if alloc else None,
            owner_pod=pod_name,
            pod_claim="gpus",
        )
        claim["metadata"]["ownerReferences"][0]["uid"] = meta["uid"]
        for entry in claim["status"].get("reservedFor", []):
            entry["uid"] = meta["uid"]
        objects.append(claim)
    for namespace, counts in sorted(namespaces.items()):
        objects += [
            dra.claim_template(namespace, f"gpus-{n}", dra.claim_spec([dra.request("gpus", count=n)]))
            for n in sorted(counts)
        ]
    return DraCluster(cluster, objects)
