"""One reader of each kind of object, all over one source: what `/triage`, `/jobset why` and
`kubewhy lws why` read through."""

from __future__ import annotations

from dataclasses import dataclass

from cluster.live.around import AroundReads
from cluster.live.capacity import CapacityReads
from cluster.live.dra import DraReads
from cluster.live.nodes import NodeReads
from cluster.live.peers import PeerReads
from cluster.live.queues import QueueReads
from cluster.live.source import Source
from cluster.live.storage import StorageReads


@dataclass(frozen=True)
class Readers:
    source: Source
    nodes: NodeReads
    peers: PeerReads
    storage: StorageReads
    dra: DraReads
    queues: QueueReads
    capacity: CapacityReads
    around: AroundReads

    @classmethod
    def over(cls, source: Source) -> Readers:
        nodes = NodeReads(source)
        peers, storage, dra = PeerReads(source, nodes), StorageReads(source), DraReads(source)
        around = AroundReads(source, nodes, peers, storage, dra)
        return cls(source, nodes, peers, storage, dra, QueueReads(source), CapacityReads(source), around)
