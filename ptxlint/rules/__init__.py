"""Rules: each reads the IR (or, later, analysis facts) and yields diagnostics."""
