"""`python -m devtools.trainjob_corpus`: rewrites the TrainJob corpus (its snapshots and `index.yaml`)."""

from __future__ import annotations

from devtools.jobset_corpus.__main__ import write_corpus
from devtools.trainjob_corpus.scenarios import SCENARIOS

HEADER = (
    "# TrainJob corpus: snapshot files and what `/jobset why` must answer about a TrainJob (format in\n"
    "# devtools/corpus.py). Written by `python -m devtools.trainjob_corpus`; edit the generator.\n"
)

if __name__ == "__main__":
    write_corpus("trainjob", "TrainJob", SCENARIOS, HEADER)
