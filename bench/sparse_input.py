"""Benchmark behind the engine's dense W_in x: the two products with the sparse inputs x of a
group, hᵀ = W_in xᵀ and ∂W_in = ∂hᵀ x, dense against sparse (x as a CSR matrix, its
conversion and that of xᵀ included), on one thread, at the groups' shapes: W_in of total
width Σ n_d over the ratios of a group. Medians of repeats; a ratio above 1 means the
sparse products would pay.

    .venv/bin/python bench/sparse_input.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from collections.abc import Callable

import torch

from throughput import BATCH, P_VALUES, RATIOS
from tms.grid import n_d_of
from tms.threads import torch_threads

#: (n_s, total width of a group): the bench grid's groups (8 ratios) and the default
#: profile's widest (pr_train at n_s 128, 6 ratios) and the lone fig. 3 model
SHAPES = [(128, sum(n_d_of(128, r) for r in RATIOS)), (256, sum(n_d_of(256, r) for r in RATIOS)),
          (512, sum(n_d_of(512, r) for r in RATIOS)), (128, 326), (512, 130)]


def ms(fn: Callable[[], object], repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1e3 * statistics.median(times)


def dense_and_sparse_ms(n_s: int, width: int, p: float, repeats: int) -> tuple[float, float]:
    """Milliseconds of the two products, dense and by CSR, for one group at feature
    probability p."""
    gen = torch.Generator().manual_seed(0)
    W_in = torch.randn(width, n_s, generator=gen)
    v = torch.rand(BATCH, n_s, generator=gen)
    x = (v / p) * (v < p)
    dh = torch.randn(BATCH, width, generator=gen)
    dhT = dh.T.contiguous()

    def dense():
        torch.mm(W_in, x.T)
        torch.mm(dhT, x)

    def sparse():
        torch.sparse.mm(x.to_sparse_csr(), W_in.T)
        torch.sparse.mm(x.T.contiguous().to_sparse_csr(), dh)

    return ms(dense, repeats), ms(sparse, repeats)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
    rows = []
    with torch_threads(1):
        for n_s, width in SHAPES:
            for p in P_VALUES:
                d, s = dense_and_sparse_ms(n_s, width, p, args.repeats)
                rows.append({"n_s": n_s, "width": width, "p": p, "dense_ms": d, "sparse_ms": s})
            pays = [f"{r['p']:.3f}" for r in rows[-len(P_VALUES):]
                    if r["dense_ms"] > r["sparse_ms"]]
            print(f"n_s {n_s:>4}, width {width:>5}: dense/sparse "
                  + " ".join(f"{r['dense_ms'] / r['sparse_ms']:5.2f}"
                             for r in rows[-len(P_VALUES):])
                  + f"  (p = {', '.join(f'{p:.3f}' for p in P_VALUES)}); "
                  f"sparse pays at p in [{', '.join(pays)}]", flush=True)
    return {"rows": rows}


if __name__ == "__main__":
    main()
