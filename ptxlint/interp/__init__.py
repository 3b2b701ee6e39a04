"""The abstract interpreter: transfer functions, fixpoint, refinement, divergence."""
