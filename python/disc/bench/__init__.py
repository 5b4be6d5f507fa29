"""Benchmark and evaluation harnesses (GraphNet samples)."""
