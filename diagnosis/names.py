"""Kubernetes name rules. Names from users and from objects are checked before they reach a URL or a
shell command."""

from __future__ import annotations

import re

_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?")


def is_dns1123_label(value: str) -> bool:
    """A namespace name (RFC 1123 label): at most 63 of a-z, 0-9 and '-', alphanumeric at both ends."""
    return len(value) <= 63 and _LABEL.fullmatch(value) is not None


def is_dns1123_subdomain(value: str) -> bool:
    """A pod, node or JobSet name (RFC 1123 subdomain): at most 253 characters, dot-separated labels."""
    return len(value) <= 253 and _SUBDOMAIN.fullmatch(value) is not None


def is_label_key(value: str) -> bool:
    """A label or annotation key: an optional DNS subdomain prefix and '/', then a name of at most 63."""
    prefix, _, name = value.rpartition("/")
    if prefix and not is_dns1123_subdomain(prefix):
        return False
    return _LABEL_NAME.fullmatch(name) is not None


def is_label_value(value: str) -> bool:
    """A label value: empty, or at most 63 of alphanumerics, '-', '_' and '.', alphanumeric at both ends."""
    return len(value) <= 63 and _LABEL_VALUE.fullmatch(value) is not None
