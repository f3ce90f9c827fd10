"""The TrainJob corpus builder: writes `tests/corpus/trainjob/*.json` and `index.yaml`, from the JobSet
corpus's nodes, JobSets, pods and events, with `objects` modelling what Trainer v2.3.0 (and Kueue for a
queued TrainJob, the gang schedulers for its PodGroup) writes and `scenarios` one snapshot per state:

    python -m devtools.trainjob_corpus
"""
