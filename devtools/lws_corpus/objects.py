# ruff: noqa: E501  (controller and scheduler messages are kept whole, as the API serves them)
"""A LeaderWorkerSet as kubernetes-sigs/lws v0.10.0 writes it: the LWS after its webhook's defaulting,
the leader StatefulSet `<lws>` it owns, one worker StatefulSet `<lws>-<i>` per group owned by the
leader pod, pods `<lws>-<i>` and `<lws>-<i>-<j>` with LWS's labels and annotations, and the events of
the LWS controller (`events.k8s.io` recorder, reporting controller `leaderworkerset`)."""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from devtools.jobset_corpus.events import event, failed_scheduling, scheduled
from devtools.jobset_corpus.pods import service_account_token
from devtools.jobset_corpus.world import Obj, World, cond, jcond, owner_ref, ts

API = "leaderworkerset.x-k8s.io/v1"
PREFIX = "leaderworkerset.sigs.k8s.io"
VLLM_IMAGE = "vllm/vllm-openai:v0.11.2"
GROUP_NAME = "scheduling.k8s.io/group-name"
"""The annotation naming a pod's Volcano PodGroup (volcano-sh/apis `pkg/apis/scheduling/v1beta1/labels.go`)."""
JAX_IMAGE = "us-docker.pkg.dev/cloud-tpu-images/inference/jetstream-maxtext:v0.2.4"


@dataclass
class Lws:
    """A LeaderWorkerSet being built, and what its pods share."""

    w: World
    ns: str
    name: str
    replicas: int
    size: int
    resources: dict[str, str]
    image: str = VLLM_IMAGE
    topology: str = ""
    startup: str = "LeaderCreated"
    restart: str = "RecreateGroupOnPodRestart"
    revision: str = ""
    readiness: bool = False
    leader_resources: dict[str, str] | None = None
    volcano: bool = False
    """LWS's Volcano gang provider is on: each group has a PodGroup its pods name, scheduled by Volcano."""
    obj: Obj = field(default_factory=dict)
    leader_set: Obj = field(default_factory=dict)

    def group_key(self, index: int) -> str:
        return hashlib.sha1(f"{self.ns}/{self.name}-{index}".encode()).hexdigest()


def container(lws: Lws, leader: bool) -> Obj:
    """The container of the leader or worker template: vLLM's multi-node serving, or JetStream on TPU."""
    resources = (lws.leader_resources if leader else None) or lws.resources
    if lws.image == VLLM_IMAGE:
        command = (
            [
                "sh",
                "-c",
                "bash /vllm-workspace/examples/online_serving/multi-node-serving.sh leader --ray_cluster_size=$(LWS_GROUP_SIZE); python3 -m vllm.entrypoints.openai.api_server --port 8080 --model meta-llama/Llama-3.1-405B-Instruct --tensor-parallel-size 8 --pipeline-parallel-size $(LWS_GROUP_SIZE)",
            ]
            if leader
            else [
                "sh",
                "-c",
                "bash /vllm-workspace/examples/online_serving/multi-node-serving.sh worker --ray_address=$(LWS_LEADER_ADDRESS)",
            ]
        )
    else:
        command = ["bash", "-c", "python3 -m jetstream_pt.serve --size=405b --model_name=llama-3.1"]
    found: Obj = {
        "command": command,
        "image": lws.image,
        "imagePullPolicy": "IfNotPresent",
        "name": "vllm-leader"
        if leader and lws.image == VLLM_IMAGE
        else ("vllm-worker" if lws.image == VLLM_IMAGE else "jetstream"),
        "resources": {"limits": dict(resources), "requests": dict(resources)},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    if leader:
        found["ports"] = [{"containerPort": 8080, "protocol": "TCP"}]
        if lws.readiness:
            found["readinessProbe"] = {
                "failureThreshold": 3,
                "httpGet": {"path": "/health", "port": 8080, "scheme": "HTTP"},
                "initialDelaySeconds": 15,
                "periodSeconds": 10,
                "successThreshold": 1,
                "timeoutSeconds": 1,
            }
    return found


def _template(lws: Lws, leader: bool) -> Obj:
    tolerations = [
        {"effect": "NoSchedule", "key": k, "operator": "Exists"} for k in lws.resources if "/" in k
    ]
    return {
        "metadata": {},
        "spec": {
            "containers": [container(lws, leader)],
            "dnsPolicy": "ClusterFirst",
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "terminationGracePeriodSeconds": 30,
            **({"tolerations": tolerations} if tolerations else {}),
        },
    }


def lws_object(lws: Lws, *, created: float, conditions: list[Obj], ready: int, updated: int) -> Obj:
    """The LWS as its mutating webhook defaults it, with the status the controller writes."""
    meta: Obj = {
        "creationTimestamp": ts(created),
        "generation": 1,
        "name": lws.name,
        "namespace": lws.ns,
        "resourceVersion": lws.w.rv(),
        "uid": lws.w.uid(),
    }
    if lws.topology:
        meta["annotations"] = {f"{PREFIX}/exclusive-topology": lws.topology}
    template: Obj = {
        "restartPolicy": lws.restart,
        "size": lws.size,
        "workerTemplate": _template(lws, False),
    }
    if lws.leader_resources is not None:
        template["leaderTemplate"] = _template(lws, True)
    lws.obj = lws.w.add(
        {
            "apiVersion": API,
            "kind": "LeaderWorkerSet",
            "metadata": meta,
            "spec": {
                "leaderWorkerTemplate": template,
                "networkConfig": {"subdomainPolicy": "Shared"},
                "replicas": lws.replicas,
                "rolloutStrategy": {
                    "rollingUpdateConfiguration": {"maxSurge": 0, "maxUnavailable": 1, "partition": 0},
                    "type": "RollingUpdate",
                },
                "startupPolicy": lws.startup,
            },
            "status": {
                "conditions": conditions,
                "hpaPodSelector": f"{PREFIX}/name={lws.name},{PREFIX}/worker-index=0",
                "readyReplicas": ready,
                "replicas": lws.replicas,
                "updatedReplicas": updated,
            },
        }
    )
    lws.leader_set = _statefulset(lws, lws.name, None, lws.replicas, created - 0.05, ready)
    lws_event(lws, "GroupsProgressing", f"Created leader statefulset {lws.name}", created - 0.05)
    return lws.obj


def available(lws: Lws, status: str, minutes_ago: float) -> list[Obj]:
    """`Available` and `Progressing` as the controller leaves them: one True, the other flipped to
    False by status alone, its reason and message left as they were."""
    return [
        jcond("Available", "AllGroupsReady", "All replicas are ready", minutes_ago, status),
        jcond(
            "Progressing",
            "GroupsProgressing",
            "Replicas are progressing",
            minutes_ago,
            "False" if status == "True" else "True",
        ),
    ]


def _statefulset(
    lws: Lws, name: str, leader: Obj | None, replicas: int, created: float, ready: int, domain: str = ""
) -> Obj:
    """The leader StatefulSet (owned by the LWS), or group `leader`'s worker StatefulSet (owned by the
    leader pod, ordinals from 1, size-1 replicas)."""
    w = lws.w
    selector = {f"{PREFIX}/name": lws.name}
    labels = {f"{PREFIX}/name": lws.name, f"{PREFIX}/template-revision-hash": lws.revision}
    template = copy.deepcopy(_template(lws, leader is None))
    if leader is None:
        selector[f"{PREFIX}/worker-index"] = "0"
        owner = owner_ref(API, "LeaderWorkerSet", lws.name, lws.obj["metadata"]["uid"])
        annotations = {f"{PREFIX}/replicas": str(lws.replicas)}
    else:
        index = leader["metadata"]["labels"][f"{PREFIX}/group-index"]
        key = leader["metadata"]["labels"][f"{PREFIX}/group-key"]
        selector[f"{PREFIX}/group-key"] = key
        labels.update({f"{PREFIX}/group-index": index, f"{PREFIX}/group-key": key})
        owner = owner_ref("v1", "Pod", leader["metadata"]["name"], leader["metadata"]["uid"])
        annotations = {f"{PREFIX}/size": str(lws.size), f"{PREFIX}/leader-name": leader["metadata"]["name"]}
        if lws.topology:
            template["spec"]["nodeSelector"] = {lws.topology: domain}
    template["metadata"] = {"annotations": annotations, "labels": {**labels, **selector}}
    return w.add(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {
                "annotations": annotations,
                "creationTimestamp": ts(created),
                "generation": 1,
                "labels": labels,
                "name": name,
                "namespace": lws.ns,
                "ownerReferences": [owner],
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": {
                "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
                "podManagementPolicy": "Parallel",
                "replicas": replicas,
                "revisionHistoryLimit": 10,
                "selector": {"matchLabels": selector},
                "serviceName": lws.name,
                "template": template,
                "updateStrategy": {
                    "rollingUpdate": {"maxUnavailable": 1, "partition": 0},
                    "type": "RollingUpdate",
                },
                **({"ordinals": {"start": 1}} if leader is not None else {}),
            },
            "status": {
                "availableReplicas": ready,
                "collisionCount": 0,
                "currentReplicas": replicas,
                "currentRevision": f"{name}-{lws.revision[:10]}",
                "observedGeneration": 1,
                "readyReplicas": ready,
                "replicas": replicas,
                "updateRevision": f"{name}-{lws.revision[:10]}",
                "updatedReplicas": replicas,
            },
        }
    )


def workers_set(lws: Lws, leader: Obj, created: float, ready: int, domain: str = "") -> Obj:
    """Group `leader`'s worker StatefulSet; under exclusive placement its pods select `domain`, the
    topology value of the leader's node."""
    return _statefulset(lws, leader["metadata"]["name"], leader, lws.size - 1, created, ready, domain)


@dataclass(frozen=True)
class State:
    """What the kubelet reports of a placed pod's one container."""

    phase: str = "Running"
    ready: bool = True
    waiting: tuple[str, str] | None = None
    restarts: int = 0
    last_exit: tuple[int, str] | None = None
    """(exit code, reason) of the run before, `last_exit_ago` minutes ago."""
    last_exit_ago: float = 1.0


RUNNING = State()


def lws_pod(
    lws: Lws,
    group: int,
    worker: int,
    *,
    node: Obj | None,
    created: float,
    state: State = RUNNING,
    unschedulable: str = "",
    gated: list[str] | None = None,
    node_selector: dict[str, str] | None = None,
) -> Obj:
    """Pod `worker` of group `group` (0: the leader `<lws>-<group>`), as the StatefulSet controller
    creates it, LWS's webhook labels it and the kubelet reports it: on `node`, or Pending because
    `unschedulable` (the scheduler's message, with its event) or `gated`."""
    w = lws.w
    spec = _pod_spec(lws, group, worker)
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    if gated:
        spec["schedulingGates"] = [{"name": g} for g in gated]
    pod: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _pod_meta(lws, group, worker, created),
        "spec": spec,
        "status": {"phase": "Pending"},
    }
    if node is not None:
        spec["nodeName"] = node["metadata"]["name"]
        pod["status"] = _placed_status(w, node, spec["containers"][0], created, state)
    elif gated or unschedulable:
        reason, message = (
            ("SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates")
            if gated
            else ("Unschedulable", unschedulable)
        )
        pod["status"]["conditions"] = [
            {**cond("PodScheduled", reason, message, created - 0.1, "False"), "lastProbeTime": None}
        ]
    w.add(pod)
    if node is not None and any(o is node for o in w.items):  # a deleted node's event is gone too
        scheduled(w, pod, created - 0.05)
    if unschedulable:
        failed_scheduling(w, pod, unschedulable, max(2, int(created)), first=created - 0.1)
    return pod


def _pod_meta(lws: Lws, group: int, worker: int, created: float) -> Obj:
    """A group pod's metadata: the StatefulSet's labels, LWS's webhook's labels and annotations."""
    w = lws.w
    leader_name = f"{lws.name}-{group}"
    name = leader_name if worker == 0 else f"{leader_name}-{worker}"
    set_name = lws.name if worker == 0 else leader_name
    annotations = {f"{PREFIX}/size": str(lws.size)}
    if worker:
        annotations[f"{PREFIX}/leader-name"] = leader_name
    if lws.topology:
        annotations[f"{PREFIX}/exclusive-topology"] = lws.topology
    if lws.volcano:
        annotations[GROUP_NAME] = f"{leader_name}-{lws.revision}"
    owner_set = (
        lws.leader_set
        if worker == 0
        else next(o for o in w.items if o["kind"] == "StatefulSet" and o["metadata"]["name"] == leader_name)
    )
    return {
        "annotations": annotations,
        "creationTimestamp": ts(created),
        "generateName": f"{set_name}-",
        "labels": {
            "apps.kubernetes.io/pod-index": str(group if worker == 0 else worker),
            "controller-revision-hash": f"{set_name}-{lws.revision[:10]}",
            f"{PREFIX}/group-index": str(group),
            f"{PREFIX}/group-key": lws.group_key(group),
            f"{PREFIX}/name": lws.name,
            f"{PREFIX}/template-revision-hash": lws.revision,
            f"{PREFIX}/worker-index": str(worker),
            "statefulset.kubernetes.io/pod-name": name,
        },
        "name": name,
        "namespace": lws.ns,
        "ownerReferences": [owner_ref("apps/v1", "StatefulSet", set_name, owner_set["metadata"]["uid"])],
        "resourceVersion": w.rv(),
        "uid": w.uid(),
    }


def _pod_spec(lws: Lws, group: int, worker: int) -> Obj:
    """A group pod's spec: its template, the env LWS injects, and what admission adds (the token
    volume, the not-ready tolerations); a leader under exclusive placement gets its (anti-)affinity."""
    leader_name = f"{lws.name}-{group}"
    spec: Obj = copy.deepcopy(_template(lws, worker == 0)["spec"])
    token = f"kube-api-access-{lws.w.suffix()}"
    main = spec["containers"][0]
    main["env"] = [
        {"name": "LWS_LEADER_ADDRESS", "value": f"{leader_name}.{lws.name}.{lws.ns}"},
        {"name": "LWS_GROUP_SIZE", "value": str(lws.size)},
        {
            "name": "LWS_WORKER_INDEX",
            "valueFrom": {
                "fieldRef": {"apiVersion": "v1", "fieldPath": f"metadata.labels['{PREFIX}/worker-index']"}
            },
        },
    ]
    main["volumeMounts"] = [
        {"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": token, "readOnly": True}
    ]
    spec.update(
        {
            "enableServiceLinks": True,
            "hostname": leader_name if worker == 0 else f"{leader_name}-{worker}",
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0,
            "serviceAccount": "default",
            "serviceAccountName": "default",
            "subdomain": lws.name,
            "volumes": [service_account_token(token)],
        }
    )
    spec["tolerations"] = [
        *spec.get("tolerations", []),
        *(
            {
                "effect": "NoExecute",
                "key": f"node.kubernetes.io/{k}",
                "operator": "Exists",
                "tolerationSeconds": 300,
            }
            for k in ("not-ready", "unreachable")
        ),
    ]
    if lws.topology and worker == 0:
        spec["affinity"] = _exclusive(lws, group)
    if lws.volcano:
        spec["schedulerName"] = "volcano"
    return spec


def volcano_podgroup(lws: Lws, leader: Obj, status: Obj) -> Obj:
    """The Volcano PodGroup LWS's pod controller makes for a group (`pkg/schedulerprovider/
    volcano_provider.go`): named as the pods' annotation says, owned by the leader pod, `minMember` the
    group's size under LeaderCreated (1 under LeaderReady), `minResources` the whole group's requests."""
    meta = leader["metadata"]
    size = lws.size if lws.startup == "LeaderCreated" else 1
    asks = {k: str(int(v) * lws.size) for k, v in lws.resources.items()}
    return lws.w.add(
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {
                "creationTimestamp": meta["creationTimestamp"],
                "generation": 1,
                "labels": {
                    f"{PREFIX}/group-index": meta["labels"][f"{PREFIX}/group-index"],
                    f"{PREFIX}/name": lws.name,
                    f"{PREFIX}/template-revision-hash": lws.revision,
                },
                "name": meta["annotations"][GROUP_NAME],
                "namespace": lws.ns,
                "ownerReferences": [owner_ref("v1", "Pod", meta["name"], meta["uid"])],
                "resourceVersion": lws.w.rv(),
                "uid": lws.w.uid(),
            },
            "spec": {"minMember": size, "minResources": asks, "queue": "default"},
            "status": status,
        }
    )


def _exclusive(lws: Lws, group: int) -> Obj:
    """The (anti-)affinity LWS's pod webhook gives a leader under exclusive placement
    (`SetExclusiveAffinities`): with its own group's pods, away from every other group's."""
    key = f"{PREFIX}/group-key"
    own = lws.group_key(group)
    return {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchExpressions": [{"key": key, "operator": "In", "values": [own]}]},
                    "topologyKey": lws.topology,
                }
            ]
        },
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": key, "operator": "Exists"},
                            {"key": key, "operator": "NotIn", "values": [own]},
                        ]
                    },
                    "topologyKey": lws.topology,
                }
            ]
        },
    }


def _placed_status(w: World, node: Obj, main: Obj, created: float, state: State) -> Obj:
    began = created - 0.2
    running = state.phase == "Running" and state.waiting is None
    ready = "True" if state.ready and running else "False"
    unready = "" if ready == "True" else f"containers with unready status: [{main['name']}]"
    conditions = [
        cond(
            "PodReadyToStartContainers",
            "",
            "",
            began,
            "True" if state.phase == "Running" else "False",
            probe=False,
        ),
        cond("Initialized", "", "", began, probe=False),
        cond("Ready", "ContainersNotReady" if unready else "", unready, began, ready, probe=False),
        cond("ContainersReady", "ContainersNotReady" if unready else "", unready, began, ready, probe=False),
        cond("PodScheduled", "", "", created - 0.05, probe=False),
    ]
    for c in conditions:
        if not c["reason"]:
            del c["reason"], c["message"]
    if state.waiting is not None:
        reason, message = state.waiting
        current: Obj = {"waiting": {"reason": reason, **({"message": message} if message else {})}}
    else:
        current = {"running": {"startedAt": ts(began - 0.5)}}
    last: Obj = {}
    if state.last_exit is not None:
        code, reason = state.last_exit
        last = {
            "terminated": {
                "containerID": f"containerd://{w.hexid(16)}",
                "exitCode": code,
                "finishedAt": ts(state.last_exit_ago),
                "reason": reason,
                "startedAt": ts(state.last_exit_ago + 1.5),
            }
        }
    address = node["status"]["addresses"][0]["address"]
    status: Obj = {
        "conditions": conditions,
        "containerStatuses": [
            {
                "image": main["image"],
                "imageID": ""
                if state.phase == "Pending"
                else f"{main['image'].split(':')[0]}@sha256:{hashlib.sha256(main['image'].encode()).hexdigest()}",
                "lastState": last,
                "name": main["name"],
                "ready": ready == "True",
                "restartCount": state.restarts,
                "started": running,
                "state": current,
                **({"containerID": f"containerd://{w.hexid(16)}"} if state.phase != "Pending" else {}),
            }
        ],
        "hostIP": address,
        "hostIPs": [{"ip": address}],
        "phase": state.phase,
        "startTime": ts(began),
    }
    if state.phase != "Pending":
        status["podIP"] = f"10.{w.rng.randint(4, 120)}.{w.rng.randint(0, 255)}.{w.rng.randint(2, 250)}"
        status["podIPs"] = [{"ip": status["podIP"]}]
    return status


def lws_event(
    lws: Lws,
    reason: str,
    message: str,
    first: float,
    *,
    last: float | None = None,
    count: int = 1,
    kind: str = "Normal",
    action: str = "Create",
) -> Obj:
    """An event of the LWS controller about the LWS (v0.9+: the `events.k8s.io` recorder)."""
    found = event(
        lws.w,
        lws.obj,
        reason,
        message,
        kind=kind,
        source="leaderworkerset",
        count=count,
        first=first,
        last=first if last is None else last,
        new_style=True,
    )
    found["action"] = action
    return found


def group(
    lws: Lws,
    index: int,
    nodes: Sequence[Obj | None],
    *,
    created: float,
    states: list[State] | None = None,
    unschedulable: str = "",
    domain: str = "",
) -> list[Obj]:
    """A whole group: its leader on `nodes[0]`, its worker StatefulSet and its workers on the others
    (None: Pending, with `unschedulable` said of it)."""
    states = states or [RUNNING] * lws.size
    leader = lws_pod(
        lws, index, 0, node=nodes[0], created=created, state=states[0], unschedulable=unschedulable
    )
    # The pod controller's gates: size 1, an unscheduled leader under exclusive placement, a leader not
    # Ready under LeaderReady — no worker StatefulSet.
    ready_leader = nodes[0] is not None and states[0].ready and states[0].waiting is None
    if (
        lws.size == 1
        or (nodes[0] is None and lws.topology)
        or (lws.startup == "LeaderReady" and not ready_leader)
    ):
        return [leader]
    ready = sum(
        1
        for n, s in zip(nodes[1:], states[1:], strict=True)
        if n is not None and s.ready and s.waiting is None
    )
    workers_set(lws, leader, created - 0.1, ready, domain)
    lws_event(
        lws,
        "GroupsProgressing",
        f"Created worker statefulset for leader pod {leader['metadata']['name']}",
        created - 0.1,
    )
    selector = {lws.topology: domain} if lws.topology else None
    return [
        leader,
        *(
            lws_pod(
                lws,
                index,
                j,
                node=n,
                created=created - 0.15,
                state=s,
                unschedulable=unschedulable,
                node_selector=selector,
            )
            for j, (n, s) in enumerate(zip(nodes[1:], states[1:], strict=True), start=1)
        ),
    ]
