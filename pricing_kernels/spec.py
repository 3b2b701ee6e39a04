"""What to price: a validated `Spec`. Invalid inputs raise `InputError` with a message for
the user (the command line prints it and exits with status 2)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .reference import crr_parameters

PRODUCTS = {
    "european-call": "European call (Monte Carlo)",
    "european-put": "European put (Monte Carlo)",
    "asian-call": "arithmetic-average Asian call, monitored after each step (Monte Carlo)",
    "everest": "Everest note: notional x max(1, worst performance of the assets) (Monte Carlo)",
    "binomial-call": "European call on a binomial lattice",
    "binomial-put": "European put on a binomial lattice",
    "american-call": "American call on a binomial lattice",
    "american-put": "American put on a binomial lattice",
}
LATTICE = ("binomial-call", "binomial-put", "american-call", "american-put")
RNGS = ("philox", "mt", "lcg", "sobol", "mt607")
NORMALS = ("thread", "paired")
DEVICES = ("gpu", "cpu", "emulator")
MAX_ASSETS = 64
DEFAULT_PATHS = {"gpu": 1_000_000, "cpu": 200_000, "emulator": 4096}
DEFAULT_STEPS = {"asian-call": 64, "lattice": 1024}
MAX_PATHS = 1 << 53  # counts are 64-bit on the device; 2^53 keeps them exact as floats
# products that take --steps: the others use one exact log-normal step to maturity
STEPPED = ("asian-call",) + LATTICE


CV_PRODUCTS = ("european-call", "european-put", "asian-call")  # variance.py
SOBOL_MAX_STEPS = 1024  # params.SOBOL_DIMS
SOBOL_MIN_PATHS = 32  # variance.SOBOL_REPLICATIONS x 2
SOBOL_MAX_PATHS = 1 << 36  # 16 replications of at most 2^32 points (the index's low word)


class InputError(ValueError):
    """An input the pricer refuses; the message says which and why."""


@dataclass(frozen=True)
class Spec:
    product: str
    spot: float = 100.0
    strike: float = 100.0
    rate: float = 0.05
    vol: float = 0.2
    maturity: float = 1.0
    steps: int | None = None  # None: the product's default
    paths: int | None = None  # None: the device's default
    assets: int = 4
    corr: tuple[float, ...] = (0.5,)  # one value for every pair, or the upper triangle
    rng: str = "philox"
    normals: str = "thread"
    antithetic: bool = False
    seed: int = 1234
    div: float = 0.0  # continuous dividend yield q: the risk-neutral drift is rate - div
    vols: tuple[float, ...] = ()  # everest: one volatility per asset (empty: --vol for all)
    divs: tuple[float, ...] = ()  # everest: one dividend yield per asset (empty: --div)
    greeks: bool = False  # also estimate delta, gamma, vega, theta and rho
    control_variate: bool = False  # European: S_T, Asian: the geometric Asian (variance.py)
    corr_matrix: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check(self.product in PRODUCTS, f"unknown product '{self.product}' "
               f"(choose from {', '.join(PRODUCTS)})")
        for name in ("spot", "strike", "maturity"):
            value = getattr(self, name)
            _check(math.isfinite(value) and value > 0, f"--{name} must be positive, got {value}")
        _check(math.isfinite(self.vol) and self.vol > 0,
               f"--vol must be positive, got {self.vol}")
        _check(math.isfinite(self.rate) and abs(self.rate) < 1,
               f"--rate must be a finite rate below 100%, got {self.rate}")
        _check(math.isfinite(self.div) and abs(self.div) < 1,
               f"--div must be a finite dividend yield below 100%, got {self.div}")
        everest = self.product == "everest"
        for name, values in (("vol", self.vols), ("div", self.divs)):
            _check(not values or everest, f"--{name} takes one value for {self.product} "
                   "(a list, one per asset, only for everest)")
            _check(not values or len(values) in (1, self.assets),
                   f"--{name} takes one value or one per asset ({self.assets} for --assets "
                   f"{self.assets}), got {len(values)}")
        for v in self.vols:
            _check(math.isfinite(v) and v > 0, f"--vol must be positive, got {v}")
        for v in self.divs:
            _check(math.isfinite(v) and abs(v) < 1,
                   f"--div must be a finite dividend yield below 100%, got {v}")
        _check(self.steps is None or self.steps >= 1,
               f"--steps must be at least 1, got {self.steps}")
        _check(self.steps is None or self.steps < 1 << 20, "--steps must be below 2^20")
        _check(self.paths is None or self.paths >= 1,
               f"--paths must be at least 1, got {self.paths}")
        _check(self.paths is None or self.paths < MAX_PATHS, "--paths must be below 2^53")
        # only the Everest note has several assets: the others ignore --assets
        _check(self.product != "everest" or 1 <= self.assets <= MAX_ASSETS,
               f"--assets must be between 1 and {MAX_ASSETS}, got {self.assets}")
        _check(self.rng in RNGS, f"unknown generator '{self.rng}' (choose from {', '.join(RNGS)})")
        _check(not self.control_variate or self.product in CV_PRODUCTS,
               f"--control-variate applies to {', '.join(CV_PRODUCTS)}, not {self.product}")
        _check(not (self.control_variate and self.greeks),
               "--control-variate does not combine with --greeks")
        # Sobol: the dimensions drawn must be shipped (params.SOBOL_DIMS), and each of the
        # SOBOL_REPLICATIONS replications needs two points at least
        _check(self.rng != "sobol" or self.product != "asian-call"
               or self.steps_or_default() <= SOBOL_MAX_STEPS,
               f"--rng sobol takes at most {SOBOL_MAX_STEPS} steps (the Sobol dimensions "
               f"shipped), got {self.steps_or_default()}")
        _check(self.rng != "sobol" or self.paths is None or self.paths >= SOBOL_MIN_PATHS,
               f"--rng sobol needs at least {SOBOL_MIN_PATHS} paths (16 replications of "
               f"2), got {self.paths}")
        _check(self.rng != "sobol" or self.paths is None or self.paths <= SOBOL_MAX_PATHS,
               "--rng sobol takes at most 2^36 paths (16 replications of 2^32 points)")
        _check(self.normals in NORMALS, f"unknown normals '{self.normals}' "
               f"(choose from {', '.join(NORMALS)})")
        _check(0 <= self.seed < 1 << 64, f"--seed must be in 0..2^64-1, got {self.seed}")
        # the correlation only matters to the Everest note: other products ignore --corr
        matrix = correlation(self.corr, self.assets) if self.product == "everest" \
            else np.eye(1)
        object.__setattr__(self, "corr_matrix", matrix)
        if self.lattice:
            _check(not self.greeks or self.steps_or_default() >= 3,
                   "--greeks on a lattice needs --steps of at least 3 (delta, gamma and "
                   "theta come from the nodes two levels down)")
            try:
                crr_parameters(self.rate, self.vol, self.maturity, self.steps_or_default(),
                               self.div)
            except ValueError as exc:
                raise InputError(str(exc)) from None

    # ---- derived -------------------------------------------------------------------------
    @property
    def lattice(self) -> bool:
        return self.product in LATTICE

    @property
    def put(self) -> bool:
        return self.product.endswith("-put")

    @property
    def american(self) -> bool:
        return self.product.startswith("american-")

    def asset_vols(self) -> np.ndarray:
        """Everest: the volatility of each asset (--vol for all unless listed)."""
        n = self.assets if self.product == "everest" else 1
        return np.broadcast_to(np.asarray(self.vols or (self.vol,), dtype=np.float64),
                               (n,)).copy()

    def asset_divs(self) -> np.ndarray:
        """Everest: the dividend yield of each asset (--div for all unless listed)."""
        n = self.assets if self.product == "everest" else 1
        return np.broadcast_to(np.asarray(self.divs or (self.div,), dtype=np.float64),
                               (n,)).copy()

    def steps_or_default(self) -> int:
        if self.steps is not None:
            return self.steps
        if self.lattice:
            return DEFAULT_STEPS["lattice"]
        return DEFAULT_STEPS.get(self.product, 1)

    def paths_or_default(self, device: str) -> int:
        return self.paths if self.paths is not None else DEFAULT_PATHS[device]


def correlation(values: tuple[float, ...], assets: int) -> np.ndarray:
    """The correlation matrix of `assets` assets from one value (every pair) or the
    n(n-1)/2 values of the upper triangle, row by row; InputError unless it is a valid,
    positive-definite correlation matrix."""
    values = tuple(float(v) for v in values)
    pairs = assets * (assets - 1) // 2
    _check(len(values) in (1, pairs) or (assets == 1 and len(values) <= 1),
           f"--corr takes one value or the {pairs} values of the upper triangle for "
           f"{assets} assets, got {len(values)}")
    for v in values:
        _check(math.isfinite(v) and -1.0 <= v <= 1.0,
               f"correlations must lie in [-1, 1], got {v}")
    c = np.eye(assets)
    if assets > 1:
        iu = np.triu_indices(assets, 1)
        c[iu] = values[0] if len(values) == 1 else values
        c.T[iu] = c[iu]
    try:
        np.linalg.cholesky(c)
    except np.linalg.LinAlgError:
        low = min(np.linalg.eigvalsh(c))
        raise InputError(f"the correlation matrix is not positive definite (smallest "
                         f"eigenvalue {low:.3g}); with one correlation r for {assets} "
                         f"assets, r must exceed {-1.0 / max(1, assets - 1):.3g} and be "
                         "below 1") from None
    return c


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise InputError(message)


__all__ = ["Spec", "InputError", "PRODUCTS", "LATTICE", "STEPPED", "RNGS", "NORMALS",
           "DEVICES", "correlation", "DEFAULT_PATHS", "MAX_PATHS"]
