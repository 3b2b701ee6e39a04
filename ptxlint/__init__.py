"""ptxlint: static analysis of NVIDIA PTX by abstract interpretation."""

__version__ = "0.1.0"
