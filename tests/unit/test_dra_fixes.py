"""Fixes for pods that ask devices through ResourceClaims: the changed view frees the claims of the pods
a fix ends as kube-controller-manager would, and each DRA outcome offers the changes that remove its
cause (a recreated claim or template, a repaired driver, freed devices, a pod that can go where its
claim is). Every such fix is checked on the corpus by `tests/kubectl/test_dra_fixes.py` (recreated
objects) and `tests/unit/test_fixes.py` (objects named, pod patches)."""

from __future__ import annotations

import json
import shlex
from dataclasses import replace

from devtools.corpus import ROOT
from diagnosis.dra_objects import Claim, Dra
from diagnosis.model import Fix
from diagnosis.triage.classify import classify
from diagnosis.triage.fixes import UNCHECKED, ending
from diagnosis.triage.fixes import changed as changed_view
from diagnosis.triage.funnel import Shared
from diagnosis.views import TriageView
from tests.unit.test_gpu_corpus import view_of

LAB = ROOT / "bot/demo/gpu-dra.json"
GKE = ROOT / "tests/corpus/triage/dra-gke-h100-v1beta1.json"
MIG = ROOT / "tests/corpus/triage/dra-mig-v1beta2.json"
DOMAIN = ROOT / "tests/corpus/triage/dra-compute-domain.json"


def _claim(view: TriageView, ns: str, claim: str) -> Claim | None:
    return view.dra.claim_index.get((ns, claim))


def _fixes(view: TriageView) -> tuple[Fix, ...]:
    return classify(view).fixes


def _patch(fix: Fix) -> list[dict[str, object]]:
    """The JSON patch the fix's first command applies."""
    argv = shlex.split(fix.commands[0].text.split(" > ")[0])
    found = json.loads(argv[argv.index("-p") + 1])
    assert isinstance(found, list)
    return found


def test_ending_the_only_pod_of_a_named_claim_deallocates_it() -> None:
    view = view_of(LAB, "dra-lab", "case-dra-exhaust")
    after = changed_view(view, ending("", [("dra-lab", "llm-finetune-0")]))
    freed = _claim(after, "dra-lab", "llm-finetune-gpus")
    assert freed is not None
    assert (freed.allocated, freed.results, freed.reserved_for, freed.node_selector) == (False, (), (), None)
    assert _claim(view, "dra-lab", "llm-finetune-gpus") != freed  # the view itself is untouched
    assert after.dra.devices is view.dra.devices  # what was worked out about the devices stays
    assert _claim(after, "dra-lab", "pretrain-8x") is _claim(view, "dra-lab", "pretrain-8x")


def test_ending_a_pod_deletes_the_claim_made_for_it() -> None:
    view = view_of(GKE, "llm", "pretrain-70b-0")
    assert _claim(view, "llm", "vllm-serve-0-gpu-q8c0d") is not None
    after = changed_view(view, ending("", [("llm", "vllm-serve-0")]))
    assert _claim(after, "llm", "vllm-serve-0-gpu-q8c0d") is None


def test_a_claim_another_pod_still_reserves_stays_allocated() -> None:
    view = view_of(LAB, "dra-lab", "case-dra-exhaust")
    shared = _claim(view, "dra-lab", "llm-finetune-gpus")
    assert shared is not None
    two = replace(shared, reserved_for=(*shared.reserved_for, ("llm-finetune-1", "")))
    claims = tuple(two if c is shared else c for c in view.dra.claims)
    view = replace(view, dra=replace(view.dra, claims=claims))
    after = changed_view(view, ending("", [("dra-lab", "llm-finetune-0")]))
    assert _claim(after, "dra-lab", "llm-finetune-gpus") == two


def test_exhausted_frees_the_holders_claims_then_asks_fewer_devices() -> None:
    fixes = _fixes(view_of(LAB, "dra-lab", "case-dra-exhaust"))
    assert [f.summary.split(":")[0] for f in fixes] == [
        "free dra-a100-0 (claim dra-lab/llm-finetune-gpus holds its devices)",
        "ask 1 device instead of 2 in request gpus in ResourceClaim dra-lab/a100-pair-claim (recreate it",
    ]
    assert _patch(fixes[1]) == [{"op": "add", "path": "/spec/devices/requests/0/exactly/count", "value": 1}]
    assert fixes[0].objects == ("pod/dra-lab/llm-finetune-0",)
    assert [c.text for c in fixes[0].commands] == ["kubectl delete pod llm-finetune-0 -n dra-lab"]


def test_tainted_devices_are_repaired_first_then_tolerated_in_the_request() -> None:
    repair, tolerate = _fixes(view_of(LAB, "dra-lab", "case-dra-tainted"))
    assert repair.summary.startswith("repair the devices the gpu.nvidia.com driver taints on dra-l4-0")
    assert [o.split("/")[0] for o in repair.objects] == ["resourceslice"]
    assert _patch(tolerate) == [
        {
            "op": "add",
            "path": "/spec/devices/requests/0/exactly/tolerations",
            "value": [
                {"key": "gpu.nvidia.com/gpu-lost", "operator": "Exists", "effect": "NoSchedule"},
                {"key": "gpu.nvidia.com/xid", "operator": "Equal", "value": "79", "effect": "NoSchedule"},
            ],
        }
    ]
    assert repair.opens == tolerate.opens == ("dra-l4-0",)


def test_a_selector_value_that_exists_is_offered_per_pool_it_opens() -> None:
    fixes = _fixes(view_of(MIG, "inference", "mixtral-serve"))
    assert [(f.summary.split(" in ")[0], f.opens) for f in fixes] == [
        ("select '1g.10gb'", ("a100-mig-2",)),
        ("select '2g.20gb'", ("a100-mig-1",)),
    ]
    assert _patch(fixes[0]) == [
        {
            "op": "replace",
            "path": "/spec/devices/requests/0/exactly/selectors/0/cel/expression",
            "value": "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'",
        }
    ]


def test_a_misspelt_class_in_a_template_recreates_the_template_and_the_pod() -> None:
    (fix,) = _fixes(view_of(MIG, "inference", "embed-batch-0-9kq2z"))
    assert fix.summary.startswith("ask class mig.nvidia.com in request mig in ResourceClaimTemplate ")
    assert fix.objects == (
        "resourceclaimtemplate/inference/one-mig-typo",
        "pod/inference/embed-batch-0-9kq2z",
    )
    assert _patch(fix) == [
        {
            "op": "replace",
            "path": "/spec/spec/devices/requests/0/exactly/deviceClassName",
            "value": "mig.nvidia.com",
        }
    ]
    assert [c.text for c in fix.commands][1:] == [
        "kubectl replace --force -f one-mig-typo.yaml",
        "kubectl delete pod embed-batch-0-9kq2z -n inference",
    ]


def test_a_claim_allocated_where_the_pod_cannot_go_is_followed_by_the_pod() -> None:
    (fix,) = _fixes(view_of(DOMAIN, "train", "train-a-eval"))
    assert fix.pod_patch == {"spec": {"nodeSelector": {"kubernetes.io/hostname": "gb200-rack1-0"}}}
    assert fix.opens == ("gb200-rack1-0",)


def test_a_missing_template_is_named_but_what_it_opens_is_not_claimed() -> None:
    (fix,) = _fixes(view_of(LAB, "dra-lab", "case-dra-claim"))
    assert fix.summary.startswith("create ResourceClaimTemplate dra-lab/a100-pair, or name one that exists")
    assert UNCHECKED in fix.summary
    assert (fix.opens, fix.pod_patch, fix.objects) == ((), None, ("pod/dra-lab/case-dra-claim",))


def test_a_holder_is_freed_when_the_free_devices_break_the_claims_constraint() -> None:
    """Two 1g.10gb on one GPU (matchAttribute parentUUID): one is free on each GPU, enough by count;
    ending one holder on GPU 0 frees a second one there."""
    (fix,) = _fixes(view_of(MIG, "inference", "embed-pair"))
    assert fix.summary.startswith(
        "free a100-mig-2 (claim inference/triton-0-0-mig-ax0 holds its devices): end "
    )
    assert (fix.objects, fix.opens) == (("pod/inference/triton-0-0",), ("a100-mig-2",))


def test_who_holds_a_device_after_a_fix_is_worked_out_from_before() -> None:
    """A fix that ends pods frees a few claims of thousands: the changed DRA objects derive their
    holders and claims by name from the view's, name the pools whose holders changed, and hold what
    they would hold worked out afresh, their claims in the same order as before."""
    view = view_of(LAB, "dra-lab", "case-dra-exhaust")
    for claim in view.dra.claims:
        users = [(claim.namespace, name) for name, _ in claim.reserved_for]
        if not claim.allocated or not users:
            continue
        after = changed_view(view, ending("", users)).dra
        afresh = Dra(claims=after.claims, devices=after.devices)
        assert after.base is view.dra
        assert after.touched == {(r.driver, r.pool) for r in claim.results}
        assert after.holders == afresh.holders
        assert after.claim_index == afresh.claim_index
        assert not any(holder is claim for holder, _ in after.holders.values())
        made_for_the_pod = claim.controller is not None and claim.controller[0] == "Pod"  # deleted with it
        assert [c.name for c in after.claims] == [
            c.name for c in view.dra.claims if not (made_for_the_pod and c is claim)
        ]


def test_two_claims_holding_one_device_are_worked_out_afresh() -> None:
    """An inconsistent snapshot may allocate one device to two claims: the later one holds it, and
    once it is gone the earlier one does, as a fresh reading would say."""
    view = view_of(LAB, "dra-lab", "case-dra-exhaust")
    first = next(c for c in view.dra.claims if c.allocated and c.results)
    second = replace(first, name=f"{first.name}-copy")
    both = Dra(claims=(first, second), devices=view.dra.devices)
    device = first.results[0].device_id
    assert both.holders[device][0] is second
    assert both.with_claims({(second.namespace, second.name): None}, both.devices).holders[device][0] is first


def test_a_fixs_devices_reuse_what_the_nodes_it_leaves_alone_found() -> None:
    """The pod's claims against the changed DRA objects: a node none of whose pools the fix touches
    finds the very choices it found before; the node whose devices the fix frees finds them free."""
    view = view_of(LAB, "dra-lab", "case-dra-exhaust")
    shared = Shared()
    before = shared.devices(view.pod, view.dra)
    after = changed_view(view, ending("", [("dra-lab", "llm-finetune-0")]))
    devices = shared.devices(after.pod, after.dra)
    assert devices.base is before
    freed = {r.pool for c in view.dra.claims if c.name == "llm-finetune-gpus" for r in c.results}
    for node in view.nodes:
        if node["metadata"]["name"] in freed:
            assert devices.choices(node) != before.choices(node)
            assert devices.unallocatable(node) != before.unallocatable(node)
        else:
            assert devices.choices(node) is before.choices(node)


def test_what_a_dra_knows_of_its_holders_goes_with_its_claims() -> None:
    """A copy with other claims works their holders out again, whatever the original knew."""
    view = view_of(LAB, "dra-lab", "case-dra-exhaust")
    after = changed_view(view, ending("", [("dra-lab", "llm-finetune-0")])).dra
    again = replace(after, claims=view.dra.claims)
    assert (again.base, again.touched) == (None, frozenset())
    assert again.holders == view.dra.holders != after.holders
    assert view.dra.holding().holders is view.dra.holders
