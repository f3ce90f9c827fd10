"""No product function grows past what a reader can hold: radon grades each function's cyclomatic
complexity A (1–5) to F (41+); E (31–40) and F are refused in `bot`, `handlers`, `cluster` and
`diagnosis`. A function that reaches E is split into named steps (ARCHITECTURE.md, *Reading the code*)."""

from __future__ import annotations

from collections.abc import Iterator

from radon.complexity import cc_rank, cc_visit
from radon.visitors import Class

from devtools.corpus import ROOT

PRODUCT = ("bot", "handlers", "cluster", "diagnosis")


def _graded() -> Iterator[tuple[str, str, int]]:
    for package in PRODUCT:
        for path in sorted((ROOT / package).rglob("*.py")):
            for block in cc_visit(path.read_text()):
                # A class is graded by its methods, which radon lists on their own too.
                if not isinstance(block, Class):
                    where = f"{path.relative_to(ROOT)}:{block.lineno} {block.fullname}"
                    yield where, cc_rank(block.complexity), block.complexity


def test_the_grading_sees_the_product_code() -> None:
    assert sum(1 for _ in _graded()) > 500


def test_no_product_function_is_graded_e_or_f() -> None:
    assert [f"{where} {grade} ({score})" for where, grade, score in _graded() if grade in "EF"] == []
