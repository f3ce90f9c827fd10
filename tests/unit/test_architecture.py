"""ARCHITECTURE.md stays true: its verdict tables are the ones in `diagnosis/__init__.py`, name
functions that exist and are named after their verdicts, and list them in the order the code runs
them; its layout tree matches the repository; it names every import contract; and its recipe for a
new funnel check is all a new step needs."""

from __future__ import annotations

import ast
import importlib
import re
import tomllib
from collections.abc import Callable
from typing import Any

import pytest

import diagnosis
from devtools.corpus import ROOT, cases
from diagnosis.jobset.explain import CHECKS
from diagnosis.lws.explain import CHECKS as LWS_CHECKS
from diagnosis.model import JobSetVerdict, LwsVerdict, PodVerdict, TrainJobVerdict
from diagnosis.trainjob.explain import CHECKS as TRAINJOB_CHECKS
from diagnosis.triage import classify
from diagnosis.triage.classify import FUNNEL, RUNGS

ARCHITECTURE = (ROOT / "ARCHITECTURE.md").read_text()
ROW = re.compile(r"^\| ([a-z-]+) \| `([a-z_.]+)`(?: \(funnel step\))? \|$", re.MULTILINE)


def table(text: str, question: str) -> list[tuple[str, str]]:
    """The (verdict, function) rows of the table headed `| `question` verdict | function |`."""
    rows = text.split(f"| `{question}` verdict | function |", 1)[1].split("\n\n", 1)[0]
    return ROW.findall(rows)


def function(path: str) -> Callable[..., Any]:
    module, _, attribute = f"diagnosis.{path}".rpartition(".")
    found: Callable[..., Any] = getattr(importlib.import_module(module), attribute)
    return found


def test_the_verdict_tables_are_the_package_docstrings() -> None:
    assert diagnosis.__doc__ is not None
    for question in ("/triage", "/jobset why", "kubewhy lws why", "/jobset why NS TRAINJOB"):
        assert table(ARCHITECTURE, question) == table(diagnosis.__doc__, question)


def test_every_triage_verdict_has_its_function_in_the_order_the_classifier_runs_them() -> None:
    rows = table(ARCHITECTURE, "/triage")
    assert [verdict for verdict, _ in rows] == [v.value for v in PodVerdict]
    for verdict, path in rows:
        assert function(path).__name__ == verdict.replace("-", "_")
    funnel = [(step.verdict.value, step.check) for step in FUNNEL]
    assert [(v, function(p)) for v, p in rows if (v, function(p)) in funnel] == funnel


def test_every_jobset_verdict_has_its_function_in_the_order_of_checks() -> None:
    rows = table(ARCHITECTURE, "/jobset why")
    offline = {JobSetVerdict.UNKNOWN.value}
    assert [verdict for verdict, _ in rows] == [v.value for v in JobSetVerdict if v.value not in offline]
    functions = [function(path) for _, path in rows]
    assert [f.__name__ for f in functions] == [v.replace("-", "_") for v, _ in rows]
    assert functions[: len(CHECKS)] == list(CHECKS)


@pytest.mark.parametrize(
    ("question", "verdicts", "checks"),
    [
        ("kubewhy lws why", list(LwsVerdict), LWS_CHECKS),
        ("/jobset why NS TRAINJOB", list(TrainJobVerdict), TRAINJOB_CHECKS),
    ],
)
def test_every_lws_and_trainjob_verdict_has_its_function_in_the_order_of_checks(
    question: str, verdicts: list[str], checks: tuple[Callable[..., Any], ...]
) -> None:
    rows = table(ARCHITECTURE, question)
    assert [verdict for verdict, _ in rows] == [str(v) for v in verdicts]
    functions = [function(path) for _, path in rows]
    assert [f.__name__ for f in functions] == [v.replace("-", "_") for v, _ in rows]
    assert functions[: len(checks)] == list(checks)


def tree() -> list[str]:
    """The paths of the layout block: one entry a line, two spaces of indent per level."""
    block = ARCHITECTURE.split("## Layout", 1)[1].split("```", 2)[1]
    paths: list[str] = []
    parents: list[str] = []
    for line in block.splitlines():
        entry = re.match(r"^( *)(\S+)  ", line)
        if entry is None:
            continue
        depth = len(entry.group(1)) // 2
        parents[depth:] = [entry.group(2)]
        paths.append("".join(parents))
    return paths


def test_the_layout_tree_matches_the_repository() -> None:
    listed = tree()
    assert [p for p in listed if not (ROOT / p).exists()] == []
    packages = {
        f"{init.parent.relative_to(ROOT)}/"
        for top in ("bot", "handlers", "cluster", "diagnosis", "devtools", "tests", "bench")
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert packages - set(listed) == set()


def test_every_import_contract_is_explained() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    names = [c["name"] for c in config["tool"]["importlinter"]["contracts"]]
    assert [n for n in names if f"| {n} |" not in ARCHITECTURE] == []


def imported(node: ast.AST) -> list[str]:
    """The absolute module names an import statement names."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [node.module]
    return []


def test_only_cluster_kube_imports_the_kubernetes_client() -> None:
    """`cluster.kube` loads the client's modules without its packages' eager `__init__`s: a module
    importing `kubernetes` before it would load them all again (a tenth of a second of every CLI run)."""
    importers = {
        str(path.relative_to(ROOT))
        for top in ("bot", "handlers", "cluster", "diagnosis")
        for path in (ROOT / top).rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if any(n == "kubernetes" or n.startswith("kubernetes.") for n in imported(node))
    }
    assert importers == {"cluster/kube.py"}


# --- the recipe for a new funnel check ---------------------------------------------------------------

TRIAGE = ROOT / "diagnosis" / "triage"


def step_modules() -> list[str]:
    """The modules of `diagnosis/triage/steps/`, files and packages, by name."""
    steps = TRIAGE / "steps"
    files = [p.stem for p in steps.glob("*.py") if p.stem != "__init__"]
    return sorted([*files, *(p.parent.name for p in steps.glob("*/__init__.py"))])


def module_of(verdict: str) -> str:
    return verdict.replace("-", "_")


def test_each_step_module_is_named_after_a_verdict_and_each_verdict_has_one() -> None:
    assert step_modules() == sorted(module_of(v.value) for v in PodVerdict)


def test_each_step_module_stands_once_in_the_ladder() -> None:
    """The rungs (`RUNGS`), the funnel's steps (`FUNNEL`) and what it says when a node passes them all
    (`PASSED`), each a module of its own: the ladder is the one place that orders them."""
    ladder = [
        *(rung.__module__ for rung in RUNGS),
        *(step.check.__module__ for step in FUNNEL),
        classify.PASSED.__module__,
    ]
    assert sorted(ladder) == [f"diagnosis.triage.steps.{m}" for m in step_modules()]
    for step in FUNNEL:
        module = importlib.import_module(step.check.__module__)
        assert module.STEP is step
        assert step.check.__name__ == module_of(step.verdict.value)


def test_each_funnel_step_names_the_scheduler_rule_it_mirrors() -> None:
    """Its module's docstring cites the Filter plugin's source, and `Step.plugins` names the plugins
    (`devtools.oracle` compares the step with them)."""
    for step in FUNNEL:
        module = importlib.import_module(step.check.__module__)
        assert module.__doc__ is not None
        assert ".go`" in module.__doc__, module.__name__
        assert step.plugins, module.__name__


def test_each_verdict_has_a_corpus_case_and_a_table_row() -> None:
    """Its README row, with its meaning, is checked by tests/deploy/test_readme.py."""
    rows = dict(table(ARCHITECTURE, "/triage"))
    shown = {case.verdict for case in cases("triage")}
    for verdict in PodVerdict:
        assert rows[verdict.value] == f"triage.steps.{module_of(verdict.value)}.{module_of(verdict.value)}"
        assert verdict.value in shown, f"no case in tests/corpus/triage/index.yaml gives {verdict.value}"


def test_every_other_triage_module_is_in_the_shared_core_layer() -> None:
    """The import contract that keeps the shared core from importing a step lists the shared core: a
    new module beside `steps/` is added there (or it would escape the contract)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (contract,) = [
        c for c in config["tool"]["importlinter"]["contracts"] if c.get("containers") == ["diagnosis.triage"]
    ]
    assert contract["layers"][:2] == ["classify", "steps"]
    core = {m.strip() for m in contract["layers"][2].split(":")}
    modules = {p.stem for p in TRIAGE.glob("*.py")} | {p.parent.name for p in TRIAGE.glob("*/__init__.py")}
    assert core == modules - {"__init__", "classify", "steps"}
