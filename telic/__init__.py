"""Telic: a model-free workflow controller and evidence ledger for AI coding agents."""
