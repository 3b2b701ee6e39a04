"""CUDA C -> PTX at run time: NVRTC through cuda-python, `nvcc -ptx` when NVRTC is not
installed, PTX cached on disk.

    build = compile_ptx("mc.cu", "sm_90", {"RNG": 1, "BLOCK": 256})
    build.ptx            # the module text, `.target sm_90`
    build.cached         # True when it came from the cache

Options: `--gpu-architecture=compute_XX` (PTX for that target), `-lineinfo` (PTX `.loc`
lines, so ptxlint's findings point back into the .cu), `--std=c++17`, the source's own
directory and `kernels/` as include paths, and every compile-time constant as `-DNAME=V`.

NVRTC programs are named by the source's real path, so the PTX's `.file` lines (and
ptxlint's findings, which quote them) point at the file in `kernels/`, not at a name
NVRTC resolves against the current directory.

The cache key hashes the source's path and text, every header of `kernels/`, the options
and the compiler's version, so a new NVRTC or an edited header never reuses stale PTX.
The directory is `$PRICING_CACHE_DIR`, else the user's cache directory:
`$XDG_CACHE_HOME/ptxlint-pricing` or `~/.cache/ptxlint-pricing` (`%LOCALAPPDATA%` on
Windows); never the current checkout.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

KERNELS = Path(__file__).resolve().parent / "kernels"
MIN_ARCH = 75  # CUDA 13 dropped Maxwell, Pascal and Volta
BASE_OPTIONS = ("-lineinfo", "--std=c++17")


class BuildError(RuntimeError):
    """The kernel could not be compiled (bad arch, no compiler, a compile error); the
    message is meant for the user as it stands."""


@dataclass(frozen=True)
class Build:
    source: str  # relative to kernels/, e.g. "mc.cu" or "flawed/aos_state.cu"
    arch: str  # "sm_90"
    defines: dict[str, int | str] = field(default_factory=dict)
    ptx: str = ""
    compiler: str = ""  # "nvrtc 13.0" or "nvcc 13.0"
    options: tuple[str, ...] = ()
    cached: bool = False


def parse_arch(arch: str | int) -> int:
    """`sm_90`, `compute_90`, `90` or `9.0` -> 90; architectures CUDA 13 cannot target
    raise BuildError saying so."""
    text = str(arch).strip().lower()
    m = re.fullmatch(r"(?:sm_|compute_)?(\d+)[af]?|(\d+)\.(\d)", text)
    if not m:
        raise BuildError(f"unknown GPU architecture '{arch}' (expected e.g. sm_90)")
    cc = int(m.group(1)) if m.group(1) else int(m.group(2)) * 10 + int(m.group(3))
    if cc < MIN_ARCH:
        raise BuildError(f"sm_{cc} is not supported: CUDA 13 compiles only for sm_75 "
                         "(Turing) and newer GPUs; use a CUDA 12 toolkit for older ones")
    return cc


def compile_ptx(source: str, arch: str | int = "sm_80",
                defines: Mapping[str, int | str] | None = None, *,
                compiler: str = "auto", cache_dir: Path | None = None,
                use_cache: bool = True) -> Build:
    """PTX of `kernels/<source>` for `arch` with `defines`. `compiler`: "auto" (NVRTC,
    else nvcc), "nvrtc" or "nvcc"."""
    cc = parse_arch(arch)
    path = KERNELS / source
    if not path.is_file():
        raise BuildError(f"no kernel source {source} in {KERNELS}")
    defines = dict(defines or {})
    backend = _backend(compiler)
    options = (f"--gpu-architecture=compute_{cc}", *BASE_OPTIONS,
               *(f"-D{k}={v}" for k, v in sorted(defines.items())))
    key = _cache_key(path, options, backend.version)
    cache = (cache_dir or default_cache_dir()) / f"{path.stem}.sm_{cc}.{key[:16]}.ptx"
    if use_cache and cache.is_file():
        return Build(source, f"sm_{cc}", defines, cache.read_text(), backend.version,
                     options, True)
    ptx = backend.compile(path, options)
    if use_cache:
        _store(cache, ptx)
    return Build(source, f"sm_{cc}", defines, ptx, backend.version, options, False)


def default_cache_dir() -> Path:
    """`$PRICING_CACHE_DIR`, else `ptxlint-pricing` in the user's cache directory."""
    env = os.environ.get("PRICING_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or (
        os.environ.get("LOCALAPPDATA") if os.name == "nt" else None)
    return (Path(base) if base else Path.home() / ".cache") / "ptxlint-pricing"


def supported_archs() -> tuple[int, ...]:
    """The compute capabilities the compiler can target (NVRTC's list, or nvcc's
    `--list-gpu-arch`); () without a compiler."""
    try:
        return _backend("auto").archs
    except BuildError:
        return ()


def target_arch(cc: int) -> int:
    """The architecture to build for a device of compute capability `cc`: `cc` itself,
    or for a GPU newer than the compiler, the newest one the compiler supports below it
    (PTX for compute_XX is JIT-compiled by the driver for any newer device)."""
    below = [a for a in supported_archs() if a <= cc]
    return cc if cc in below or not below else max(below)


def available() -> str | None:
    """The compiler `compile_ptx` would use ("nvrtc 13.0", "nvcc 13.0"), or None."""
    try:
        return _backend("auto").version
    except BuildError:
        return None


# ---- backends --------------------------------------------------------------------------------
class _Nvrtc:
    def __init__(self) -> None:
        self.nvrtc = _load_nvrtc()
        err, major, minor = self.nvrtc.nvrtcVersion()
        self.version = f"nvrtc {major}.{minor}"
        err, archs = self.nvrtc.nvrtcGetSupportedArchs()
        self.archs = tuple(sorted(int(a) for a in archs)) \
            if err == self.nvrtc.nvrtcResult.NVRTC_SUCCESS else ()

    def compile(self, path: Path, options: tuple[str, ...]) -> str:
        nv = self.nvrtc
        opts = [o.encode() for o in (*options, *_include_options(path))]
        # the real path: NVRTC writes the program name into the PTX's `.file` lines
        err, prog = nv.nvrtcCreateProgram(path.read_bytes(), str(path).encode(), 0, [], [])
        _check_nvrtc(nv, err, "nvrtcCreateProgram")
        try:
            (err,) = nv.nvrtcCompileProgram(prog, len(opts), opts)
            if err != nv.nvrtcResult.NVRTC_SUCCESS:
                raise BuildError(f"NVRTC could not compile {_name(path)}:\n{_log(nv, prog)}")
            err, size = nv.nvrtcGetPTXSize(prog)
            _check_nvrtc(nv, err, "nvrtcGetPTXSize")
            buf = b" " * size
            (err,) = nv.nvrtcGetPTX(prog, buf)
            _check_nvrtc(nv, err, "nvrtcGetPTX")
        finally:
            nv.nvrtcDestroyProgram(prog)
        return buf.rstrip(b"\0").decode()


class _Nvcc:
    def __init__(self) -> None:
        exe = shutil.which("nvcc")
        if exe is None:
            raise BuildError("nvcc is not on PATH")
        self.exe = exe
        out = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
        m = re.search(r"release (\d+\.\d+)", out)
        self.version = f"nvcc {m.group(1) if m else 'unknown'}"
        listed = subprocess.run([exe, "--list-gpu-arch"], capture_output=True,
                                text=True).stdout
        self.archs = tuple(sorted({int(a) for a in re.findall(r"compute_(\d+)", listed)}))

    def compile(self, path: Path, options: tuple[str, ...]) -> str:
        arch = options[0].split("=", 1)[1]
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out.ptx"
            cmd = [self.exe, "-ptx", f"-arch={arch}", *options[1:], *_include_options(path),
                   "-o", str(out), str(path)]
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                raise BuildError(f"nvcc could not compile {_name(path)}:\n{done.stderr}")
            return out.read_text()


@functools.cache
def _backend(choice: str):
    if choice not in ("auto", "nvrtc", "nvcc"):
        raise BuildError(f"unknown compiler '{choice}' (auto, nvrtc, nvcc)")
    errors = []
    for name, cls in (("nvrtc", _Nvrtc), ("nvcc", _Nvcc)):
        if choice in ("auto", name):
            try:
                return cls()
            except BuildError as exc:
                errors.append(str(exc))
    raise BuildError("no CUDA compiler: " + "; ".join(errors) + " (install NVRTC with "
                     "pip install 'ptxlint[cuda]', or put CUDA 13's nvcc on PATH)")


def _load_nvrtc():
    """cuda-python's NVRTC module with its library loaded. cuda-bindings finds the
    `nvidia-cuda-nvrtc` wheel itself; when it cannot (an unusual layout), the wheel's
    libnvrtc is loaded by path first."""
    try:
        from cuda.bindings import nvrtc  # noqa: PLC0415
    except ImportError as exc:
        raise BuildError(f"cuda-python is not installed ({exc})") from None
    try:
        nvrtc.nvrtcVersion()
        return nvrtc
    except RuntimeError:
        pass
    lib = _wheel_nvrtc()
    if lib is None:
        raise BuildError("cuda-python cannot load libnvrtc, and no nvidia-cuda-nvrtc wheel "
                         "was found")
    import ctypes  # noqa: PLC0415

    ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
    try:
        nvrtc.nvrtcVersion()
    except RuntimeError as exc:
        raise BuildError(f"cuda-python cannot load libnvrtc from {lib}: {exc}") from None
    return nvrtc


def _wheel_nvrtc() -> Path | None:
    import importlib.util  # noqa: PLC0415

    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        found = sorted(Path(root).glob("cu*/lib/libnvrtc.so*")) + \
            sorted(Path(root).glob("cuda_nvrtc/lib/libnvrtc.so*"))
        if found:
            return found[0]
    return None


def _check_nvrtc(nv, err, what: str) -> None:
    if err != nv.nvrtcResult.NVRTC_SUCCESS:
        raise BuildError(f"{what} failed: {err}")


def _log(nv, prog) -> str:
    err, size = nv.nvrtcGetProgramLogSize(prog)
    buf = b" " * size
    nv.nvrtcGetProgramLog(prog, buf)
    return buf.rstrip(b"\0").decode(errors="replace")


def _include_options(path: Path) -> list[str]:
    dirs = dict.fromkeys([path.parent, KERNELS])  # own directory first, then kernels/
    return [f"--include-path={d}" for d in dirs]


def _name(path: Path) -> str:
    return path.relative_to(KERNELS).as_posix()


# ---- cache -----------------------------------------------------------------------------------
def _cache_key(path: Path, options: tuple[str, ...], version: str) -> str:
    h = hashlib.sha256()
    # the real path too: it is written into the PTX (`.file`), and a moved checkout
    # must not get PTX naming the old place
    h.update(str(path).encode() + b"\0" + path.read_bytes() + b"\0")
    for header in sorted(KERNELS.rglob("*.cuh")):
        h.update(_name(header).encode() + b"\0" + header.read_bytes() + b"\0")
    h.update("\0".join(options).encode() + b"\0" + version.encode())
    return h.hexdigest()


def _store(target: Path, ptx: str) -> None:
    """Write through a temporary file and a rename: parallel builds never see half a
    file. An unwritable cache is not an error."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        ignore = target.parent / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n")
        fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(ptx)
        os.replace(tmp, target)
    except OSError:
        pass


__all__ = ["Build", "BuildError", "compile_ptx", "parse_arch", "available",
           "default_cache_dir", "supported_archs", "target_arch", "KERNELS", "MIN_ARCH"]
