"""The parts of the official `kubernetes` client kubewhy uses, loaded without the packages' eager
`__init__`s: the only module of kubewhy that imports `kubernetes`.

kubewhy sends every call through the client's own `ApiClient` and REST layer (`kubernetes.client.
api_client`, `rest`, `exceptions`), configured by its own loaders (`kubernetes.config.kube_config`
for kubeconfig files, their TLS and auth; `incluster_config` for a pod's ServiceAccount) into its
own `Configuration`. It needs nothing else of the package. But `kubernetes/__init__.py` imports every
subpackage — `client`, `config`, `dynamic` (which loads `kubernetes_validate` and `jsonschema`),
`watch`, `stream` (websocket), `utils` (whose own `__init__` loads `create_from_yaml`), `leaderelection`,
`informer` — and importing any submodule runs that first: 60–70 ms of every CLI run, before the
first request, for modules kubewhy never calls. (The generated API and model modules are already
loaded lazily by `kubernetes/client/__init__.py` and `kubernetes/client/models/__init__.py`, and
kubewhy never touches them: see `cluster.transport`.)

So `kubernetes` and `kubernetes.utils` are registered here as bare packages — found on the path as
the import system would find them, their `__init__` not run — before their submodules are imported
the ordinary way. Such a package imports a submodule on first use of its attribute (`kubernetes.watch`,
`kubernetes.dynamic`), so code that uses the package as upstream does still works, at the cost of that
submodule only; its own re-exports (`kubernetes.utils.parse_quantity`) and `__version__` are not
there. A process that imported `kubernetes` before this module keeps it as it is: nothing is replaced.

This relies on the layout of kubernetes-client/python v37 (pinned in pyproject.toml): the modules
imported below at those paths, `kubernetes/client/__init__.py` loading its API classes and models
lazily (PEP 562), and `kubernetes.client.rest` importing `kubernetes.utils.retry` and `.keepalive`.
`tests/cli/test_cli.py` runs live `kubewhy` commands and fails if a generated API or model module,
or one of the skipped subpackages, is loaded.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterator
from functools import partial
from types import ModuleType

import urllib3

SKIPPED_INITS = ("kubernetes", "kubernetes.utils")
"""The packages whose `__init__` is not run (see above), parents first."""


def _submodule(package: str, name: str) -> ModuleType:
    """`package.name`, imported on first use of the attribute (a module-level `__getattr__`, PEP 562)."""
    if name.startswith("__"):
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    try:
        return importlib.import_module(f"{package}.{name}")
    except ModuleNotFoundError as err:
        if err.name != f"{package}.{name}":
            raise  # the submodule exists, one of its own imports is missing
        raise AttributeError(f"module {package!r} has no attribute {name!r}") from err


def _bare(package: str) -> None:
    """Register `package` without running its `__init__`, unless it is already imported."""
    if package in sys.modules:
        return
    spec = importlib.util.find_spec(package)
    if spec is None or spec.submodule_search_locations is None:
        raise ImportError(f"{package} is not an installed package", name=package)
    module = importlib.util.module_from_spec(spec)
    module.__getattr__ = partial(_submodule, package)  # type: ignore[method-assign]
    sys.modules[package] = module
    parent, _, child = package.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)


for _package in SKIPPED_INITS:
    _bare(_package)

from kubernetes.client.api_client import ApiClient  # noqa: E402
from kubernetes.client.configuration import Configuration  # noqa: E402
from kubernetes.client.exceptions import ApiException  # noqa: E402
from kubernetes.client.rest import should_bypass_proxies  # noqa: E402
from kubernetes.config.config_exception import ConfigException  # noqa: E402
from kubernetes.config.incluster_config import load_incluster_config  # noqa: E402
from kubernetes.config.kube_config import (  # noqa: E402
    ConfigNode,
    KubeConfigMerger,
    load_kube_config_from_dict,
)


def iter_resp_lines(response: urllib3.BaseHTTPResponse) -> Iterator[str]:
    """The lines of a streamed answer, split as the client's `Watch` splits them. Its module is
    imported here, at the first watch (`kubewhy serve`'s cache): it loads `pydoc`, of no use to a CLI run."""
    from kubernetes.watch.watch import iter_resp_lines as lines

    found: Iterator[str] = lines(response)  # type: ignore[no-untyped-call]  # untyped in kubernetes
    return found


__all__ = [
    "ApiClient",
    "ApiException",
    "ConfigException",
    "ConfigNode",
    "Configuration",
    "KubeConfigMerger",
    "iter_resp_lines",
    "load_incluster_config",
    "load_kube_config_from_dict",
    "should_bypass_proxies",
]
