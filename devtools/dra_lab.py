"""The DRA lab (`examples/gpu-dra.json`) and the DRA snapshots of the triage corpus, written from
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
    "examples/gpu-dra.json": lab,
}


def write() -> None:
    for path, build in FILES.items():
        (ROOT / path).write_text(json.dumps(dra.as_list(build()), indent=1) + "\n")


if __name__ == "__main__":
    write()
