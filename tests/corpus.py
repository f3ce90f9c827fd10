"""The corpus loader (`devtools.corpus`), under the name the tests import it by."""

from devtools.corpus import CORPUS, ROOT, Case, cases

__all__ = ["CORPUS", "ROOT", "Case", "cases"]
