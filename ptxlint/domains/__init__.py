"""Value lattices of the abstract interpreter: strided intervals, power-of-two
congruences (alignment) and thread-affine forms, plus the three-valued ``Tri``.

Pure Python over mathematical integers; nothing here knows about the IR.
"""

from .affine import HARDWARE, INDICES, Affine, ThreadBounds, apply_uniform_op
from .align import Congruence
from .lattice import Lattice, Tri
from .strided import StridedInterval, view_range, wrap_int

__all__ = [
    "Affine", "Congruence", "HARDWARE", "INDICES", "Lattice", "StridedInterval",
    "ThreadBounds", "Tri", "apply_uniform_op", "view_range", "wrap_int",
]
