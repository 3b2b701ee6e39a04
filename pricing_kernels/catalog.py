"""The kernels and their launches: which source, defines, grid, block and arguments a
priced product needs. A `Launch` is the whole truth about one kernel launch; the GPU and
emulator back ends run it and the pre-launch hook lints it with exactly these values.

Arguments are `Buffer`s (a numpy array: its bytes are the initial contents and its size
is the extent the hook is told) and `Scalar`s (a value and its C type), in the kernel's
parameter order. An argument's name is its role (`partial`, `levels`), which the pricer
shows in findings instead of the PTX parameter name (`european_param_0`).

A `Scalar` with `control=False` cannot change a finding: the kernel uses it as data only
(market data, the Philox key and counter offset), never in an address, a loop bound or a
branch. The pre-launch hook is given only the other scalars, so its cache (keyed on
what it is given) serves a new spot, strike, rate, volatility or seed without analysing
the kernel again. Which scalars are data is read off the kernels:

- `european`, `asian`, `everest`: `first_sample`, `seed_lo`, `seed_hi` only feed the
  Philox counter and key (LCG and MT states are seeded on the host); `spot`, `strike`,
  `mu`, `sig` only the arithmetic (as do the buffers `strikes`, `coef` and `asset`).
  `n_samples` bounds the sample loop and `steps` the Asian's step loop (control);
  `is_put` picks the payoff (kept: two values at most).
- `binomial`: `u`, `u_pass`, `u_delta`, `pu`, `pd` are data; `steps` sizes the level and
  bounds every loop, `american` guards the exercise branch, `is_put` picks the payoff
  (control).
- `reduce_final` `count`, `philox_raw`/`normals`/`box_muller` `n`, `lcg_raw` `draws`,
  `mt_raw` `twists`: bounds (control); the Philox counters and keys are data.
- `sobol_raw` `n`, `draws`, `sobol_bridge_raw` `n`, `steps`, `mt607_raw` `draws`: bounds
  (control); `rep` (the replication: a Philox counter word) and the keys are data.
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
CACHE_DELTA = 32  # lattice levels stepped inside the tile per pass
MAX_BLOCKS = 1024  # Monte Carlo grids stop here and stride over the rest
MAX_STRIKES = 8  # strikes priced together by one Monte Carlo launch (NSTRIKES)
NCOEF = 12  # floats in a Monte Carlo launch's `coef` buffer (mc.cu)
GREEK_NAMES = ("delta", "gamma", "vega", "theta", "rho")  # the kernels' order after the price
RNG_IDS = {"philox": 1, "lcg": 2, "mt": 3, "sobol": 4, "mt607": 5}
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
    dtype: type = np.uint32  # np.uint32, np.uint64, np.int32, np.float32 or np.float64
    control: bool = True  # False: data only, cannot change a finding (module docstring)

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
        """The values of the scalars that can change a finding (`control`), by parameter
        index, as the pre-launch hook takes them."""
        return {i: (float(a.value) if np.dtype(a.dtype).kind == "f" else int(a.value))
                for i, a in enumerate(self.args) if isinstance(a, Scalar) and a.control}

    def lint_extents(self) -> dict[int, int]:
        return {i: a.data.nbytes for i, a in enumerate(self.args) if isinstance(a, Buffer)}

    def outputs(self) -> list[str]:
        return [a.name for a in self.args if isinstance(a, Buffer) and a.output]

    def roles(self) -> dict[int, str]:
        """Each argument's name (its role) by parameter index."""
        return {i: a.name for i, a in enumerate(self.args)}


# ---- Monte Carlo -----------------------------------------------------------------------------
def mc_defines(spec: Spec, strikes: int = 1) -> dict[str, int]:
    """NASSETS only for the Everest note: the other products ignore `--assets`. GREEKS
    and NSTRIKES only when set (a plain launch keeps its defines)."""
    defines = {"BLOCK": BLOCK, "RNG": RNG_IDS[spec.rng], "NORMALS": NORMALS_IDS[spec.normals],
               "ANTITHETIC": int(spec.antithetic)}
    if spec.product == "everest":
        defines["NASSETS"] = spec.assets
    if spec.control_variate:
        defines["CONTROL"] = 1  # pairs: payoff, control, their product (variance.py)
    if spec.rng == "sobol" and spec.product == "asian-call":
        defines["SOBOL_STEPS"] = spec.steps_or_default()  # the bridge's path (local memory)
        defines["SOBOL_BRIDGE_STEPS"] = spec.steps_or_default()  # its schedule in gen_state
    if spec.greeks:
        defines["GREEKS"] = 1
    if strikes > 1:
        defines["NSTRIKES"] = strikes
    return defines


def mc_values(spec: Spec) -> int:
    """Values per sample and strike: the payoff, and with Greeks the five estimators."""
    if spec.control_variate:
        return 3  # the payoff, the control and their product (mc.cu, CONTROL)
    return 6 if spec.greeks else 1


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
    if spec.rng == "mt607":
        return rng.mt607_state(spec.seed, threads)
    if spec.rng == "sobol":
        return sobol_state(4 * draws_per_item(spec), spec.steps_or_default()
                           if spec.product == "asian-call" else 0)
    return np.zeros(1, dtype=np.uint32)


def sobol_state(dims: int, steps: int = 0) -> np.ndarray:
    """RNG_SOBOL's gen_state (gen.cuh): the offset of the direction numbers, the Brownian
    bridge schedule of `steps` steps (m, l, r, then a, b, c as float bits: six arrays of
    `steps` words) and the direction numbers of `dims` dimensions (32 words each)."""
    from .params import sobol_directions  # noqa: PLC0415

    parts = [np.asarray(x).view(np.uint32) for x in rng.bridge_schedule(steps)] if steps \
        else []
    schedule = np.concatenate(parts) if parts else np.zeros(0, np.uint32)
    head = np.array([1 + schedule.size], dtype=np.uint32)
    return np.concatenate([head, schedule, sobol_directions()[:dims].reshape(-1)])


def mc_scalars(spec: Spec) -> tuple[float, float]:
    """(mu, sig) of one log-normal step: the whole maturity, or one of `steps` steps for
    the Asian; mu = (r - q - vol^2 / 2) dt."""
    n = spec.steps_or_default() if spec.product == "asian-call" else 1
    dt = spec.maturity / n
    return (spec.rate - spec.div - 0.5 * spec.vol * spec.vol) * dt, spec.vol * math.sqrt(dt)


def greek_coef(spec: Spec) -> np.ndarray:
    """The `coef` buffer of a European or Asian launch: the constants of the per-sample
    Greek estimators (mc.cu), float32, NCOEF entries (zeros without Greeks).

    European (T maturity, sig = vol sqrt(T)): 1/S0, 1/(S0^2 sig), 1/S0^2, sqrt(T), vol T,
    T, r, r - q - vol^2/2, vol / (2 sqrt(T)).
    Asian (n steps of dt = T/n, sig = vol sqrt(dt)): 1/(S0 sig), 1/S0, S0/(n vol),
    S0 (r - q + vol^2/2)/(n vol), S0/n, T, r, S0/(2 n T), r - q - vol^2/2, dt."""
    c = np.zeros(NCOEF)
    if spec.greeks:
        s0, t, r, q, v = spec.spot, spec.maturity, spec.rate, spec.div, spec.vol
        m = r - q - 0.5 * v * v
        if spec.product.startswith("european"):
            sig = v * math.sqrt(t)
            c[:9] = (1 / s0, 1 / (s0 * s0 * sig), 1 / (s0 * s0), math.sqrt(t), v * t, t, r, m,
                     v / (2 * math.sqrt(t)))
        else:
            n = spec.steps_or_default()
            dt = t / n
            c[:10] = (1 / (s0 * v * math.sqrt(dt)), 1 / s0, s0 / (n * v),
                      s0 * (r - q + 0.5 * v * v) / (n * v), s0 / n, t, r, s0 / (2 * n * t), m,
                      dt)
    return c.astype(np.float32)


def everest_asset(spec: Spec) -> np.ndarray:
    """The `asset` buffer of an Everest launch (mc.cu): per asset mu_i, sig_i, vol_i T,
    r - q_i - vol_i^2/2, vol_i / (2 sqrt(T)); then sqrt(T), T, r. Float32."""
    t, r = spec.maturity, spec.rate
    vol, div = spec.asset_vols(), spec.asset_divs()
    m = r - div - 0.5 * vol * vol
    rows = [m * t, vol * math.sqrt(t), vol * t, m, vol / (2 * math.sqrt(t))]
    return np.concatenate(rows + [np.array([math.sqrt(t), t, r])]).astype(np.float32)


def mc_launch(spec: Spec, samples: int, first: int = 0, strikes=None) -> Launch:
    """The Monte Carlo launch of the samples [first, first + samples) (`first` a
    multiple of 4 for a European: an item is four samples). Only Philox gives a range
    starting past 0 the numbers those samples get in one launch: LCG and MT streams
    belong to the threads of a launch.

    `strikes` (European and Asian, at most MAX_STRIKES; default: the spec's strike)
    are priced on the same paths. With Greeks or several strikes the launch takes the
    `strikes` and `coef` buffers, and `partial` holds mc_values(spec) x strikes pairs
    per block, laid out [pair][block]."""
    if first % 4 and spec.product.startswith("european"):
        raise ValueError(f"a European launch starts at a multiple of 4, not {first}")
    strikes = np.atleast_1d(np.asarray(spec.strike if strikes is None else strikes,
                                       dtype=np.float32))
    if not 1 <= strikes.size <= MAX_STRIKES or (spec.product == "everest"
                                                 and strikes.size > 1):
        raise ValueError(f"a launch prices 1 to {MAX_STRIKES} strikes (everest: 1), not "
                         f"{strikes.size}")
    items = mc_items(spec, samples)
    grid = mc_grid(items)
    lo, hi = rng.seed_key(spec.seed)
    mu, sig = mc_scalars(spec)
    pairs = mc_values(spec) * strikes.size
    head: list[Buffer | Scalar] = [
        Buffer("partial", np.zeros(2 * grid * pairs, dtype=np.float64), output=True),
        Buffer("gen_state", gen_state(spec, grid * BLOCK))]
    counts = [Scalar("first_sample", first, np.uint64, control=False),
              Scalar("n_samples", samples, np.uint64),
              Scalar("seed_lo", lo, control=False), Scalar("seed_hi", hi, control=False)]
    mu_sig = [Scalar("mu", mu, np.float32, control=False),
              Scalar("sig", sig, np.float32, control=False)]
    if spec.product == "everest":
        chol = np.linalg.cholesky(spec.corr_matrix).astype(np.float32)
        args = head + [Buffer("chol", np.ascontiguousarray(chol).reshape(-1))] + counts \
            + [Buffer("asset", everest_asset(spec))]
    else:
        args = head + counts + [Scalar("spot", spec.spot, np.float32, control=False),
                                Scalar("strike", float(strikes[0]), np.float32,
                                       control=False),
                                *mu_sig]
        args.append(Scalar("steps", spec.steps_or_default()) if spec.product == "asian-call"
                    else Scalar("is_put", int(spec.put), np.int32))
        if spec.greeks or strikes.size > 1:
            args += [Buffer("strikes", strikes), Buffer("coef", greek_coef(spec))]
    kernel = "european" if spec.product.startswith("european") else spec.product.split("-")[0]
    return Launch("mc.cu", mc_defines(spec, strikes.size), kernel, grid, BLOCK, args)


def reduce_launch(partial: np.ndarray, sums: int = 1) -> Launch:
    """Pass two: one block folds the per-block (sum, sum of squares) pairs; with `sums`
    pairs per block (laid out [pair][block]) each in turn, into 2 x sums doubles."""
    pairs = partial.size // 2 // sums
    defines = {"BLOCK": BLOCK} if sums == 1 else {"BLOCK": BLOCK, "NSUMS": sums}
    return Launch("reduce.cu", defines, "reduce_final", 1, BLOCK, [
        Buffer("partial", np.ascontiguousarray(partial, dtype=np.float64)),
        Buffer("result", np.zeros(2 * sums, dtype=np.float64), output=True),
        Scalar("count", pairs)])


# ---- lattice ---------------------------------------------------------------------------------
def binomial_launch(spec: Spec, spots: np.ndarray | None = None,
                    strikes: np.ndarray | None = None) -> Launch:
    """One block per option; by default the one option of `spec`. Float64 throughout,
    and node prices from powers of u computed here (binomial.cu says why): the last
    level's payoffs in `levels`, u^(2t - steps) for t < CACHE_SIZE in `powers`, and the
    factors u, u^(2 TILE_OUT), u^CACHE_DELTA."""
    spots = np.atleast_1d(np.asarray(spec.spot if spots is None else spots, dtype=np.float64))
    strikes = np.atleast_1d(np.asarray(spec.strike if strikes is None else strikes,
                                       dtype=np.float64))
    steps = spec.steps_or_default()
    log_u, pu, pd = crr_parameters(spec.rate, spec.vol, spec.maturity, steps, spec.div)
    n = spots.size
    last = spots[:, None] * np.exp(log_u * (2.0 * np.arange(steps + 1) - steps))[None, :]
    gain = strikes[:, None] - last if spec.put else last - strikes[:, None]
    powers = np.exp(log_u * (2.0 * np.arange(CACHE_SIZE) - steps))
    data = {"control": False, "dtype": np.float64}
    return Launch("binomial.cu", {"CACHE_SIZE": CACHE_SIZE, "CACHE_DELTA": CACHE_DELTA},
                  "binomial", n, CACHE_SIZE, [
                      Buffer("price", np.zeros(n, dtype=np.float64), output=True),
                      Buffer("levels", np.maximum(gain, 0.0).reshape(-1)),
                      Buffer("spot", spots), Buffer("strike", strikes),
                      Buffer("powers", powers),
                      Scalar("steps", steps),
                      Scalar("u", math.exp(log_u), **data),
                      Scalar("u_pass", math.exp(2 * (CACHE_SIZE - CACHE_DELTA) * log_u),
                             **data),
                      Scalar("u_delta", math.exp(CACHE_DELTA * log_u), **data),
                      Scalar("pu", pu, **data), Scalar("pd", pd, **data),
                      Scalar("is_put", int(spec.put), np.int32),
                      Scalar("american", int(spec.american), np.int32)])


# ---- generator kernels (rng.cu) --------------------------------------------------------------
def philox_raw_launch(n: int, counter=(0, 0, 0, 0), key=(0, 0)) -> Launch:
    return Launch("rng.cu", {"BLOCK": BLOCK}, "philox_raw", -(-n // BLOCK), BLOCK, [
        Buffer("out", np.zeros(4 * n, dtype=np.uint32), output=True), Scalar("n", n),
        *(Scalar(f"c{i}", c, control=False) for i, c in enumerate(counter)),
        *(Scalar(f"k{i}", k, control=False) for i, k in enumerate(key))])


def mt_raw_launch(seeds, twists: int) -> Launch:
    """One warp per seed; a block holds BLOCK / 32 warps, so pad to whole blocks."""
    seeds = list(seeds)
    per_block = BLOCK // 32
    warps = -(-len(seeds) // per_block) * per_block
    seeds += [0] * (warps - len(seeds))
    return Launch("rng.cu", {"BLOCK": BLOCK}, "mt_raw", warps // per_block, BLOCK, [
        Buffer("out", np.zeros(warps * twists * rng.MT_N, dtype=np.uint32), output=True),
        Buffer("state", rng.mt_seed(seeds).reshape(-1)), Scalar("twists", twists)])


def sobol_raw_launch(n: int, draws: int, rep: int = 0, seed: int = 0) -> Launch:
    """Points 0 .. n-1 of replication `rep`, dimensions 0 .. 4 draws - 1: words and
    normals, dimension-major."""
    lo, hi = rng.seed_key(seed)
    return Launch("rng.cu", {"BLOCK": BLOCK}, "sobol_raw", -(-n // BLOCK), BLOCK, [
        Buffer("words", np.zeros(4 * draws * n, dtype=np.uint32), output=True),
        Buffer("normals", np.zeros(4 * draws * n, dtype=np.float32), output=True),
        Buffer("state", sobol_state(4 * draws)), Scalar("n", n),
        Scalar("rep", rep, control=False), Scalar("draws", draws),
        Scalar("k0", lo, control=False), Scalar("k1", hi, control=False)])


def sobol_bridge_launch(n: int, steps: int, rep: int = 0, seed: int = 0) -> Launch:
    lo, hi = rng.seed_key(seed)
    dims = -(-steps // 4) * 4
    return Launch("rng.cu", {"BLOCK": BLOCK, "SOBOL_STEPS": steps, "SOBOL_BRIDGE_STEPS": steps},
                  "sobol_bridge_raw",
                  -(-n // BLOCK), BLOCK, [
                      Buffer("out", np.zeros(steps * n, dtype=np.float32), output=True),
                      Buffer("state", sobol_state(dims, steps)), Scalar("n", n),
                      Scalar("rep", rep, control=False), Scalar("steps", steps),
                      Scalar("k0", lo, control=False), Scalar("k1", hi, control=False)])


def mt607_raw_launch(seed: int, blocks: int, draws: int) -> Launch:
    threads = blocks * BLOCK
    return Launch("rng.cu", {"BLOCK": BLOCK}, "mt607_raw", blocks, BLOCK, [
        Buffer("out", np.zeros(draws * threads, dtype=np.uint32), output=True),
        Buffer("state", rng.mt607_state(seed, threads), output=True), Scalar("draws", draws)])


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
                      Scalar("n", n), Scalar("k0", lo, control=False),
                      Scalar("k1", hi, control=False)])


def box_muller_launch(words: np.ndarray, normals: str = "thread") -> Launch:
    """Four normals per thread from the given words (shape (n, 4), uint32)."""
    words = np.ascontiguousarray(words, dtype=np.uint32).reshape(-1, 4)
    n = words.shape[0]
    return Launch("rng.cu", {"BLOCK": BLOCK, "NORMALS": NORMALS_IDS[normals]}, "box_muller",
                  -(-n // BLOCK), BLOCK, [
                      Buffer("out", np.zeros(4 * n, dtype=np.float32), output=True),
                      Buffer("words", words.reshape(-1)), Scalar("n", n)])


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
        if product in ("european-call", "asian-call"):  # the control variate (CONTROL)
            for gen, anti in (("philox", False), ("sobol", True)):
                spec = Spec(product, paths=paths, rng=gen, antithetic=anti,
                            control_variate=True)
                out.append((f"{product}/{gen}/control" + "/antithetic" * anti,
                            mc_launch(spec, paths)))
        for gen in RNGS:  # Greeks (every generator: MT adds shared memory)
            spec = Spec(product, paths=paths, rng=gen, greeks=True)
            out.append((f"{product}/{gen}/thread/greeks", mc_launch(spec, paths)))
        spec = Spec(product, paths=paths, antithetic=True, greeks=True, normals="paired",
                    div=0.02)
        out.append((f"{product}/philox/paired/antithetic/greeks", mc_launch(spec, paths)))
        if product != "everest":  # a batch of strikes on the same paths
            strikes = np.linspace(80, 120, MAX_STRIKES)
            out.append((f"{product}/philox/thread/strikes",
                        mc_launch(Spec(product, paths=paths), paths, strikes=strikes)))
            out.append((f"{product}/philox/thread/strikes/greeks",
                        mc_launch(Spec(product, paths=paths, greeks=True), paths,
                                  strikes=strikes)))
    partial = np.zeros(2 * mc_grid(paths), dtype=np.float64)
    out.append(("reduce_final", reduce_launch(partial)))
    out.append(("reduce_final/greeks", reduce_launch(np.zeros(12 * mc_grid(paths)), 6)))
    for product, steps in (("binomial-call", 2000), ("american-put", 100)):
        spec = Spec(product, steps=steps)
        out.append((f"{product}/{steps}", binomial_launch(spec, np.full(8, 100.0),
                                                          np.linspace(80, 120, 8))))
    out.append(("philox_raw", philox_raw_launch(1000)))
    out.append(("lcg_raw", lcg_raw_launch(7, 4, 16)))
    out.append(("mt_raw", mt_raw_launch(range(16), 3)))
    out.append(("sobol_raw", sobol_raw_launch(1000, 4, rep=2, seed=7)))
    out.append(("sobol_bridge_raw", sobol_bridge_launch(1000, 64, rep=1, seed=7)))
    out.append(("mt607_raw", mt607_raw_launch(7, 4, 40)))
    for normals in NORMALS:
        out.append((f"normals/{normals}", normals_launch(1000, 7, normals)))
        out.append((f"box_muller/{normals}",
                    box_muller_launch(np.zeros((1000, 4), np.uint32), normals)))
    return out


__all__ = ["Buffer", "Scalar", "Launch", "mc_launch", "reduce_launch", "binomial_launch",
           "philox_raw_launch", "mt_raw_launch", "lcg_raw_launch",
           "sobol_raw_launch", "sobol_bridge_launch", "mt607_raw_launch", "sobol_state",
           "normals_launch",
           "box_muller_launch", "production_launches",
           "mc_defines", "mc_items", "mc_grid", "draws_per_item", "gen_state", "mc_scalars",
           "mc_values", "greek_coef", "everest_asset", "MAX_STRIKES", "NCOEF", "GREEK_NAMES",
           "BLOCK", "CACHE_SIZE", "CACHE_DELTA", "MAX_BLOCKS"]
