# ruff: noqa: E501  (controller and scheduler messages are kept whole, as the API serves them)
"""Pods: a child Job's pods as the Job controller creates them and the kubelet reports them, and the
pods of other workloads (Deployments, StatefulSets, Jobs) the /triage cases place beside them."""

from __future__ import annotations

import hashlib
import json

from devtools.jobset_corpus.events import failed_scheduling
from devtools.jobset_corpus.jobs import GPU_IMAGE, Job, jobset_keys
from devtools.jobset_corpus.world import Obj, World, cond, owner_ref, ts


def pod(
    j: Job,
    index: int,
    phase: str,
    *,
    node: Obj | None = None,
    created: float = 87,
    started: float | None = None,
    ready: bool | None = None,
    waiting: tuple[str, str] | None = None,
    terminated: Obj | None = None,
    last_terminated: Obj | None = None,
    restarts: int = 0,
    unschedulable: str = "",
    gated: list[str] | None = None,
    deleting: float | None = None,
    disruption: tuple[str, str] | None = None,
    status_reason: tuple[str, str] | None = None,
    node_selector: dict[str, str] | None = None,
) -> Obj:
    """Pod `index` of Job `j` as the Job controller creates it and the kubelet reports it: `phase`, on
    `node` once bound (`waiting`/`terminated`: the container's state), or Pending because
    `unschedulable` (the scheduler's message) or `gated`. A leader of an exclusive-placement JobSet
    gets the pod (anti-)affinity the JobSet webhook adds; a follower, the `node_selector` it copies
    from its leader's node. `disruption`: the DisruptionTarget condition (reason, message)."""
    js, rj, w = j.js, j.rj, j.js.w
    name = f"{j.name}-{index}-{w.suffix()}"
    keys = jobset_keys(js, rj, j.index, j.attempt, j.key)
    labels = {
        "batch.kubernetes.io/controller-uid": j.uid,
        "batch.kubernetes.io/job-completion-index": str(index),
        "batch.kubernetes.io/job-name": j.name,
        "controller-uid": j.uid,
        "job-name": j.name,
        **keys,
        "jobset.sigs.k8s.io/priority": "0",
    }
    annotations = {"batch.kubernetes.io/job-completion-index": str(index), **{k: v for k, v in keys.items()}}
    if js.topology:
        annotations["alpha.jobset.sigs.k8s.io/exclusive-topology"] = js.topology
    spec = json.loads(json.dumps(j.obj["spec"]["template"]["spec"]))
    spec["containers"][0]["env"] = [
        {
            "name": "JOB_COMPLETION_INDEX",
            "valueFrom": {
                "fieldRef": {
                    "apiVersion": "v1",
                    "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']",
                }
            },
        }
    ]
    token = f"kube-api-access-{w.suffix()}"
    spec["containers"][0]["volumeMounts"] = [
        {"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": token, "readOnly": True}
    ]
    spec["volumes"] = [*spec.get("volumes", []), service_account_token(token)]
    spec["hostname"] = f"{j.name}-{index}"
    spec["enableServiceLinks"] = True
    spec["preemptionPolicy"] = "PreemptLowerPriority"
    spec["priority"] = 0
    spec["serviceAccount"] = "default"
    spec["serviceAccountName"] = "default"
    # The DefaultTolerationSeconds admission plugin tolerates a NotReady or unreachable node for 5 min.
    spec.setdefault("tolerations", [])
    spec["tolerations"] += [
        {
            "effect": "NoExecute",
            "key": f"node.kubernetes.io/{key}",
            "operator": "Exists",
            "tolerationSeconds": 300,
        }
        for key in ("not-ready", "unreachable")
    ]
    if node_selector is not None:
        spec["nodeSelector"] = {**spec.get("nodeSelector", {}), **node_selector}
    if js.topology and index == 0:
        selector = {
            "matchExpressions": [{"key": "jobset.sigs.k8s.io/job-key", "operator": "In", "values": [j.key]}]
        }
        others = {
            "matchExpressions": [
                {"key": "jobset.sigs.k8s.io/job-key", "operator": "Exists"},
                {"key": "jobset.sigs.k8s.io/job-key", "operator": "NotIn", "values": [j.key]},
                {"key": "jobset.sigs.k8s.io/priority", "operator": "In", "values": ["0"]},
            ]
        }
        spec["affinity"] = {
            **spec.get("affinity", {}),
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": selector, "topologyKey": js.topology}
                ]
            },
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": others, "namespaceSelector": {}, "topologyKey": js.topology}
                ]
            },
        }
    if gated:
        spec["schedulingGates"] = [{"name": g} for g in gated]
    node_name = node["metadata"]["name"] if node is not None else ""
    if node_name:
        spec["nodeName"] = node_name
    meta: Obj = {
        "annotations": annotations,
        "creationTimestamp": ts(created),
        "generateName": f"{j.name}-{index}-",
        "labels": labels,
        "name": name,
        "namespace": js.ns,
        "ownerReferences": [owner_ref("batch/v1", "Job", j.name, j.uid)],
        "resourceVersion": w.rv(),
        "uid": w.uid(),
    }
    if phase != "Pending" or node_name:
        meta["finalizers"] = ["batch.kubernetes.io/job-tracking"]
    if deleting is not None:
        meta["deletionTimestamp"] = ts(deleting)
        meta["deletionGracePeriodSeconds"] = 30
    status: Obj = {"phase": phase}
    conditions: list[Obj] = []
    if disruption:
        conditions.append(cond("DisruptionTarget", disruption[0], disruption[1], deleting or 10, probe=True))
    if node is not None and node_name:
        began = started if started is not None else created - 0.2
        running = phase == "Running" and not waiting
        sandbox = "True" if phase != "Pending" else "False"
        why_unready = (
            ("", "")
            if ready or running
            else ("ContainersNotReady", f"containers with unready status: [{rj.container}]")
        )
        is_ready = "True" if (ready if ready is not None else running) else "False"
        conditions += [
            cond("PodReadyToStartContainers", "", "", began, sandbox, probe=False),
            cond("Initialized", "", "", began, probe=False),
            *(cond(t, *why_unready, began, is_ready, probe=False) for t in ("Ready", "ContainersReady")),
            cond("PodScheduled", "", "", created - 0.05, probe=False),
        ]
        for c in conditions:
            if not c["reason"]:
                del c["reason"]
                del c["message"]
        status["hostIP"] = node["status"]["addresses"][0]["address"]
        status["hostIPs"] = [{"ip": status["hostIP"]}]
        if phase != "Pending" or waiting:
            status["podIP"] = f"10.{w.rng.randint(4, 120)}.{w.rng.randint(0, 255)}.{w.rng.randint(2, 250)}"
            status["podIPs"] = [{"ip": status["podIP"]}]
        status["startTime"] = ts(began)
        state: Obj
        if terminated is not None:
            state = {"terminated": terminated}
        elif waiting is not None:
            state = {"waiting": {"reason": waiting[0], **({"message": waiting[1]} if waiting[1] else {})}}
        elif phase == "Running":
            state = {"running": {"startedAt": ts(began - 0.5)}}
        else:
            state = {"waiting": {"reason": "ContainerCreating"}}
        status["containerStatuses"] = [
            {
                "containerID": f"containerd://{w.suffix(16)}" if phase != "Pending" else None,
                "image": rj.image,
                "imageID": f"{rj.image.split(':')[0]}@sha256:{hashlib.sha256(rj.image.encode()).hexdigest()}",
                "lastState": {"terminated": last_terminated} if last_terminated else {},
                "name": rj.container,
                "ready": bool(ready if ready is not None else running),
                "restartCount": restarts,
                "started": bool(running),
                "state": state,
            }
        ]
        if status["containerStatuses"][0]["containerID"] is None:
            del status["containerStatuses"][0]["containerID"]
    elif gated or unschedulable:
        reason, message, since = (
            ("SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates", created)
            if gated
            else ("Unschedulable", unschedulable, created - 0.1)
        )
        conditions.append({**cond("PodScheduled", reason, message, since, "False"), "lastProbeTime": None})
    if status_reason:
        status["reason"], status["message"] = status_reason
    if conditions:
        status["conditions"] = conditions
    return w.add({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status})


def service_account_token(name: str) -> Obj:
    """The projected volume the ServiceAccount admission plugin adds to every pod that mounts its token."""
    return {
        "name": name,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
                {
                    "downwardAPI": {
                        "items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}, "path": "namespace"}]
                    }
                },
            ],
        },
    }


def exited(code: int, reason: str, minutes_ago: float, ran: float = 20.0) -> Obj:
    """A container's `terminated` state: it exited `minutes_ago` after running `ran` minutes."""
    return {
        "containerID": f"containerd://{hashlib.sha1(f'{code}{minutes_ago}'.encode()).hexdigest()[:16]}",
        "exitCode": code,
        "finishedAt": ts(minutes_ago),
        "reason": reason,
        "startedAt": ts(minutes_ago + ran),
    }


def crash_looping(j: Job, node: Obj, created: float, last: Obj, restarts: int, back_off: str) -> Obj:
    """Pod 0 of `j` on `node`, its container waiting in CrashLoopBackOff after `restarts` restarts,
    its `last` run ended as `exited` says (with its termination message), and the kubelet's back-off
    message naming the pod."""
    crashing = pod(
        j,
        0,
        "Running",
        node=node,
        created=created,
        started=created - 0.4,
        ready=False,
        waiting=("CrashLoopBackOff", ""),
        last_terminated=last,
        restarts=restarts,
    )
    meta = crashing["metadata"]
    crashing["status"]["containerStatuses"][0]["state"]["waiting"]["message"] = (
        f"back-off {back_off} restarting failed container={j.rj.container} "
        f"pod={meta['name']}_{meta['namespace']}({meta['uid']})"
    )
    return crashing


def app_pod(
    w: World,
    ns: str,
    owner: tuple[str, str],
    labels: dict[str, str],
    resource: tuple[str, str],
    *,
    node: Obj | None = None,
    extra: Obj | None = None,
    unschedulable: str = "",
    created: float = 45,
    revision: int = 0,
) -> Obj:
    """A pod of a Deployment (through the ReplicaSet of its `revision`, `pod-template-hash` and all), a
    StatefulSet or a Job: Running on `node`, or Pending with the scheduler's `unschedulable` message
    and its FailedScheduling event. `extra`: more pod spec (volumes, affinity, spread constraints)."""
    kind, owner_name = owner
    request, amount = resource
    own_labels = dict(labels)
    if kind == "Deployment":
        drawn = w.suffix(10)  # drawn for every pod, so that what is drawn after it stays the same
        template_hash = w.revisions.setdefault((ns, owner_name, revision), drawn)
        kind, owner_name = "ReplicaSet", f"{owner_name}-{template_hash}"
        own_labels["pod-template-hash"] = template_hash
        name = f"{owner_name}-{w.suffix()}"
    elif kind == "StatefulSet":
        name = f"{owner_name}-{sum(1 for o in w.items if o['kind'] == 'Pod')}"
        own_labels["apps.kubernetes.io/pod-index"] = name.rsplit("-", 1)[1]
        own_labels["statefulset.kubernetes.io/pod-name"] = name
    else:
        name = f"{owner_name}-{w.suffix()}"
        own_labels["batch.kubernetes.io/job-name"] = owner_name
    api = {"ReplicaSet": "apps/v1", "StatefulSet": "apps/v1", "Job": "batch/v1"}[kind]
    spec: Obj = {
        "containers": [
            {
                "image": GPU_IMAGE,
                "name": "main",
                "resources": {"limits": {request: amount}, "requests": {request: amount}},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
            }
        ],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "restartPolicy": "Never" if kind == "Job" else "Always",
        "schedulerName": "default-scheduler",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            *([{"effect": "NoSchedule", "key": request, "operator": "Exists"}] if "/" in request else []),
            *(
                {"effect": "NoExecute", "key": f"node.kubernetes.io/{k}", "operator": "Exists", "tolerationSeconds": 300}
                for k in ("not-ready", "unreachable")
            ),
        ],
        **(extra or {}),
    }
    status: Obj = {"phase": "Pending"}
    if node is not None:
        spec["nodeName"] = node["metadata"]["name"]
        status = {
            "conditions": [
                {"lastProbeTime": None, "lastTransitionTime": ts(created - 1), "status": "True", "type": t}
                for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "hostIP": node["status"]["addresses"][0]["address"],
            "phase": "Running",
            "podIP": f"10.{w.rng.randint(4, 120)}.{w.rng.randint(0, 255)}.{w.rng.randint(2, 250)}",
            "startTime": ts(created - 0.5),
        }
    elif unschedulable:
        status["conditions"] = [
            {**cond("PodScheduled", "Unschedulable", unschedulable, created - 0.1, "False"), "lastProbeTime": None}
        ]
    p = w.add(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "creationTimestamp": ts(created),
                "labels": own_labels,
                "name": name,
                "namespace": ns,
                "ownerReferences": [owner_ref(api, kind, owner_name, w.uid())],
                "resourceVersion": w.rv(),
                "uid": w.uid(),
            },
            "spec": spec,
            "status": status,
        }
    )
    if unschedulable:
        failed_scheduling(w, p, unschedulable, 12, first=created - 0.2)
    return p


def full_of(w: World, ns: str, owner: tuple[str, str], node: Obj, gpus: str) -> Obj:
    """Another workload's running pod holding `gpus` GPUs on `node`."""
    return app_pod(w, ns, owner, {"app": owner[1]}, ("nvidia.com/gpu", gpus), node=node, created=900)
