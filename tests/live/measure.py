"""What one `/triage` costs the API server on a large simulated cluster: calls, bytes, pages.

    python -m tests.live.measure [NODES] [PODS_PER_NODE]

Serves `devtools.cluster.generate(NODES, PODS_PER_NODE)` from its own process (`bench.apiserver`) and
triages its pending pod pinned to a node pool, and its pending pod that may go to any GPU node. Not a
test: it prints numbers for the report.
"""

from __future__ import annotations

import asyncio
import sys
import time

from bench.apiserver import simulated
from cluster.live import LiveReader
from diagnosis.triage.classify import classify


async def _triage(kubeconfig: str, namespace: str, pod: str) -> str:
    reader = LiveReader.from_kubeconfig(kubeconfig, None, timeout=30.0)
    started = time.perf_counter()
    try:
        view, prepared = await reader.triage_view(namespace, pod)
    finally:
        await reader.aclose()
    seconds = time.perf_counter() - started
    return (
        f"{namespace}/{pod}: {classify(view, prepared).verdict}; {reader.stats}; {seconds:.2f} s; "
        f"{len(view.nodes)} nodes, {len(view.bound_pods)} bound pods in the view"
    )


def main() -> None:
    nodes, pods_per_node = (int(a) for a in [*sys.argv[1:], "5000", "20"][:2])
    with simulated(nodes, pods_per_node) as served:
        sys.stdout.write(f"{served.label}, served in {served.startup_s} s\n")
        for target in (served.pinned, served.unpinned):
            sys.stdout.write(f"{asyncio.run(_triage(served.kubeconfig, *target))}\n")


if __name__ == "__main__":
    main()
