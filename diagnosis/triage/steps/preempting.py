"""The `preempting` rung: kube-scheduler's DefaultPreemption PostFilter
(`defaultpreemption/default_preemption.go`) nominated a node and waits for the victims to terminate.
"""

from __future__ import annotations

from dataclasses import replace

from diagnosis.model import PodVerdict
from diagnosis.patch import merge_patch
from diagnosis.relations import nominated_node
from diagnosis.triage.evidence import asks_lines, claim_devices, pending_notes, scheduler_lines
from diagnosis.triage.funnel import Answer, Seen, candidates
from diagnosis.triage.preemption import preempting as waiting_for_victims


def preempting(seen: Seen) -> Answer | None:
    view, requests = seen.view, seen.requests
    if not nominated_node(view.pod):
        return None
    advice = waiting_for_victims(view.pod, candidates(view.nodes), view.bound_pods, view.now)
    evidence = (
        *asks_lines(view.pod, requests, claim_devices(view)),
        *advice.evidence,
        *scheduler_lines(view, {}),
        *pending_notes(view.pod),
    )
    # The pod does not reach the funnel while it waits; at its next attempt the scheduler runs every
    # filter again, the nominated node first (`schedule_one.go`: nominatedNodeName is a hint, not a
    # binding). So the fixes are checked on the pod as that attempt sees it, without the nomination.
    attempt = replace(view, pod=merge_patch(view.pod, {"status": {"nominatedNodeName": None}}))
    return Answer(PodVerdict.PREEMPTING, advice, evidence, checked_on=attempt)
