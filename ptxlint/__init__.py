"""ptxlint: static analysis of NVIDIA PTX by abstract interpretation.

The library API (docs/api.md), imported on first use so `import ptxlint` stays cheap:
`check(ptx_text, kernel=None, launch=None, arch=None, **options)`,
`check_before_launch(ptx_text, kernel, block, grid, ...)` and `PreLaunchError`.
"""

__version__ = "0.1.0"

_LAZY = {
    "check": ("hook", "check"),
    "check_before_launch": ("hook", "check_before_launch"),
    "PreLaunchError": ("hook", "PreLaunchError"),
    "Diagnostic": ("diagnostics", "Diagnostic"),
    "Severity": ("diagnostics", "Severity"),
    "Certainty": ("diagnostics", "Certainty"),
    "LaunchConfig": ("launch", "LaunchConfig"),
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'ptxlint' has no attribute {name!r}")
    import importlib

    module, attr = _LAZY[name]
    value = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
