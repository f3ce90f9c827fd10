"""What tests and benchmarks share and users never run: the API simulator, the local Slack's test parts,
the large-cluster generator and the bot environment. No product package imports it."""
