"""The DRA lab (`bot/demo/gpu-dra.json`) and the DRA snapshots of the triage corpus, written from
`devtools.dra`: `python -m devtools.dra_lab` rewrites them (a test checks the files match).

The lab: five nodes whose GPUs the NVIDIA DRA driver serves (A100 40 GB and 80 GB, an H100 with one GPU
in MIG mode, two L4s the driver has tainted, and a CPU node), the driver's DeviceClasses, and one pod
per DRA outcome.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from devtools import dra
from devtools.dra import A100_40, A100_80, H100, L4, Mig, Obj

ROOT = Path(__file__).resolve().parent.parent
NS = "dra-lab"

CANNOT = (
    "0/{n} nodes are available: {n} cannot allocate all claims. still not schedulable, preemption: "
    "0/{n} nodes are available: {n} Preemption is not helpful for scheduling."
)
MIG_1G = [Mig("1g.10gb", 19, start, 1, "9984Mi", 16) for start in range(7)]
GPU_LOST = [{"effect": "NoSchedule", "key": "gpu.nvidia.com/gpu-lost", "timeAdded": "2026-11-29T06:12:00Z"}]
XID_79 = [
    {"effect": "NoSchedule", "key": "gpu.nvidia.com/xid", "value": "79", "timeAdded": "2026-11-29T05:40:00Z"}
]
MEMORY_40 = "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"


def _pending(name: str, claims: list[Obj], nodes: int, **extra: object) -> list[Obj]:
    message = CANNOT.format(n=nodes)
    return [
        dra.pod(NS, name, claims, message=message, **extra),  # type: ignore[arg-type]
        dra.event(NS, name, "FailedScheduling", message, "default-scheduler"),
    ]


def lab(version: str = "v1") -> list[Obj]:
    spec = dra.claim_spec
    items: list[Obj] = [
        dra.node("dra-a100-0", A100_40, 4),
        dra.node("dra-a100-1", A100_80, 8),
        dra.node("dra-h100-0", H100, 2),
        dra.node("dra-l4-0", L4, 2),
        dra.node("cpu-0", None),
        *dra.device_classes(version),
        dra.resource_slice(
            "dra-a100-0", dra.gpu_devices("dra-a100-0", A100_40, range(4), version=version), version
        ),
        dra.resource_slice(
            "dra-a100-1", dra.gpu_devices("dra-a100-1", A100_80, range(8), version=version), version
        ),
        dra.resource_slice(
            "dra-h100-0",
            dra.gpu_devices("dra-h100-0", H100, range(2), migs={0: MIG_1G}, version=version),
            version,
        ),
        dra.resource_slice(
            "dra-l4-0",
            dra.gpu_devices(
                "dra-l4-0", L4, range(2), taints={"gpu-0": GPU_LOST, "gpu-1": XID_79}, version=version
            ),
            version,
        ),
        # Who holds devices: a fine-tune on three A100s, a pre-training run on all eight 80 GB ones.
        dra.resource_claim(
            NS,
            "llm-finetune-gpus",
            spec([dra.request("gpus", count=3)], version=version),
            dra.allocation("dra-a100-0", [("gpus", f"gpu-{i}") for i in range(3)]),
            ["llm-finetune-0"],
            version,
        ),
        dra.pod(
            NS,
            "llm-finetune-0",
            [{"name": "gpus", "resourceClaimName": "llm-finetune-gpus"}],
            node_name="dra-a100-0",
        ),
        dra.resource_claim(
            NS,
            "pretrain-8x",
            spec([dra.request("gpus", count=8)], version=version),
            dra.allocation("dra-a100-1", [("gpus", f"gpu-{i}") for i in range(8)]),
            ["pretrain-0"],
            version,
        ),
        dra.pod(
            NS, "pretrain-0", [{"name": "gpus", "resourceClaimName": "pretrain-8x"}], node_name="dra-a100-1"
        ),
        # ok: placed, with a claim made from a template and allocated on the H100's full GPU.
        dra.claim_template(NS, "one-gpu", spec([dra.request("gpu")], version=version), version),
        dra.resource_claim(
            NS,
            "case-dra-ok-gpu-x7k2p",
            spec([dra.request("gpu")], version=version),
            dra.allocation("dra-h100-0", [("gpu", "gpu-1")]),
            ["case-dra-ok"],
            version,
            owner_pod="case-dra-ok",
            pod_claim="gpu",
        ),
        dra.pod(
            NS,
            "case-dra-ok",
            [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
            [{"name": "gpu", "resourceClaimName": "case-dra-ok-gpu-x7k2p"}],
            node_name="dra-h100-0",
        ),
        # no-request: neither an extended resource nor a claim.
        dra.pod(
            NS,
            "case-dra-norequest",
            [],
            node_name="cpu-0",
            image="nvcr.io/nvidia/cuda:13.0.1-base-ubuntu24.04",
        ),
        # claim: its template does not exist, so the controller made no claim.
        dra.pod(NS, "case-dra-claim", [{"name": "gpus", "resourceClaimTemplateName": "a100-pair"}]),
        dra.event(
            NS,
            "case-dra-claim",
            "FailedResourceClaimCreation",
            'PodResourceClaim gpus: resource claim template "a100-pair": '
            'resourceclaimtemplate.resource.k8s.io "a100-pair" not found',
            "resource_claim",
        ),
        # no-gpu-node: asks a B200, which no slice publishes.
        dra.resource_claim(
            NS,
            "b200-claim",
            spec(
                [
                    dra.request(
                        "gpu", selectors=["device.attributes['gpu.nvidia.com'].productName == 'NVIDIA B200'"]
                    )
                ],
                version=version,
            ),
            version=version,
        ),
        *_pending("case-dra-nogpunode", [{"name": "gpu", "resourceClaimName": "b200-claim"}], 5),
        # allocatable-zero: both L4s are tainted by the driver's health checks.
        dra.resource_claim(
            NS,
            "l4-claim",
            spec(
                [
                    dra.request(
                        "gpu", selectors=["device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L4'"]
                    )
                ],
                version=version,
            ),
            version=version,
        ),
        *_pending("case-dra-tainted", [{"name": "gpu", "resourceClaimName": "l4-claim"}], 5),
        # exhausted: two GPUs of 40 GiB or more; one A100 is free, the rest are held.
        dra.resource_claim(
            NS,
            "a100-pair-claim",
            spec([dra.request("gpus", count=2, selectors=[MEMORY_40])], version=version),
            version=version,
        ),
        *_pending("case-dra-exhaust", [{"name": "gpus", "resourceClaimName": "a100-pair-claim"}], 5),
        # schedulable: a MIG slice of the H100 is free.
        dra.resource_claim(
            NS,
            "mig-claim",
            spec(
                [
                    dra.request(
                        "mig", "mig.nvidia.com", ["device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"]
                    )
                ],
                version=version,
            ),
            version=version,
        ),
        dra.pod(NS, "case-dra-mig", [{"name": "mig", "resourceClaimName": "mig-claim"}]),
    ]
    return items


FILES: dict[str, Callable[[], list[Obj]]] = {
    "bot/demo/gpu-dra.json": lab,
}


def write_file(path: str) -> None:
    """Rewrites the file of `FILES` at `path` (from the repository root)."""
    (ROOT / path).write_text(json.dumps(dra.as_list(FILES[path]()), indent=1) + "\n")


def write() -> None:
    for path in FILES:
        write_file(path)


# --- the corpus -------------------------------------------------------------------------------------

SEMVER_BLACKWELL = "device.attributes['gpu.nvidia.com'].cudaComputeCapability.isGreaterThan(semver('9.0.0'))"


def _gke_node(name: str) -> Obj:
    return dra.node(
        name,
        H100,
        8,
        labels={
            "cloud.google.com/gke-nodepool": "h100-dra-pool",
            "cloud.google.com/gke-gpu-driver-version": "disabled",
            "gke-no-default-nvidia-gpu-device-plugin": "true",
            "topology.kubernetes.io/zone": "us-central1-a",
        },
    )


def gke_h100_v1beta1() -> list[Obj]:
    """A GKE pool of H100 nodes with the DRA driver, its API served as v1beta1 (GKE's docs enable it)."""
    v, ns = "v1beta1", "llm"
    nodes = [f"gke-prod-ml-h100-dra-6f2a91c3-{s}" for s in ("k2wd", "m8xq", "t4vn")]
    spec = dra.claim_spec
    items: list[Obj] = [_gke_node(n) for n in nodes]
    items += dra.device_classes(v)
    items += [dra.resource_slice(n, dra.gpu_devices(n, H100, range(8), version=v), v) for n in nodes]
    # A serving replica holds one GPU on every node.
    for i, n in enumerate(nodes):
        owner = f"vllm-serve-{i}"
        items += [
            dra.resource_claim(
                ns,
                f"{owner}-gpu-q8c{i}d",
                spec([dra.request("gpu")], version=v),
                dra.allocation(n, [("gpu", "gpu-7")]),
                [owner],
                v,
                owner_pod=owner,
                pod_claim="gpu",
            ),
            dra.pod(
                ns,
                owner,
                [{"name": "gpu", "resourceClaimTemplateName": "one-h100"}],
                [{"name": "gpu", "resourceClaimName": f"{owner}-gpu-q8c{i}d"}],
                node_name=n,
            ),
        ]
    items.append(dra.claim_template(ns, "one-h100", spec([dra.request("gpu")], version=v), v))
    # exhausted: every GPU of a node (allocationMode All), but one of them is held on each node.
    items.append(
        dra.resource_claim(
            ns, "whole-node", spec([dra.request("gpus", all_devices=True)], version=v), version=v
        )
    )
    items += _pending_in(ns, "pretrain-70b-0", [{"name": "gpus", "resourceClaimName": "whole-node"}], 3)
    # no-gpu-node: asks compute capability above 9.0 (Blackwell); these are Hopper (9.0.0).
    items.append(
        dra.resource_claim(
            ns, "blackwell", spec([dra.request("gpu", selectors=[SEMVER_BLACKWELL])], version=v), version=v
        )
    )
    items += _pending_in(ns, "fp4-bench", [{"name": "gpu", "resourceClaimName": "blackwell"}], 3)
    # claim: the shared claim is being deleted.
    items.append(
        dra.resource_claim(
            ns, "shared-eval-gpu", spec([dra.request("gpu")], version=v), version=v, deleting=True
        )
    )
    items.append(dra.pod(ns, "eval-harness", [{"name": "gpu", "resourceClaimName": "shared-eval-gpu"}]))
    # schedulable: firstAvailable falls back from a Blackwell GPU to any GPU.
    items.append(
        dra.resource_claim(
            ns,
            "any-gpu",
            spec(
                [
                    dra.request(
                        "gpu",
                        first_available=[
                            dra.subrequest("blackwell", "gpu.nvidia.com", [SEMVER_BLACKWELL]),
                            dra.subrequest("hopper", "gpu.nvidia.com"),
                        ],
                    )
                ],
                version=v,
            ),
            version=v,
        )
    )
    items.append(dra.pod(ns, "notebook", [{"name": "gpu", "resourceClaimName": "any-gpu"}]))
    return items


def _pending_in(ns: str, name: str, claims: list[Obj], nodes: int, **extra: object) -> list[Obj]:
    message = CANNOT.format(n=nodes)
    return [
        dra.pod(ns, name, claims, message=message, **extra),  # type: ignore[arg-type]
        dra.event(ns, name, "FailedScheduling", message, "default-scheduler"),
    ]


def mig_v1beta2() -> list[Obj]:
    """On-prem A100 80 GB nodes in MIG mode, API served as v1beta2: MIG reconfiguration, health taints."""
    v, ns = "v1beta2", "inference"
    spec = dra.claim_spec
    g3 = [Mig("3g.40gb", 9, 0, 4, "40192Mi", 42), Mig("3g.40gb", 9, 4, 4, "40192Mi", 42)]
    g1 = [Mig("1g.10gb", 19, s, 1, "9984Mi", 14) for s in range(7)]
    g7 = [Mig("7g.80gb", 0, 0, 8, "80896Mi", 98)]
    nodes = ["a100-mig-0", "a100-mig-1", "a100-mig-2"]
    items: list[Obj] = [dra.node(n, A100_80, 2, taint=False) for n in nodes]
    items += dra.device_classes(v)
    xid = {f"gpu-{m}-mig-3g40gb-9-{s}": XID_79 for m in range(2) for s in (0, 4)}
    # a100-mig-0: both GPUs 3g.40gb, all four tainted by an XID 79; its older generation had a 7g.80gb.
    items.append(
        dra.resource_slice(
            "a100-mig-0",
            dra.gpu_devices("a100-mig-0", A100_80, range(2), migs={0: g3, 1: g3}, taints=xid, version=v),
            v,
            generation=3,
        )
    )
    items.append(
        dra.resource_slice(
            "a100-mig-0",
            dra.gpu_devices("a100-mig-0", A100_80, range(1), migs={0: g7}, version=v),
            v,
            generation=2,
        )
    )
    # a100-mig-1: being republished: generation 4 says 2 slices, only one is there yet (pool incomplete).
    g2 = [Mig("2g.20gb", 14, s, 2, "19968Mi", 28) for s in (0, 2, 4)]
    items.append(
        dra.resource_slice(
            "a100-mig-1",
            dra.gpu_devices("a100-mig-1", A100_80, range(1), migs={0: g2}, version=v),
            v,
            generation=4,
            slice_count=2,
        )
    )
    # a100-mig-2: 1g.10gb on both GPUs; all but one slice of each GPU held.
    items.append(
        dra.resource_slice(
            "a100-mig-2", dra.gpu_devices("a100-mig-2", A100_80, range(2), migs={0: g1, 1: g1}, version=v), v
        )
    )
    held = [(m, s) for m in range(2) for s in range(6)]
    for m, s in held:
        owner = f"triton-{m}-{s}"
        claim_name = f"{owner}-mig-{'abcdefghijklm'[s]}x{m}"
        items += [
            dra.resource_claim(
                ns,
                claim_name,
                spec([dra.request("mig", "mig.nvidia.com")], version=v),
                dra.allocation("a100-mig-2", [("mig", f"gpu-{m}-mig-1g10gb-19-{s}")]),
                [owner],
                v,
                owner_pod=owner,
                pod_claim="mig",
            ),
            dra.pod(
                ns,
                owner,
                [{"name": "mig", "resourceClaimTemplateName": "one-mig"}],
                [{"name": "mig", "resourceClaimName": claim_name}],
                node_name="a100-mig-2",
            ),
        ]
    items.append(
        dra.claim_template(ns, "one-mig", spec([dra.request("mig", "mig.nvidia.com")], version=v), v)
    )
    profile = "device.attributes['gpu.nvidia.com'].profile == '{}'"
    # allocatable-zero: a 3g.40gb; every one is tainted.
    items.append(
        dra.resource_claim(
            ns,
            "mig-3g",
            spec([dra.request("mig", "mig.nvidia.com", [profile.format("3g.40gb")])], version=v),
            version=v,
        )
    )
    items += _pending_in(ns, "llama-8b-serve", [{"name": "mig", "resourceClaimName": "mig-3g"}], 3)
    # no-gpu-node: a 7g.80gb: only an older generation of a100-mig-0's pool had one.
    items.append(
        dra.resource_claim(
            ns,
            "mig-7g",
            spec([dra.request("mig", "mig.nvidia.com", [profile.format("7g.80gb")])], version=v),
            version=v,
        )
    )
    items += _pending_in(ns, "mixtral-serve", [{"name": "mig", "resourceClaimName": "mig-7g"}], 3)
    # exhausted: two 1g.10gb on the same GPU (matchAttribute parentUUID): one free on each GPU only.
    items.append(
        dra.resource_claim(
            ns,
            "mig-pair",
            spec(
                [dra.request("mig", "mig.nvidia.com", [profile.format("1g.10gb")], count=2)],
                [{"matchAttribute": "gpu.nvidia.com/parentUUID", "requests": ["mig"]}],
                version=v,
            ),
            version=v,
        )
    )
    items += _pending_in(ns, "embed-pair", [{"name": "mig", "resourceClaimName": "mig-pair"}], 3)
    # claim: the claim its status names was made for an earlier pod of the same name.
    items.append(
        dra.resource_claim(
            ns,
            "reranker-mig-r2d2k",
            spec([dra.request("mig", "mig.nvidia.com")], version=v),
            version=v,
            owner_pod="reranker-old",
            pod_claim="mig",
        )
    )
    stale = dra.pod(
        ns,
        "reranker",
        [{"name": "mig", "resourceClaimTemplateName": "one-mig"}],
        [{"name": "mig", "resourceClaimName": "reranker-mig-r2d2k"}],
    )
    items.append(stale)
    # no-gpu-node through a template: a Job's pod, whose claim template names a misspelt class.
    typo = spec([dra.request("mig", "mig.nvidia.co")], version=v)
    items.append(dra.claim_template(ns, "one-mig-typo", typo, v))
    made = "embed-batch-0-mig-t7x2q"
    items.append(
        dra.resource_claim(ns, made, typo, version=v, owner_pod="embed-batch-0-9kq2z", pod_claim="mig")
    )
    # PreFilter fails, before any node: the scheduler's message is the allocator's.
    said = (
        "0/3 nodes are available: request mig: device class mig.nvidia.co does not exist. preemption: "
        "0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    batch = [
        dra.pod(
            ns,
            "embed-batch-0-9kq2z",
            [{"name": "mig", "resourceClaimTemplateName": "one-mig-typo"}],
            [{"name": "mig", "resourceClaimName": made}],
            message=said,
        ),
        dra.event(ns, "embed-batch-0-9kq2z", "FailedScheduling", said, "default-scheduler"),
    ]
    batch[0]["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": "embed-batch",
            "uid": dra.uid("Job", ns, "embed-batch"),
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    items += batch
    return items


def compute_domain_mixed() -> list[Obj]:
    """GB200-style nodes: GPUs through the device plugin (`nvidia.com/gpu`) and IMEX channels through the
    ComputeDomain DRA driver; pods ask both."""
    ns, cd = "train", "compute-domain.nvidia.com"
    spec = dra.claim_spec
    nodes = [f"gb200-rack1-{i}" for i in range(3)]
    items: list[Obj] = []
    for i, n in enumerate(nodes):
        node_obj = dra.node(
            n, None, labels={"nvidia.com/gpu.clique": "rack1.0", "nvidia.com/gpu.present": "true"}
        )
        for part in ("capacity", "allocatable"):
            node_obj["status"][part]["nvidia.com/gpu"] = "0" if (i == 2 and part == "allocatable") else "4"
        items.append(node_obj)
        taints = XID_79 if i == 1 else None
        items.append(dra.resource_slice(n, dra.channel_devices(n, [0], taints), driver=cd))
    items += dra.device_classes()
    channel = "compute-domain-default-channel.nvidia.com"
    # gb200-rack1-0: its channel is held by a running job's claim, which also holds its four GPUs.
    items.append(
        dra.resource_claim(
            ns,
            "train-a-channel",
            spec([dra.request("channel", channel)]),
            dra.allocation(nodes[0], [("channel", "channel-0")], cd),
            ["train-a-0"],
        )
    )
    items.append(
        dra.pod(
            ns,
            "train-a-0",
            [{"name": "channel", "resourceClaimName": "train-a-channel"}],
            node_name=nodes[0],
            limits={"nvidia.com/gpu": "4"},
        )
    )
    both = {"limits": {"nvidia.com/gpu": "4"}}
    # exhausted (device plugin): 8 GPUs asked, nodes have 4.
    items.append(dra.resource_claim(ns, "ch-big", spec([dra.request("channel", channel)])))
    items += _pending_in(
        ns,
        "train-big-0",
        [{"name": "channel", "resourceClaimName": "ch-big"}],
        3,
        limits={"nvidia.com/gpu": "8"},
    )
    # exhausted (DRA): pinned to rack1-0, whose channel train-a's claim holds.
    items.append(dra.resource_claim(ns, "ch-b", spec([dra.request("channel", channel)])))
    items += _pending_in(
        ns,
        "train-b-0",
        [{"name": "channel", "resourceClaimName": "ch-b"}],
        3,
        node_selector={"kubernetes.io/hostname": nodes[0]},
    )
    # allocatable-zero (DRA): pinned to rack1-1, whose channel the driver tainted.
    items.append(dra.resource_claim(ns, "ch-c", spec([dra.request("channel", channel)])))
    items += _pending_in(
        ns,
        "train-c-0",
        [{"name": "channel", "resourceClaimName": "ch-c"}],
        3,
        node_selector={"kubernetes.io/hostname": nodes[1]},
        **both,
    )
    # no-gpu-node: the class name is mistyped.
    items.append(
        dra.resource_claim(ns, "ch-typo", spec([dra.request("channel", "compute-domain-channel.nvidia.com")]))
    )
    items += _pending_in(ns, "train-d-0", [{"name": "channel", "resourceClaimName": "ch-typo"}], 3, **both)
    # claim: shares train-a's claim (allocated on rack1-0) but selects rack1-1.
    items.append(
        dra.pod(
            ns,
            "train-a-eval",
            [{"name": "channel", "resourceClaimName": "train-a-channel"}],
            node_selector={"kubernetes.io/hostname": nodes[1]},
        )
    )
    return items


FILES.update(
    {
        "tests/corpus/triage/dra-gke-h100-v1beta1.json": gke_h100_v1beta1,
        "tests/corpus/triage/dra-mig-v1beta2.json": mig_v1beta2,
        "tests/corpus/triage/dra-compute-domain.json": compute_domain_mixed,
    }
)


def jobset_on_dra() -> list[Obj]:
    """The `pods-pending-exhausted` JobSet incident with its L4s served by the DRA driver instead of the
    device plugin: every pod asks its two GPUs through a claim made from a template, the serving pods'
    claims hold all six GPUs, and the finetune workers' claims wait."""
    source = json.loads((ROOT / "tests/corpus/jobset/pods-pending-exhausted.json").read_text())["items"]
    items: list[Obj] = []
    template = dra.claim_spec([dra.request("gpus", count=2)])
    namespaces: set[str] = set()
    for obj in source:
        if obj["kind"] == "Node":
            node_name = obj["metadata"]["name"]
            served: Obj = {
                part: {k: v for k, v in obj["status"][part].items() if k != "nvidia.com/gpu"}
                for part in ("capacity", "allocatable")
            }
            obj = {**obj, "status": {**obj["status"], **served}}
            items.append(dra.resource_slice(node_name, dra.gpu_devices(node_name, L4, range(2))))
        elif obj["kind"] == "Pod":
            pod_name, ns = obj["metadata"]["name"], obj["metadata"]["namespace"]
            namespaces.add(ns)
            generated = f"{pod_name}-gpus-{dra.uid(pod_name)[:5]}"
            containers = [
                {**c, "resources": {"claims": [{"name": "gpus"}]}} for c in obj["spec"]["containers"]
            ]
            spec = {
                **obj["spec"],
                "containers": containers,
                "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "two-l4"}],
            }
            conditions = [
                {**c, "message": CANNOT.format(n=3)} if "Insufficient" in c.get("message", "") else c
                for c in obj["status"].get("conditions", [])
            ]
            status: Obj = {
                **obj["status"],
                "conditions": conditions,
                "resourceClaimStatuses": [{"name": "gpus", "resourceClaimName": generated}],
            }
            obj = {**obj, "spec": spec, "status": status}
            node_name = spec.get("nodeName")
            alloc = dra.allocation(node_name, [("gpus", "gpu-0"), ("gpus", "gpu-1")]) if node_name else None
            claim = dra.resource_claim(
                ns,
                generated,
                template,
                alloc,
                [pod_name] if node_name else None,
                owner_pod=pod_name,
                pod_claim="gpus",
            )
            claim["metadata"]["ownerReferences"][0]["uid"] = obj["metadata"]["uid"]
            claim["status"]["reservedFor"] = [
                {**r, "uid": obj["metadata"]["uid"]} for r in claim["status"].get("reservedFor", [])
            ]
            items.append(claim)
        elif obj["kind"] == "Event" and "Insufficient nvidia.com/gpu" in obj.get("message", ""):
            obj = {**obj, "message": CANNOT.format(n=3)}
        items.append(obj)
    items += [dra.claim_template(ns, "two-l4", template) for ns in sorted(namespaces)]
    items += dra.device_classes()
    return items


FILES["tests/corpus/jobset/pods-pending-dra.json"] = jobset_on_dra


if __name__ == "__main__":
    write()
