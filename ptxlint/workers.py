"""Worker processes: the one way ptxlint runs work in parallel, `worker_pool`.

Two things use it: the `ptxlint` command, which lints many files on `-j N` workers
(`cli.run.run_jobs`), and `lint_text(..., jobs=N)`, which shares one large file's
kernels among N processes (`lint._lint_parallel`). The workers are forked, so they
inherit this process's memory: what is set before the first `submit` (the file's text)
needs no pickling on the way in; results come back pickled. A worker dies of SIGTERM
(the parent's handler, inherited through fork, would raise in the middle of a file and
the worker would report that and go on). Importing this module imports nothing heavy:
`ptxlint --version` does not pay for `multiprocessing`.
"""
from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Iterator


def children() -> set:
    """The processes this one started and that still run (`multiprocessing`'s)."""
    mp = sys.modules.get("multiprocessing")
    return set(mp.active_children()) if mp is not None else set()  # none if never imported


def end_children(spare: set = frozenset()) -> None:  # type: ignore[assignment]
    """Kill the processes this one started, but those in `spare` (a program calling
    ptxlint may have its own), and reap them: the file pool's workers, the forked
    children sharing one file's kernels. After an interrupt nobody waits for their
    results, and a worker may be minutes into a file."""
    ours = children() - spare
    for child in ours:
        try:
            child.kill()
        except (OSError, ValueError):  # gone already, or closed
            pass
    for child in ours:
        child.join(timeout=2)


def _worker_signals() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextlib.contextmanager
def worker_pool(workers: int) -> Iterator:
    """A `ProcessPoolExecutor` of `workers` forked processes (the platform's default
    start method where there is no fork). Left normally, it waits for its work; left by
    an exception (Ctrl-C, SIGTERM, an error), its workers are killed at once: a shutdown
    would wait for the files being linted, minutes maybe."""
    import multiprocessing  # noqa: PLC0415 - only when work is shared out
    from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415

    context = multiprocessing.get_context(
        "fork" if "fork" in multiprocessing.get_all_start_methods() else None)
    spare = children()
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context,
                               initializer=_worker_signals)
    try:
        yield pool
    except BaseException:
        end_children(spare)
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


__all__ = ["worker_pool", "children", "end_children"]
