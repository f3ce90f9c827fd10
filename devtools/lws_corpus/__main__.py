"""`python -m devtools.lws_corpus`: rewrites the LeaderWorkerSet corpus (its snapshots and
`index.yaml`) and the LWS demo snapshot (`bot/demo/lws-*.json`)."""

from __future__ import annotations

from devtools.corpus import CORPUS
from devtools.jobset_corpus.__main__ import index_entry, write
from devtools.jobset_corpus.scenario import Scenario
from devtools.jobset_corpus.world import Obj, World
from devtools.lws_corpus.scenarios import SCENARIOS


def written(s: Scenario) -> Obj:
    """Writes the scenario's snapshot; the metadata of the LeaderWorkerSet asked about (the last made:
    a snapshot may hold another one beside it)."""
    world = World(s.seed)
    s.build(world)
    write(world, s.path)
    made: list[Obj] = [o["metadata"] for o in world.items if o["kind"] == "LeaderWorkerSet"]
    return made[-1]


def main() -> None:
    header = (
        "# LeaderWorkerSet corpus: snapshot files and what `kubewhy lws why` must answer (format in\n"
        "# devtools/corpus.py). Written by `python -m devtools.lws_corpus`; edit the generator, not the\n"
        "# files.\n"
    )
    entries = "\n".join(index_entry(s, written(s)) for s in SCENARIOS)
    (CORPUS / "lws" / "index.yaml").write_text(header + entries + "\n")


if __name__ == "__main__":
    main()
