"""A generated cluster served by the API simulator in its own process.

A real API server does not share the client's interpreter; the simulator is a threaded Python server,
so in-process it would compete with the code under measurement for the GIL. `simulated(...)` starts
`python -m bench.apiserver` (which generates the cluster from the same seed and serves it with
`devtools.apisim.serve`), reads one JSON line describing it, and stops it when the block ends. The child
also stops by itself when its stdin closes, so it never outlives the benchmark.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

Key = tuple[str, str]


@dataclass(frozen=True)
class Served:
    """What the benchmark knows of the served cluster."""

    url: str
    kubeconfig: str
    nodes: int
    pods: int
    objects: int
    pinned: Key
    unpinned: Key
    jobset: Key
    samples: tuple[Key, ...]
    """Pods to ask about in a burst: pending ones of every kind, then running accelerator pods."""
    startup_s: float
    """Generating, indexing and warming the cluster."""
    rss_mib: int
    """The server process's peak RSS once serving."""
    dra: bool = False
    """The GPUs are DRA devices (`devtools.dra_cluster`), asked for through ResourceClaims."""
    autoscaling: bool = False
    """cluster-autoscaler speaks: its status, and events on the pending pods
    (`devtools.autoscaling_cluster`)."""

    @property
    def label(self) -> str:
        return (
            f"{self.nodes:,} nodes / {self.pods:,} pods"
            + (", GPUs by DRA" if self.dra else "")
            + (", autoscaling on" if self.autoscaling else "")
        )


@contextmanager
def simulated(
    nodes: int,
    pods_per_node: int,
    *,
    slices: int = 4,
    hosts_per_slice: int = 64,
    dra: bool = False,
    autoscaling: bool = False,
    pending: int | None = None,
) -> Iterator[Served]:
    """Serve `devtools.cluster.generate(nodes, pods_per_node, …)` (with `pending` pods waiting; None:
    the generator's share) from a child process; with `dra`, its GPUs served by the DRA driver
    (`devtools.dra_cluster.on_dra`); with `autoscaling`, its cluster-autoscaler speaking
    (`devtools.autoscaling_cluster.with_autoscaler`)."""
    shape = [
        "--slices",
        str(slices),
        "--hosts-per-slice",
        str(hosts_per_slice),
        *(["--dra"] if dra else []),
        *(["--autoscaling"] if autoscaling else []),
        *(["--pending", str(pending)] if pending is not None else []),
    ]
    command = [sys.executable, "-m", "bench.apiserver", str(nodes), str(pods_per_node), *shape]
    with subprocess.Popen(
        command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as child:
        assert child.stdin is not None
        assert child.stdout is not None
        try:
            line = child.stdout.readline()
            if not line:
                raise RuntimeError(f"the API simulator exited ({child.wait()}) before serving")
            info = json.loads(line)
            keys = {k: tuple(info[k]) for k in ("pinned", "unpinned", "jobset")}
            yield Served(**(info | keys | {"samples": tuple(tuple(k) for k in info["samples"])}))
        finally:
            child.stdin.close()  # the child stops when its stdin closes
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()


WARMED = (
    "/api/v1/nodes",
    "/api/v1/pods",
    "/apis/resource.k8s.io/v1/resourceslices",
    "/apis/resource.k8s.io/v1/resourceclaims",
)


def warm(url: str, token: str) -> None:
    """Read every node, pod and DRA object once, in pages, so that the simulator has encoded each
    object before anything is measured: a real API server answers from a warm watch cache."""
    for path in WARMED:
        more = "first"
        while more:
            query = urllib.parse.urlencode({"limit": 5000, "continue": "" if more == "first" else more})
            request = urllib.request.Request(
                f"{url}{path}?{query}", headers={"Authorization": f"Bearer {token}"}
            )
            with urllib.request.urlopen(request) as answer:
                more = json.load(answer)["metadata"].get("continue", "")


def samples(pods: list[dict[str, Any]], count: int = 50) -> list[Key]:
    """Up to `count` pods to ask about: five pending pods of each pending workload, then running
    accelerator pods spread over the cluster."""

    def key(pod: dict[str, Any]) -> Key:
        return pod["metadata"]["namespace"], pod["metadata"]["name"]

    def accelerated(pod: dict[str, Any]) -> bool:
        limits = (r for c in pod["spec"]["containers"] for r in c["resources"].get("limits", {}))
        return any(r.endswith(("/gpu", "/tpu")) for r in limits)

    by_owner: dict[str, list[Key]] = {}
    for pod in pods:
        if "nodeName" not in pod["spec"]:
            by_owner.setdefault(pod["metadata"]["ownerReferences"][0]["name"], []).append(key(pod))
    pending = [k for group in by_owner.values() for k in group[:5]]
    running = [key(p) for p in pods if "nodeName" in p["spec"] and accelerated(p)]
    return (pending + running[:: max(1, len(running) // count)])[:count]


def main() -> None:
    from bench.timing import peak_rss_mib
    from devtools.apisim import TOKEN, serve
    from devtools.autoscaling_cluster import with_autoscaler
    from devtools.cluster import NOW, generate
    from devtools.dra_cluster import on_dra

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("nodes", type=int)
    parser.add_argument("pods_per_node", type=int)
    parser.add_argument("--slices", type=int, default=4)
    parser.add_argument("--hosts-per-slice", type=int, default=64)
    parser.add_argument("--dra", action="store_true", help="serve the GPUs as DRA devices")
    parser.add_argument(
        "--autoscaling", action="store_true", help="with cluster-autoscaler's status and events"
    )
    parser.add_argument("--pending", type=int, help="pods waiting (default: the generator's share)")
    args = parser.parse_args()
    started = time.perf_counter()
    cluster = generate(
        args.nodes,
        args.pods_per_node,
        slices=args.slices,
        hosts_per_slice=args.hosts_per_slice,
        pending=args.pending,
    )
    objects = on_dra(cluster).objects() if args.dra else cluster.objects()
    if args.autoscaling:
        objects += with_autoscaler(cluster)
    kinds = Counter(o["kind"] for o in objects)
    info = {
        "nodes": kinds["Node"],
        "pods": kinds["Pod"],
        "objects": len(objects),
        "pinned": cluster.pinned,
        "unpinned": cluster.unpinned,
        "jobset": cluster.jobset,
        "samples": samples(cluster.pods),
        "dra": args.dra,
        "autoscaling": args.autoscaling,
    }
    del cluster
    with serve(objects, now=NOW) as sim:
        del objects
        warm(sim.url, TOKEN)
        info |= {
            "url": sim.url,
            "kubeconfig": sim.kubeconfig,
            "rss_mib": peak_rss_mib(),
            "startup_s": round(time.perf_counter() - started, 1),
        }
        print(json.dumps(info), flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
