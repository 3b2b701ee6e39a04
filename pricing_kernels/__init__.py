"""pricing_kernels: GPU option-pricing kernels built with NVRTC, checked by ptxlint's
pre-launch hook before every launch, and run on a GPU, on ptxlint's CPU emulator, or
re-enacted in numpy on the CPU (docs/pricing.md).

    from pricing_kernels import Spec, price
    result = price(Spec("asian-call", steps=64, paths=100_000), device="cpu",
                   reference=True)
    result.price, result.stderr, result.reference, result.reference_error
"""
from .pricer import Result, price
from .spec import InputError, Spec

__all__ = ["Spec", "InputError", "Result", "price"]
