"""A real kube-apiserver and etcd on 127.0.0.1, for the tests that must meet the real thing: its
validation and defaulting, selectors, watch semantics and the RBAC authorizer.

The binaries come from the folder named by `KUBEBUILDER_ASSETS`, the layout controller-runtime's envtest
reads (`kube-apiserver` and `etcd` side by side; `setup-envtest use -p path` prints one). Without it the
tier is skipped with `missing()` as its reason.

    with serve() as server:
        loaded = load(server.admin, objects)
        reader = LiveReader.from_kubeconfig(str(server.admin_kubeconfig), None)
        ...
        unload(server.admin, loaded)

The server runs with no scheduler, controller manager or kubelet, so objects stay exactly as loaded.
Its admission leaves out the four plugins that rewrite what a snapshot says (a real cluster's objects
went through them already, and the controllers that finish their work are absent): `ServiceAccount`,
`DefaultTolerationSeconds`, `TaintNodesByCondition` and `DefaultStorageClass`. Every request of a
user other than the admin is written to `server.audit_log` (JSON, Metadata level): where RBAC refusals
show.
"""

from devtools.kubereal.api import Api, ApiError
from devtools.kubereal.loading import Loaded, load, objects_of, shifted, unload
from devtools.kubereal.server import ASSETS, Server, missing, serve

__all__ = [
    "ASSETS",
    "Api",
    "ApiError",
    "Loaded",
    "Server",
    "load",
    "missing",
    "objects_of",
    "serve",
    "shifted",
    "unload",
]
