"""Benchmarks for gpuarray (run on the H200 machine for GPU figures)."""
