"""`/jobset why` on a TrainJob (Kubeflow Trainer v2): its own states first, then its JobSet's."""
