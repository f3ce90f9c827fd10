# ruff: noqa: E501  (kubelet and runtime messages are kept whole, as the API serves them)
"""/triage cases of placed pods that do not run (the `ok` rung's `started`): each pod is bound to an
L4 node and held by the kubelet, the image registry, the app, the NVIDIA container runtime, a volume
or the sandbox, with its status and events as the kubelet writes them."""

from __future__ import annotations

from devtools.jobset_corpus.events import event
from devtools.jobset_corpus.nodes import g2, pool
from devtools.jobset_corpus.pods import app_pod, exited
from devtools.jobset_corpus.scenario import TriageCases
from devtools.jobset_corpus.world import Obj, World, ts

CASES = TriageCases()
triage_case = CASES.case

NAMESPACE = "serving"
CREATED = 44.0
"""Minutes before the snapshot every pod of the case was created."""


def _conditions(initialized: bool, ready: bool, sandbox: bool = True) -> list[Obj]:
    """The kubelet's pod conditions, in its order, for a pod bound CREATED minutes ago."""
    found = []
    for type_, holds, why in (
        ("PodReadyToStartContainers", sandbox, ""),
        ("Initialized", initialized, "ContainersNotInitialized"),
        ("Ready", ready, "ContainersNotReady"),
        ("ContainersReady", ready, "ContainersNotReady"),
        ("PodScheduled", True, ""),
    ):
        c: Obj = {"lastProbeTime": None, "lastTransitionTime": ts(CREATED - 0.5), "status": "True" if holds else "False", "type": type_}
        if not holds and why:
            c["reason"] = why
        found.append(c)
    return found


def _container(name: str, image: str, *, state: Obj, last: Obj | None = None, restarts: int = 0, init: bool = False) -> Obj:
    """A container status as the kubelet reports it."""
    ready = "running" in state and not init
    return {
        "image": image,
        "imageID": "" if "waiting" in state and not last else f"{image.split(':')[0]}@sha256:{'4f' * 32}",
        "lastState": {"terminated": last} if last else {},
        "name": name,
        "ready": ready,
        "restartCount": restarts,
        "started": ready,
        "state": state,
        **({"containerID": last["containerID"]} if last else {}),
    }


def _waiting(reason: str, message: str = "") -> Obj:
    return {"waiting": {"reason": reason, **({"message": message} if message else {})}}


def _placed(w: World, node: Obj, owner: tuple[str, str], app: str, *, extra: Obj | None = None) -> Obj:
    """A serving pod of `owner` bound to `node`, asking one L4; the caller writes what holds it."""
    pod = app_pod(w, NAMESPACE, owner, {"app": app}, ("nvidia.com/gpu", "1"), node=node, extra=extra, created=CREATED)
    pod["status"].pop("podIP")
    return pod


def _kubelet(w: World, pod: Obj, reason: str, message: str, count: int = 1, kind: str = "Warning") -> None:
    event(w, pod, reason, message, kind=kind, source="kubelet", count=count, first=CREATED - 1, last=2)


@triage_case("gke-placed-not-running")
def placed_not_running(w: World) -> None:
    """Seven serving pods, all placed on the L4 pool, none running: a wrong image tag, a crash loop,
    a node whose NVIDIA driver does not load, the kubelet's admission refusing a GPU its device plugin
    lost, a ConfigMap volume that does not exist, a runtime handler the node lacks, an init container
    that fails; and one still pulling its image."""
    nodes = pool(w, 4, g2, "ml-prod", "l4-pool")
    image = "us-docker.pkg.dev/ml-prod/serving/vllm:0.6.4-cu124"

    pod = _placed(w, nodes[0], ("Deployment", "vllm-llama"), "vllm-llama")
    pod["spec"]["containers"][0]["image"] = image
    pull = f'Back-off pulling image "{image}"'
    pod["status"].update(
        conditions=_conditions(True, False),
        containerStatuses=[_container("main", image, state=_waiting("ImagePullBackOff", pull))],
        phase="Pending",
    )
    _kubelet(w, pod, "Failed", f'Failed to pull image "{image}": rpc error: code = NotFound desc = failed to pull and unpack image "{image}": failed to resolve reference "{image}": {image}: not found', 14)
    _kubelet(w, pod, "BackOff", pull, 180, kind="Normal")

    pod = _placed(w, nodes[0], ("StatefulSet", "embedder"), "embedder")
    pod["spec"]["containers"][0]["terminationMessagePolicy"] = "FallbackToLogsOnError"
    crash = exited(1, "Error", 3, ran=0.4)
    crash["message"] = "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
    name = pod["metadata"]["name"]
    pod["status"].update(
        conditions=_conditions(True, False),
        containerStatuses=[_container("main", pod["spec"]["containers"][0]["image"], state=_waiting("CrashLoopBackOff", f"back-off 5m0s restarting failed container=main pod={name}_{NAMESPACE}({pod['metadata']['uid']})"), last=crash, restarts=9)],
    )
    _kubelet(w, pod, "BackOff", "Back-off restarting failed container main in pod " + f"{name}_{NAMESPACE}({pod['metadata']['uid']})", 160)

    pod = _placed(w, nodes[1], ("Deployment", "whisper-asr"), "whisper-asr")
    start = exited(128, "StartError", 1, ran=0)
    start["message"] = "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running prestart hook #0: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\nnvidia-container-cli: initialization error: nvml error: driver not loaded: unknown"
    pod["status"].update(
        conditions=_conditions(True, False),
        containerStatuses=[_container("main", pod["spec"]["containers"][0]["image"], state=_waiting("CrashLoopBackOff", "back-off 2m40s restarting failed container=main"), last=start, restarts=6)],
    )
    _kubelet(w, pod, "Failed", "Error: " + start["message"], 7)

    pod = _placed(w, nodes[2], ("Job", "batch-embed-1130"), "batch-embed")
    refused = "Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 2, capacity: 2"
    pod["status"] = {
        "conditions": [{"lastProbeTime": None, "lastTransitionTime": ts(CREATED - 0.5), "status": "True", "type": "PodScheduled"}],
        "message": f"Pod {refused}",
        "phase": "Failed",
        "qosClass": pod["status"]["qosClass"],
        "reason": "OutOfnvidia.com/gpu",
        "startTime": ts(CREATED - 0.5),
    }
    _kubelet(w, pod, "OutOfnvidia.com/gpu", refused)

    volume = {"volumes": [{"configMap": {"defaultMode": 420, "name": "tts-config"}, "name": "config"}]}
    pod = _placed(w, nodes[3], ("Deployment", "tts-serve"), "tts-serve", extra=volume)
    pod["spec"]["containers"][0]["volumeMounts"] = [{"mountPath": "/etc/tts", "name": "config", "readOnly": True}]
    pod["status"].update(
        conditions=_conditions(True, False, sandbox=False),
        containerStatuses=[_container("main", pod["spec"]["containers"][0]["image"], state=_waiting("ContainerCreating"))],
        phase="Pending",
    )
    _kubelet(w, pod, "FailedMount", 'MountVolume.SetUp failed for volume "config" : configmap "tts-config" not found', 21)

    pod = _placed(w, nodes[3], ("Deployment", "rerank"), "rerank")
    pod["status"].update(
        conditions=_conditions(True, False, sandbox=False),
        containerStatuses=[_container("main", pod["spec"]["containers"][0]["image"], state=_waiting("ContainerCreating"))],
        phase="Pending",
    )
    _kubelet(w, pod, "FailedCreatePodSandBox", 'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "nvidia" is configured', 19)

    fetch = "gcr.io/google.com/cloudsdktool/google-cloud-cli:slim"
    init: Obj = {"initContainers": [{"command": ["gsutil", "-m", "cp", "-r", "gs://ml-prod-weights/llama-3.1-8b", "/weights"], "image": fetch, "name": "fetch-weights", "resources": {}, "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "FallbackToLogsOnError"}]}
    pod = _placed(w, nodes[1], ("Deployment", "sglang"), "sglang", extra=init)
    denied = exited(1, "Error", 2, ran=0.2)
    denied["message"] = "AccessDeniedException: 403 sglang@ml-prod.iam.gserviceaccount.com does not have storage.objects.list access to the Google Cloud Storage bucket. Permission 'storage.objects.list' denied on resource (or it may not exist).\n"
    pod["status"].update(
        conditions=_conditions(False, False),
        initContainerStatuses=[_container("fetch-weights", fetch, state=_waiting("CrashLoopBackOff", "back-off 5m0s restarting failed container=fetch-weights"), last=denied, restarts=8, init=True)],
        containerStatuses=[_container("main", pod["spec"]["containers"][0]["image"], state=_waiting("PodInitializing"))],
        phase="Pending",
    )

    pod = _placed(w, nodes[2], ("Deployment", "vllm-mistral"), "vllm-mistral")
    pod["status"].update(
        conditions=_conditions(True, False),
        containerStatuses=[_container("main", pod["spec"]["containers"][0]["image"], state=_waiting("ContainerCreating"))],
        phase="Pending",
    )
    _kubelet(w, pod, "Pulling", f'Pulling image "{pod["spec"]["containers"][0]["image"]}"', kind="Normal")
