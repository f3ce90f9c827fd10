"""Benchmarks of kubewhy on large simulated clusters, and the generator of those clusters.

`python -m bench` runs every benchmark and prints one table (see `bench/RESULTS.md`);
`python -m bench --quick` is the small smoke run that `tests/bench/` uses.
"""
