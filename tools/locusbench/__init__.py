"""Locus benchmark runner: builds the bench/ programs against every MPI found,
runs them side by side and writes tables, JSON and plots (see docs/bench.md)."""
