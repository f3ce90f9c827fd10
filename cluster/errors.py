"""The errors of reading a cluster or a snapshot. The rest of kubewhy never sees a client exception.

Each error says what failed and how to fix it (`hint`), in words fit for Slack and for stderr.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class ClusterError(Exception):
    """The cluster (or snapshot) could not be read. CLI exit status 3."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} — {self.hint}" if self.hint else self.message


@dataclass(frozen=True)
class Missing:
    """Why a named object was not found, for the person who asked."""

    similar: tuple[str, ...] = ()
    """Names of existing objects of that kind in the namespace that are closest to the one asked for."""
    rejections: tuple[str, ...] = field(default=())
    """Messages of FailedCreate events in the namespace (`exceeded quota: …`, `RuntimeClass … not
    found`): objects whose creation is refused never come to exist."""
    namespaces: tuple[str, ...] | None = None
    """When the namespace itself does not exist, the existing namespaces closest to its name (a typo
    in the namespace is the likelier mistake then); None when it exists or could not be checked."""


class NotFound(Exception):
    """The named pod or JobSet does not exist. CLI exit status 1."""

    def __init__(self, kind: str, namespace: str, name: str, missing: Missing | None = None) -> None:
        super().__init__(f"{kind} {namespace}/{name} not found")
        self.kind = kind
        self.namespace = namespace
        self.name = name
        self.missing = missing or Missing()


class Ambiguous(NotFound):
    """A name that several kinds of object bear, asked without its kind (`kubewhy why NS NAME`):
    `missing.similar` lists each as `kind/name`, to ask again with one. CLI exit status 2."""

    def __init__(self, namespace: str, name: str, candidates: tuple[str, ...]) -> None:
        super().__init__("object", namespace, name, Missing(candidates))
        self.args = (f"{namespace}/{name} names {len(candidates)} objects: {', '.join(candidates)}",)


class Forbidden(ClusterError):
    """RBAC refused a read. Names the verb, resource and namespace, and the rule that would allow it."""

    def __init__(self, verb: str, resource: str, namespace: str | None, group: str = "") -> None:
        where = f"in namespace {namespace}" if namespace else "at cluster scope"
        qualified = f"{resource}.{group}" if group else resource
        super().__init__(
            f"forbidden: cannot {verb} {qualified} {where}",
            f'grant the rule {{apiGroups: ["{group}"], resources: ["{resource}"], verbs: ["{verb}"]}}'
            " to kubewhy's ServiceAccount (deploy/base/rbac.yaml)",
        )
        self.verb = verb
        self.resource = resource
        self.namespace = namespace
        self.group = group


class Unavailable(ClusterError):
    """The API server could not be reached or did not answer in time."""

    def __init__(self, server: str, cause: str) -> None:
        super().__init__(
            f"cannot reach the Kubernetes API at {server}: {cause}",
            "check the kubeconfig context, the network path to the API server and its health"
            " (kubectl get --raw /readyz)",
        )
        self.server = server
        self.cause = cause


class SnapshotError(ClusterError):
    """A snapshot file could not be read or is not a Kubernetes list. Names the file and the problem."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(
            f"cannot read snapshot {path}: {problem}",
            "save one with:"
            " kubectl get nodes,pods,events,jobs,jobsets,resourcequotas -A -o json > snapshot.json",
        )
        self.path = path
        self.problem = problem


def unread_line(what: str, error: ClusterError | NotFound) -> str:
    """One line of evidence for a read that failed but only enriched the answer: what is missing from
    it, and how to get it back (`events: forbidden — grant list on events`)."""
    if isinstance(error, Forbidden):
        qualified = f"{error.resource}.{error.group}" if error.group else error.resource
        return f"{what}: forbidden — grant {error.verb} on {qualified}"
    if isinstance(error, NotFound):
        return f"{what}: not served by this cluster — left out"
    return f"{what}: not read — {error.message}"


class Conflict(ClusterError):
    """A write lost a race: the object changed since it was read (HTTP 409, a stale
    `resourceVersion`), or it already exists. Read it again and decide again."""
