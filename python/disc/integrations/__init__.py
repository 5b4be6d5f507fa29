"""Adapters that plug DISC into other tools' harnesses (GraphNet)."""
