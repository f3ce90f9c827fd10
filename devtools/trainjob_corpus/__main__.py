"""`python -m devtools.trainjob_corpus`: rewrites the TrainJob corpus (its snapshots and `index.yaml`)."""

from __future__ import annotations

from devtools.corpus import CORPUS
from devtools.jobset_corpus.__main__ import index_entry, write
from devtools.jobset_corpus.scenario import Scenario
from devtools.jobset_corpus.world import Obj, World
from devtools.trainjob_corpus.scenarios import SCENARIOS


def written(s: Scenario) -> Obj:
    """Writes the scenario's snapshot; the metadata of the TrainJob asked about."""
    world = World(s.seed)
    s.build(world)
    write(world, s.path)
    made: list[Obj] = [o["metadata"] for o in world.items if o["kind"] == "TrainJob"]
    return made[-1]


def main() -> None:
    header = (
        "# TrainJob corpus: snapshot files and what `/jobset why` must answer about a TrainJob (format in\n"
        "# devtools/corpus.py). Written by `python -m devtools.trainjob_corpus`; edit the generator.\n"
    )
    entries = "\n".join(index_entry(s, written(s)) for s in SCENARIOS)
    (CORPUS / "trainjob" / "index.yaml").write_text(header + entries + "\n")


if __name__ == "__main__":
    main()
