"""The kernels and their launches: which source, defines, grid, block and arguments a
priced product needs. A `Launch` is the whole truth about one kernel launch; the GPU and
emulator back ends run it and the pre-launch hook lints it with exactly these values.

Arguments are `Buffer`s (a numpy array: its bytes are the initial contents and its size
is the extent the hook is told) and `Scalar`s (a value and its C type), in the kernel's
parameter order.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import rng
from .reference import crr_parameters
from .spec import Spec

BLOCK = 256  # threads per block of the Monte Carlo and generator kernels
CACHE_SIZE = 256  # lattice tile = threads per lattice block
MAX_BLOCKS = 1024  # Monte Carlo grids stop here and stride over the rest
RNG_IDS = {"philox": 1, "lcg": 2, "mt": 3}
NORMALS_IDS = {"thread": 1, "paired": 2}


@dataclass(frozen=True)
class Buffer:
    name: str
    data: np.ndarray
    output: bool = False


@dataclass(frozen=True)
class Scalar:
    name: str
    value: int | float
    dtype: type = np.uint32  # np.uint32, np.int32 or np.float32

    def array(self) -> np.ndarray:
        return np.array([self.value], dtype=self.dtype)


@dataclass
class Launch:
    source: str  # relative to kernels/
    defines: dict[str, int]
    kernel: str
    grid: int
    block: int
    args: list[Buffer | Scalar] = field(default_factory=list)
    dynamic_smem: int = 0

    def lint_params(self) -> dict[int, int | float]:
        """Scalar values by parameter index, as the pre-launch hook takes them."""
        return {i: (float(a.value) if a.dtype == np.float32 else int(a.value))
                for i, a in enumerate(self.args) if isinstance(a, Scalar)}

    def lint_extents(self) -> dict[int, int]:
        return {i: a.data.nbytes for i, a in enumerate(self.args) if isinstance(a, Buffer)}

    def outputs(self) -> list[str]:
        return [a.name for a in self.args if isinstance(a, Buffer) and a.output]


# ---- Monte Carlo -----------------------------------------------------------------------------
def mc_defines(spec: Spec) -> dict[str, int]:
    return {"BLOCK": BLOCK, "RNG": RNG_IDS[spec.rng], "NORMALS": NORMALS_IDS[spec.normals],
            "ANTITHETIC": int(spec.antithetic), "NASSETS": spec.assets}


def mc_items(spec: Spec, samples: int) -> int:
    """Thread items: a European item is four samples (one per normal of a draw)."""
    return -(-samples // 4) if spec.product.startswith("european") else samples


def mc_grid(items: int) -> int:
    return max(1, min(MAX_BLOCKS, -(-items // BLOCK)))


def draws_per_item(spec: Spec) -> int:
    """`draw4` calls per thread item (four words each)."""
    if spec.product == "asian-call":
        return -(-spec.steps_or_default() // 4)
    if spec.product == "everest":
        return -(-spec.assets // 4)
    return 1


def gen_state(spec: Spec, threads: int) -> np.ndarray:
    """The host-seeded generator state the kernels read (gen.cuh): nothing for Philox
    (a placeholder word), one LCG state per thread, 624 MT words per warp. MT warps are
    seeded with Philox words of (warp, 1, 0, 0), so neighbouring warps do not get
    neighbouring seeds."""
    if spec.rng == "lcg":
        return rng.lcg_seeds(spec.seed, threads)
    if spec.rng == "mt":
        warps = threads // 32
        seeds = rng.philox4x32_10((np.arange(warps, dtype=np.uint64), 1, 0, 0),
                                  rng.seed_key(spec.seed))[0]
        return rng.mt_seed(seeds).reshape(-1)
    return np.zeros(1, dtype=np.uint32)


def mc_scalars(spec: Spec) -> tuple[float, float]:
    """(mu, sig) of one log-normal step: the whole maturity, or one of `steps` steps for
    the Asian."""
    n = spec.steps_or_default() if spec.product == "asian-call" else 1
    dt = spec.maturity / n
    return (spec.rate - 0.5 * spec.vol * spec.vol) * dt, spec.vol * math.sqrt(dt)


def mc_launch(spec: Spec, samples: int) -> Launch:
    items = mc_items(spec, samples)
    grid = mc_grid(items)
    lo, hi = rng.seed_key(spec.seed)
    mu, sig = mc_scalars(spec)
    head: list[Buffer | Scalar] = [
        Buffer("partial", np.zeros(2 * grid, dtype=np.float64), output=True),
        Buffer("gen_state", gen_state(spec, grid * BLOCK))]
    seeds = [Scalar("n_samples", samples), Scalar("seed_lo", lo), Scalar("seed_hi", hi)]
    if spec.product == "everest":
        chol = np.linalg.cholesky(spec.corr_matrix).astype(np.float32)
        args = head + [Buffer("chol", np.ascontiguousarray(chol).reshape(-1))] + seeds + [
            Scalar("mu", mu, np.float32), Scalar("sig", sig, np.float32)]
    else:
        args = head + seeds + [Scalar("spot", spec.spot, np.float32),
                               Scalar("strike", spec.strike, np.float32),
                               Scalar("mu", mu, np.float32), Scalar("sig", sig, np.float32)]
        args.append(Scalar("steps", spec.steps_or_default()) if spec.product == "asian-call"
                    else Scalar("is_put", int(spec.put), np.int32))
    kernel = "european" if spec.product.startswith("european") else spec.product.split("-")[0]
    return Launch("mc.cu", mc_defines(spec), kernel, grid, BLOCK, args)


def reduce_launch(partial: np.ndarray) -> Launch:
    """Pass two: one block folds the per-block (sum, sum of squares) pairs."""
    pairs = partial.size // 2
    return Launch("reduce.cu", {"BLOCK": BLOCK}, "reduce_final", 1, BLOCK, [
        Buffer("partial", np.ascontiguousarray(partial, dtype=np.float64)),
        Buffer("result", np.zeros(2, dtype=np.float64), output=True),
        Scalar("count", pairs)])


# ---- lattice ---------------------------------------------------------------------------------
def binomial_launch(spec: Spec, spots: np.ndarray | None = None,
                    strikes: np.ndarray | None = None) -> Launch:
    """One block per option; by default the one option of `spec`."""
    spots = np.atleast_1d(np.asarray(spec.spot if spots is None else spots, dtype=np.float32))
    strikes = np.atleast_1d(np.asarray(spec.strike if strikes is None else strikes,
                                       dtype=np.float32))
    steps = spec.steps_or_default()
    log_u, pu, pd = crr_parameters(spec.rate, spec.vol, spec.maturity, steps)
    n = spots.size
    return Launch("binomial.cu", {"CACHE_SIZE": CACHE_SIZE}, "binomial", n, CACHE_SIZE, [
        Buffer("price", np.zeros(n, dtype=np.float32), output=True),
        Buffer("levels", np.zeros(n * (steps + 1), dtype=np.float32)),
        Buffer("spot", spots), Buffer("strike", strikes),
        Scalar("steps", steps), Scalar("log_u", log_u, np.float32),
        Scalar("pu", pu, np.float32), Scalar("pd", pd, np.float32),
        Scalar("is_put", int(spec.put), np.int32), Scalar("american", int(spec.american),
                                                          np.int32)])


# ---- generator kernels (rng.cu) --------------------------------------------------------------
def philox_raw_launch(n: int, counter=(0, 0, 0, 0), key=(0, 0)) -> Launch:
    return Launch("rng.cu", {"BLOCK": BLOCK}, "philox_raw", -(-n // BLOCK), BLOCK, [
        Buffer("out", np.zeros(4 * n, dtype=np.uint32), output=True), Scalar("n", n),
        *(Scalar(f"c{i}", c) for i, c in enumerate(counter)),
        *(Scalar(f"k{i}", k) for i, k in enumerate(key))])


def mt_raw_launch(seeds, twists: int) -> Launch:
    """One warp per seed; a block holds BLOCK / 32 warps, so pad to whole blocks."""
    seeds = list(seeds)
    per_block = BLOCK // 32
    warps = -(-len(seeds) // per_block) * per_block
    seeds += [0] * (warps - len(seeds))
    return Launch("rng.cu", {"BLOCK": BLOCK}, "mt_raw", warps // per_block, BLOCK, [
        Buffer("out", np.zeros(warps * twists * rng.MT_N, dtype=np.uint32), output=True),
        Buffer("state", rng.mt_seed(seeds).reshape(-1)), Scalar("twists", twists)])


def lcg_raw_launch(seed: int, blocks: int, draws: int) -> Launch:
    threads = blocks * BLOCK
    return Launch("rng.cu", {"BLOCK": BLOCK}, "lcg_raw", blocks, BLOCK, [
        Buffer("out", np.zeros(draws * threads, dtype=np.uint32), output=True),
        Buffer("state", rng.lcg_seeds(seed, threads), output=True), Scalar("draws", draws)])


def normals_launch(n: int, seed: int, normals: str = "thread") -> Launch:
    lo, hi = rng.seed_key(seed)
    return Launch("rng.cu", {"BLOCK": BLOCK, "NORMALS": NORMALS_IDS[normals]}, "normals",
                  -(-n // BLOCK), BLOCK, [
                      Buffer("out", np.zeros(4 * n, dtype=np.float32), output=True),
                      Scalar("n", n), Scalar("k0", lo), Scalar("k1", hi)])


# ---- every production kernel, in representative launches (tests, benchmark) ----------------------
def production_launches(paths: int = 100_000) -> list[tuple[str, Launch]]:
    """(name, launch) for each production kernel and compile-time variant: the Monte
    Carlo products with every generator and Box-Muller form (and antithetic with Philox),
    both reduction passes, the lattice (a level wider than the tile and one narrower,
    European and American), and the generator kernels."""
    from .spec import NORMALS, RNGS  # noqa: PLC0415

    out = []
    for product in ("european-call", "asian-call", "everest"):
        for gen in RNGS:
            for normals in NORMALS:
                spec = Spec(product, paths=paths, rng=gen, normals=normals)
                out.append((f"{product}/{gen}/{normals}", mc_launch(spec, paths)))
        spec = Spec(product, paths=paths, antithetic=True)
        out.append((f"{product}/philox/thread/antithetic", mc_launch(spec, paths)))
    partial = np.zeros(2 * mc_grid(paths), dtype=np.float64)
    out.append(("reduce_final", reduce_launch(partial)))
    for product, steps in (("binomial-call", 2000), ("american-put", 100)):
        spec = Spec(product, steps=steps)
        out.append((f"{product}/{steps}", binomial_launch(spec, np.full(8, 100.0),
                                                          np.linspace(80, 120, 8))))
    out.append(("philox_raw", philox_raw_launch(1000)))
    out.append(("lcg_raw", lcg_raw_launch(7, 4, 16)))
    out.append(("mt_raw", mt_raw_launch(range(16), 3)))
    for normals in NORMALS:
        out.append((f"normals/{normals}", normals_launch(1000, 7, normals)))
    return out


__all__ = ["Buffer", "Scalar", "Launch", "mc_launch", "reduce_launch", "binomial_launch",
           "philox_raw_launch", "mt_raw_launch", "lcg_raw_launch", "normals_launch",
           "production_launches",
           "mc_defines", "mc_items", "mc_grid", "draws_per_item", "gen_state", "mc_scalars",
           "BLOCK", "CACHE_SIZE", "MAX_BLOCKS"]
