# ruff: noqa: E501  (controller and scheduler messages are kept whole, as the API serves them)
"""/triage cases of the volume filters (VolumeBinding, VolumeZone, VolumeRestrictions,
NodeVolumeLimits), each checked with the real kube-scheduler."""

from __future__ import annotations

from devtools.jobset_corpus.nodes import a3, cpu_node, eks_p4d, g2, lab_node, pool
from devtools.jobset_corpus.pods import app_pod, full_of
from devtools.jobset_corpus.scenario import TriageCases
from devtools.jobset_corpus.storage import (
    GKE_TOPOLOGY_ZONE,
    PD_CSI,
    capacity_class,
    claim,
    csinode,
    local_capacity,
    one_pod_checkpoint,
    pod_volume,
    storage_class,
    volume,
)
from devtools.jobset_corpus.world import Obj, World, ts

CASES = TriageCases()
triage_case = CASES.case


def waiting_job(
    w: World, ns: str, job: str, app: str, gpus: str, mount: tuple[str, str], message: str
) -> Obj:
    """The pod of Job `job` that the case asks about: it asks `gpus` GPUs and mounts the PVC `mount[1]`
    as volume `mount[0]`, and is Pending with the scheduler's `message`."""
    return app_pod(
        w, ns, ("Job", job), {"app": app}, ("nvidia.com/gpu", gpus), extra=pod_volume(*mount), unschedulable=message
    )


@triage_case("gke-pvc-bound-other-zone")
def pvc_bound_other_zone(w: World) -> None:
    """The checkpoint PVC was first used by a run in us-central1-c; its PD (and so its PV's node
    affinity) stays there, while the H100 nodes with free GPUs are all in us-central1-a."""
    cpu_node(w, "ml-prod")
    nodes = pool(w, 2, a3, "ml-prod", "a3-pool")
    full_of(w, "llm", ("Job", "llama-sft-7"), nodes[0], "8")
    premium = storage_class(w, "premium-rwo", PD_CSI, "WaitForFirstConsumer", parameters={"type": "pd-ssd"})
    pvc = claim(w, "llm", "llama-ckpt", premium["metadata"]["name"], "2Ti",
                selected_node="gke-ml-prod-a3-pool-6c1d2e0f-q7zx")
    pv = f"pvc-{pvc['metadata']['uid']}"
    volume(w, pv, "premium-rwo", "2Ti", driver=PD_CSI,
           handle=f"projects/ml-platform-prod/zones/us-central1-c/disks/{pv}",
           affinity=(GKE_TOPOLOGY_ZONE, ["us-central1-c"]), bound_to=pvc)
    message = (
        "0/3 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity, 2 Insufficient nvidia.com/gpu. "
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
    )
    waiting_job(w, "llm", "llama-eval-ckpt-120", "llama-eval", "8", ("ckpt", "llama-ckpt"), message)


@triage_case("eks-pv-zone-label")
def pv_zone_label(w: World) -> None:
    """A statically created PV for a restored EBS snapshot carries zone labels (no node affinity): it
    is in us-west-2a, and the p4d node group is in us-west-2b."""
    nodes = [eks_p4d(w, i) for i in range(2)]
    full_of(w, "research", ("Job", "protein-fold-311"), nodes[0], "8")
    storage_class(w, "gp3", "ebs.csi.aws.com", "WaitForFirstConsumer", parameters={"type": "gp3"})
    pvc = claim(w, "research", "alphafold-db", "gp3", "3Ti")
    volume(w, "alphafold-db-restored", "gp3", "3Ti", driver="ebs.csi.aws.com", handle="vol-0a83c5f1e29b74d61",
           labels={"topology.kubernetes.io/region": "us-west-2", "topology.kubernetes.io/zone": "us-west-2a"},
           bound_to=pvc)
    message = (
        "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had no available volume zone. "
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."
    )
    waiting_job(w, "research", "alphafold-infer-17", "alphafold", "4", ("db", "alphafold-db"), message)


@triage_case("onprem-local-pv-wffc")
def local_pv_wffc(w: World) -> None:
    """The dataset cache is a local NVMe volume: only gpu-node-03 has one big enough, and its GPUs
    are all taken; the class has no provisioner, so nothing can be made on the other nodes."""
    nodes = [lab_node(w, i) for i in range(1, 4)]
    full_of(w, "vision", ("Job", "sam2-train-4"), nodes[2], "8")
    storage_class(w, "local-nvme", "kubernetes.io/no-provisioner", "WaitForFirstConsumer")
    claim(w, "vision", "imagenet-cache", "local-nvme", "2Ti")
    for node, size in ((nodes[0], "900Gi"), (nodes[1], "900Gi"), (nodes[2], "3500Gi")):
        host = node["metadata"]["name"]
        volume(w, f"local-pv-{w.hexid(8)}", "local-nvme", size, local_path="/mnt/nvme0",
               affinity=("kubernetes.io/hostname", [host]))
    message = (
        "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't find available persistent volumes to bind. "
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
    )
    waiting_job(w, "vision", "vit-eval-9", "vit-eval", "2", ("cache", "imagenet-cache"), message)


@triage_case("gke-pvc-missing")
def pvc_missing(w: World) -> None:
    """The Job names `shared-dataset`; the PVC is `shared-datasets`."""
    nodes = pool(w, 2, g2, "ml-prod", "l4-pool")
    storage_class(w, "standard-rwx", "filestore.csi.storage.gke.io", "WaitForFirstConsumer")
    pvc = claim(w, "ml-train", "shared-datasets", "standard-rwx", "1Ti", access="ReadWriteMany")
    volume(w, f"pvc-{pvc['metadata']['uid']}", "standard-rwx", "1Ti", driver="filestore.csi.storage.gke.io",
           handle="modeInstance/us-central1-a/pvc-datasets/vol1", bound_to=pvc)
    del nodes
    message = (
        '0/2 nodes are available: persistentvolumeclaim "shared-dataset" not found. '
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    waiting_job(w, "ml-train", "bert-finetune-3", "bert-finetune", "1", ("data", "shared-dataset"), message)


@triage_case("onprem-topolvm-capacity")
def topolvm_capacity(w: World) -> None:
    """A fine-tuning Job asks a 3Ti scratch volume on TopoLVM (local NVMe). The two nodes with free
    GPUs have 1.2Ti and 800Gi left in their volume groups; the one with 6Ti has its GPUs taken."""
    nodes = [lab_node(w, i) for i in range(1, 4)]
    key = "topology.topolvm.io/node"
    nvme = capacity_class(w, "topolvm-nvme", "topolvm.io", {"topolvm.io/device-class": "nvme"})
    for node, size in zip(nodes, ("1288490188800", "858993459200", "6597069766656"), strict=True):
        local_capacity(w, "topolvm-system", nvme, key, node, size)
    full_of(w, "research", ("Job", "llama-pretrain-ablation"), nodes[2], "8")
    claim(w, "research", "finetune-scratch", "topolvm-nvme", "3Ti")
    message = (
        "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) did not have enough free storage. "
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not "
        "helpful for scheduling."
    )
    waiting_job(w, "research", "llm-finetune-7", "llm-finetune", "4", ("scratch", "finetune-scratch"), message)


@triage_case("eks-openebs-capacity-missing")
def openebs_capacity_missing(w: World) -> None:
    """OpenEBS LVM LocalPV on a p4d node group: the node that joined ten minutes ago has free GPUs,
    but the driver has published no CSIStorageCapacity for it yet (its node plugin is still starting);
    the other node's GPUs are taken."""
    nodes = [eks_p4d(w, i) for i in range(2)]
    key = "openebs.io/nodename"
    lvm = capacity_class(w, "openebs-lvmpv", "local.csi.openebs.io", {"storage": "lvm", "volgroup": "lvmvg"})
    local_capacity(w, "openebs", lvm, key, nodes[0], "3298534883328")
    nodes[1]["metadata"]["creationTimestamp"] = ts(10)
    full_of(w, "speech", ("Job", "whisper-large-ft"), nodes[0], "8")
    claim(w, "speech", "audio-shards-cache", "openebs-lvmpv", "1Ti")
    message = (
        "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) did not have enough free storage. "
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not "
        "helpful for scheduling."
    )
    waiting_job(w, "speech", "whisper-distil-3", "whisper-distil", "8", ("cache", "audio-shards-cache"), message)


@triage_case("onprem-linstor-max-volume")
def linstor_max_volume(w: World) -> None:
    """LINSTOR pools on the GPU nodes report 7Ti free but at most 2Ti in one volume (the largest
    extent left), and the checkpoint volume asks 4Ti: no node can take it, though one has free GPUs."""
    nodes = [lab_node(w, i) for i in range(1, 4)]
    key = "linbit.com/hostname"
    pool = capacity_class(w, "linstor-nvme", "linstor.csi.linbit.com", {"linstor.csi.linbit.com/storagePool": "nvme-thin"})
    for node in nodes:
        local_capacity(w, "piraeus-datastore", pool, key, node, "7Ti", maximum="2Ti")
    for node in nodes[1:]:
        full_of(w, "vision", ("Job", "sam2-train-4"), node, "8")
    claim(w, "vision", "sam2-ckpt", "linstor-nvme", "4Ti")
    message = (
        "0/3 nodes are available: 1 node(s) did not have enough free storage, 2 Insufficient nvidia.com/gpu. "
        "preemption: 0/3 nodes are available: 2 No preemption victims found for incoming pod, 1 Preemption is not "
        "helpful for scheduling."
    )
    waiting_job(w, "vision", "sam2-eval-11", "sam2-eval", "8", ("ckpt", "sam2-ckpt"), message)


IN_USE = (
    "0/3 nodes are available: 1 node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access "
    "mode already in-use by another pod, 2 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 1 No "
    "preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
)
"""The scheduler's message on a pod whose ReadWriteOncePod claim another pod of these cases holds, on
one of three nodes (the other two have no GPU free)."""


@triage_case("gke-rwop-eval-while-training")
def rwop_eval_while_training(w: World) -> None:
    """The eval Job mounts the training run's checkpoint PVC, which is ReadWriteOncePod: the training
    pod still has it, so the eval pod can start nowhere, though an H100 node is free
    (VolumeRestrictions)."""
    cpu_node(w, "ml-prod")
    nodes = pool(w, 2, a3, "ml-prod", "a3-pool")
    one_pod_checkpoint(w, "llm", "llama-ckpt", "2Ti")
    app_pod(w, "llm", ("Job", "llama-sft-7"), {"app": "llama-sft-7"}, ("nvidia.com/gpu", "8"), node=nodes[0],
            extra=pod_volume("ckpt", "llama-ckpt"), created=900)
    waiting_job(w, "llm", "llama-eval-ckpt-120", "llama-eval", "8", ("ckpt", "llama-ckpt"), IN_USE)


@triage_case("gke-rwop-old-pod-terminating")
def rwop_old_pod_terminating(w: World) -> None:
    """The Job's pod was deleted (a node drain) and the Job made a new one at once; the old pod flushes
    its checkpoint in a one-hour grace period and holds the ReadWriteOncePod claim until it is gone."""
    cpu_node(w, "ml-prod")
    nodes = pool(w, 2, a3, "ml-prod", "a3-pool")
    one_pod_checkpoint(w, "nlp", "t5-xxl-ckpt", "1Ti")
    old = app_pod(w, "nlp", ("Job", "t5-xxl-pretrain"), {"app": "t5-xxl-pretrain"}, ("nvidia.com/gpu", "8"),
                  node=nodes[0], extra=pod_volume("ckpt", "t5-xxl-ckpt"), created=600)
    old["spec"]["terminationGracePeriodSeconds"] = 3600
    old["metadata"].update(deletionGracePeriodSeconds=3600, deletionTimestamp=ts(42 - 60),
                           finalizers=["batch.kubernetes.io/job-tracking"])
    new = app_pod(w, "nlp", ("Job", "t5-xxl-pretrain"), {"app": "t5-xxl-pretrain"}, ("nvidia.com/gpu", "8"),
                  extra=pod_volume("ckpt", "t5-xxl-ckpt"), unschedulable=IN_USE, created=42)
    new["spec"]["terminationGracePeriodSeconds"] = 3600
    new["metadata"]["ownerReferences"] = old["metadata"]["ownerReferences"]


@triage_case("gke-rwop-rolling-update")
def rwop_rolling_update(w: World) -> None:
    """A vLLM Deployment keeps its weights on a ReadWriteOncePod PVC; a rolling update (the default
    strategy) starts the new ReplicaSet's pod first, which waits for the old pod's volume while the old
    pod waits for the new one to be ready."""
    cpu_node(w, "ml-prod")
    nodes = pool(w, 2, a3, "ml-prod", "a3-pool")
    one_pod_checkpoint(w, "serving", "llama-70b-weights", "500Gi")
    app_pod(w, "serving", ("Deployment", "vllm-llama-70b"), {"app": "vllm-llama-70b"}, ("nvidia.com/gpu", "8"),
            node=nodes[0], extra=pod_volume("weights", "llama-70b-weights"), created=2800)
    app_pod(w, "serving", ("Deployment", "vllm-llama-70b"), {"app": "vllm-llama-70b"}, ("nvidia.com/gpu", "8"),
            extra=pod_volume("weights", "llama-70b-weights"), unschedulable=IN_USE, created=30, revision=1)


@triage_case("eks-ebs-attach-limit")
def ebs_attach_limit(w: World) -> None:
    """The p4d nodes' EBS CSI driver may attach 15 volumes (instance store and EFA interfaces take the
    rest of the 28 Nitro slots); the feature-store shards already hold 15 on each node."""
    nodes = [eks_p4d(w, i) for i in range(2)]
    storage_class(w, "gp3", "ebs.csi.aws.com", "WaitForFirstConsumer", parameters={"type": "gp3"})
    for node in nodes:
        node["spec"]["providerID"] = f"aws:///us-west-2b/i-0{w.hexid(16)}"
        csinode(w, node, "ebs.csi.aws.com", 15)
        for _ in range(15):
            shard = claim(w, "features", f"shard-{w.suffix(8)}", "gp3", "200Gi")
            volume(w, f"pvc-{shard['metadata']['uid']}", "gp3", "200Gi", driver="ebs.csi.aws.com",
                   handle=f"vol-0{w.hexid(16)}", affinity=("topology.ebs.csi.aws.com/zone", ["us-west-2b"]),
                   bound_to=shard)
            app_pod(w, "features", ("StatefulSet", "feature-shard"), {"app": "feature-shard"}, ("cpu", "1"),
                    node=node, extra=pod_volume("data", shard["metadata"]["name"]), created=5000)
    claim(w, "features", "embeddings-scratch", "gp3", "500Gi")
    message = (
        "0/2 nodes are available: 2 node(s) exceed max volume count. "
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )
    waiting_job(w, "features", "embed-refresh-88", "embed-refresh", "2", ("scratch", "embeddings-scratch"), message)
