"""How a live reader reaches its cluster: through a kubeconfig as kubectl does, or with the pod's
ServiceAccount, into a client configuration of its own (never the global default)."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from cluster.credentials import take_exec
from cluster.errors import ClusterError
from cluster.kube import (
    ApiClient,
    ConfigException,
    Configuration,
    KubeConfigMerger,
    load_incluster_config,
    load_kube_config_from_dict,
)
from cluster.transport import WORKERS
from diagnosis.objects import mapping, text


def kubeconfig_client(path: str | None, context: str | None, timeout: float) -> tuple[ApiClient, str] | None:
    """A client of the cluster that `path`, else `$KUBECONFIG` (a list of files, merged), else
    `~/.kube/config` names, and the context read (the one named, else the current one); None when
    there is no kubeconfig to read (the in-cluster ServiceAccount is then the way in)."""
    chosen = path or os.environ.get("KUBECONFIG") or None
    default = Path("~/.kube/config").expanduser()
    if chosen is None and not default.exists():
        if context:
            raise ClusterError(
                f"no kubeconfig to find context {context} in", "pass --kubeconfig PATH or set KUBECONFIG"
            )
        return None
    config_file = chosen or str(default)
    if not any(Path(p).expanduser().is_file() for p in config_file.split(os.pathsep) if p):
        raise ClusterError(
            f"kubeconfig {config_file} does not exist",
            "pass --kubeconfig PATH to an existing file or fix KUBECONFIG",
        )
    configuration = _configuration()
    try:
        merged = KubeConfigMerger(config_file).config  # type: ignore[no-untyped-call]  # untyped in kubernetes
        if merged is None:
            raise ConfigException("the file holds no configuration")
        credential = take_exec(merged, context, timeout)
        load_kube_config_from_dict(  # type: ignore[no-untyped-call]  # untyped in kubernetes
            merged, context, client_configuration=configuration, persist_config=False
        )
    except (ConfigException, OSError, ValueError, TypeError, AttributeError, yaml.YAMLError) as err:
        raise ClusterError(
            f"cannot use kubeconfig {config_file}"
            f"{f' (context {context})' if context else ''}: {' '.join(str(err).split())[:300]}",
            "check the file and the context (kubectl config get-contexts lists them)",
        ) from err
    except RecursionError:
        raise ClusterError(
            f"cannot use kubeconfig {config_file}: it is nested too deeply to be a kubeconfig",
            "check the file (kubectl config view reads it)",
        ) from None
    if credential is not None:
        configuration.refresh_api_key_hook = credential.refresh  # type: ignore[assignment]
    return ApiClient(configuration), context or text(mapping(merged.value).get("current-context"))


def in_cluster_client() -> ApiClient:
    """A client with the pod's ServiceAccount token, as a Deployment has."""
    configuration = _configuration()
    try:
        load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]  # untyped in kubernetes
    except ConfigException as err:
        raise ClusterError(
            f"no kubeconfig found and not running in a cluster: {err}",
            "pass --kubeconfig PATH or set KUBECONFIG (or run kubewhy in a pod with a ServiceAccount)",
        ) from err
    return ApiClient(configuration)


def _configuration() -> Configuration:
    """A fresh client configuration (never the global default): urllib3's own retries off, since
    Transport retries with its own policy; one pooled connection per worker."""
    configuration = Configuration()
    configuration.retries = False
    configuration.connection_pool_maxsize = WORKERS
    return configuration
