"""Reporters: pure functions from diagnostics to text."""
