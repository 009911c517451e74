"""Telic protocol 1.0: strict wire schemas, canonical JSON and digests (facade filled in below)."""
