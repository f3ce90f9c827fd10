"""`python -m devtools.lws_corpus`: rewrites the LeaderWorkerSet corpus (its snapshots and
`index.yaml`) and the LWS demo snapshot (`bot/demo/lws-*.json`)."""

from __future__ import annotations

from devtools.jobset_corpus.__main__ import write_corpus
from devtools.lws_corpus.scenarios import SCENARIOS

HEADER = (
    "# LeaderWorkerSet corpus: snapshot files and what `kubewhy lws why` must answer (format in\n"
    "# devtools/corpus.py). Written by `python -m devtools.lws_corpus`; edit the generator, not the\n"
    "# files.\n"
)

if __name__ == "__main__":
    write_corpus("lws", "LeaderWorkerSet", SCENARIOS, HEADER)
