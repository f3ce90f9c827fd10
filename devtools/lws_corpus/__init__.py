"""The LeaderWorkerSet corpus builder: writes `tests/corpus/lws/*.json` and `index.yaml` (and the LWS
demo snapshot), from the JobSet corpus's nodes, events and world, with `objects` modelling what the
LWS controller, its webhooks and the StatefulSet controller write, and `scenarios` one snapshot per
stuck state. Every snapshot is derived from its seed, so running it again writes the same files:

    python -m devtools.lws_corpus
"""
