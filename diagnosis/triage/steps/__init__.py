"""The ladder's rungs and the funnel's steps, one module each, named after its verdict: each holds its
step whole (the kube-scheduler rule it mirrors, its evidence words, its fixes, its commands) and
imports only the shared core beside it (`diagnosis.triage`), never another step. Their order is
`diagnosis.triage.classify`'s; what they share is `diagnosis.triage.funnel` (`Step`, `Rung`)."""
