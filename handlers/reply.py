"""The neutral answer a handler gives: what was asked about, on which cluster, and the diagnosis.
`bot` renders it."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace

from diagnosis.model import Command, Diagnosis, Fix
from diagnosis.objects import Ref


@dataclass(frozen=True)
class Scope:
    """Where an answer was read from, and how a person's kubectl reaches that same cluster. The
    commands are pasted on the person's machine: they carry no path of the bot's."""

    cluster: str
    """The configured cluster's name, the kubeconfig context, or the snapshot's path: the answer
    names it, whether or not the commands can."""
    context: str | None = None
    """The kubectl context every suggested command names (`--context`), where it is known: in a
    channel that answers for several clusters, a pasted command must not hit whichever is current.
    None: the commands name no context (a wrong one makes kubectl refuse them all)."""
    kubeconfig: str | None = None
    """The kubeconfig file the person named on the command line (the CLI's `--kubeconfig`: a path
    of their own, which they typed); never a file of the bot's."""

    def kubectl(self, command: Command) -> Command:
        """The command aimed at this cluster: `kubectl --kubeconfig K --context C …`."""
        flags = [
            *(("--kubeconfig", self.kubeconfig) if self.kubeconfig else ()),
            *(("--context", self.context) if self.context else ()),
        ]
        if not flags or not command.text.startswith("kubectl "):
            return command
        return replace(
            command, text=f"{shlex.join(('kubectl', *flags))} {command.text.removeprefix('kubectl ')}"
        )

    def aim(self, diagnosis: Diagnosis) -> Diagnosis:
        """The diagnosis with every command (the next ones and the fixes') aimed at this cluster."""
        return replace(
            diagnosis,
            next_commands=tuple(map(self.kubectl, diagnosis.next_commands)),
            fixes=tuple(self._fix(f) for f in diagnosis.fixes),
        )

    def _fix(self, fix: Fix) -> Fix:
        return replace(fix, commands=tuple(map(self.kubectl, fix.commands)))


@dataclass(frozen=True)
class Reply:
    target: Ref | None
    """The pod or JobSet asked about; None for an explained pasted message."""
    diagnosis: Diagnosis
    cluster: str = ""
    """Where it was read (`Scope.cluster`); empty for an explained pasted message."""

    @classmethod
    def of(cls, target: Ref, diagnosis: Diagnosis, scope: Scope) -> Reply:
        return cls(target, scope.aim(diagnosis), scope.cluster)


def noted(diagnosis: Diagnosis, notes: tuple[str, ...]) -> Diagnosis:
    """The diagnosis with the reading's notes (TriageView.notes) after its evidence."""
    return replace(diagnosis, evidence=(*diagnosis.evidence, *notes)) if notes else diagnosis
