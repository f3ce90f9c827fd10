"""The pure core: objects in, verdicts out. No I/O, no clock, no Slack, no kubernetes client."""
