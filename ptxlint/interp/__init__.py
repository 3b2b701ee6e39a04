"""The abstract interpreter: the fixpoint (worklist, refinement, divergence, loops,
relations) and its transfer functions (`transfer/`); rules read its result, `Facts`
(`facts.py`), and nothing else of it. `analysis.analyze` is the door in."""
