"""The names a person types, in Slack and on the command line alike: the forms that name a pod or a
JobSet (`NS NAME`, `NS/NAME`, `-n NS NAME`; `why` takes `KIND/NAME` for NAME), and each name checked
against the Kubernetes name rules of `diagnosis.names`, with a reason a person can act on.

Plain Python, so that the CLI parses with it without loading pydantic; `handlers.requests` builds
Slack's typed requests from the same functions. Each raises ValueError naming the problem.
"""

from __future__ import annotations

from collections.abc import Sequence

from cluster.reader import KIND_WORDS
from diagnosis.names import is_dns1123_label, is_dns1123_subdomain

_SHOWN = 80
"""How much of a rejected value is echoed back: enough to see the typo, not a wall of paste."""


def shown(value: str) -> str:
    return value if len(value) <= _SHOWN else value[: _SHOWN - 1] + "…"


def namespace(value: str) -> str:
    if not is_dns1123_label(value):
        raise ValueError(
            f"'{shown(value)}' is not a namespace name (lowercase letters, digits and '-', at most 63)"
        )
    return value


def object_name(value: str) -> str:
    if not is_dns1123_subdomain(value):
        raise ValueError(
            f"'{shown(value)}' is not a Kubernetes object name (lowercase letters, digits, '-' and '.')"
        )
    return value


def cluster(value: str) -> str:
    if not is_dns1123_label(value):
        raise ValueError(f"'{shown(value)}' is not a cluster name (lowercase letters, digits and '-')")
    return value


def namespace_and_name(what: str, words: Sequence[str], given_namespace: str | None) -> tuple[str, str]:
    """The namespace and the name of the `what` ("pod", "JobSet") that `words` give: `NS NAME`,
    `NS/NAME`, or `NAME` when the namespace was given with `-n NS` (`given_namespace`)."""
    if given_namespace is not None:
        if len(words) != 1:
            raise ValueError(f"with -n NAMESPACE, give exactly one {what} name")
        space, name = given_namespace, words[0]
    elif len(words) == 1 and words[0].count("/") == 1:
        space, _, name = words[0].partition("/")
    elif len(words) == 2:
        space, name = words
    else:
        raise ValueError(f"give a namespace and a {what} name")
    return namespace(space), object_name(name)


def namespace_kind_and_name(words: Sequence[str], given_namespace: str | None) -> tuple[str, str | None, str]:
    """The namespace, the kind (of `cluster.reader.KIND_WORDS`; None: any) and the name that `words`
    give for `why`: the forms of `namespace_and_name`, where the name may be written `KIND/NAME`
    (`NS KIND/NAME`, `NS/KIND/NAME`, `-n NS KIND/NAME`)."""
    if given_namespace is None and len(words) == 1 and words[0].count("/") == 2:
        space, _, named = words[0].partition("/")
        words = [space, named]
    kind = None
    if words and (given_namespace is not None or len(words) == 2) and "/" in words[-1]:
        word, _, name = words[-1].rpartition("/")
        if word.lower() not in KIND_WORDS:
            raise ValueError(f"unknown kind '{shown(word)}' (one of {', '.join(sorted(KIND_WORDS))})")
        kind, words = KIND_WORDS[word.lower()], [*words[:-1], name]
    space, name = namespace_and_name("pod or workload", words, given_namespace)
    return space, kind, name
