"""A Kubernetes API server simulator over HTTP, serving snapshot files to the real `kubernetes`
client and real kubectl.

    with serve("tests/corpus/triage/taint-one-node.json") as sim:
        reader = LiveReader.from_kubeconfig(sim.kubeconfig, None)
        ...
        assert all(r.verb in ("get", "list") for r in sim.requests)

`sim.url`, `sim.kubeconfig` (a kubeconfig file for it), `sim.requests` (every request as the
authorizer sees it: method, path, query, verb, group, resource, subresource, namespace, name) and
`sim.faults` (change them while it runs).

Watches are served too: change the cluster with `sim.store.put(obj)` and `sim.store.delete(kind,
namespace, name)` and open watches see it; `sim.store.compact()` makes older revisions 410 Gone;
`sim.drop_watches()` cuts the open ones; `sim.open_watches()` counts them.
"""

from devtools.apisim.faults import Faults
from devtools.apisim.server import TOKEN, USER, Request, Simulator, serve

__all__ = ["TOKEN", "USER", "Faults", "Request", "Simulator", "serve"]
