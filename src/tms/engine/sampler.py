"""Samplers for the sparse feature data of the Persian Rug paper (section 2).

Each feature is x_i = c_i u_i with c_i ~ Bernoulli(p) and u_i ~ U[0, 1], all independent.
One uniform draw per entry suffices: with v ~ U[0, 1], c = [v < p] is Bernoulli(p) and, given
c = 1, v / p is U[0, 1]; so x = (v / p)·[v < p] has exactly the law above.

Moments (used by the tests and the theory): E x = p/2, E x² = p/3,
Var(x) = p/3 − p²/4 = (4p − 3p²)/12.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import torch

#: Second word of the SeedSequence entropy of training-data streams (see stream_generator).
DATA_STREAM = 0xDA7A


def generators(seeds: Sequence[int], device: torch.device | str = "cpu") -> list[torch.Generator]:
    """One seeded torch generator per instance, on ``device``.

    seeds: one integer per instance (the convention is base seed + instance index in the
    full grid, so that a chunk of the grid draws what the whole grid would).
    Raises ValueError on a negative seed.
    """
    gens = []
    for s in seeds:
        if int(s) < 0:
            raise ValueError(f"seed must be >= 0, got {s}")
        g = torch.Generator(device=device)
        g.manual_seed(int(s))
        gens.append(g)
    return gens


def uniform(gens: Sequence[torch.Generator], n_vectors: int, n_s: int,
            out: torch.Tensor | None = None) -> torch.Tensor:
    """Draw v ~ U[0, 1] of shape (instances, n_vectors, n_s), instance k from ``gens[k]``.

    ``out`` (same shape, float) is filled in place when given, to avoid an allocation per step.
    The device is the generators' device.
    """
    if out is None:
        out = torch.empty(len(gens), n_vectors, n_s, device=gens[0].device)
    for k, g in enumerate(gens):
        out[k].uniform_(0.0, 1.0, generator=g)
    return out


def sparse_from_uniform(v: torch.Tensor, p: torch.Tensor | float,
                        out: torch.Tensor | None = None) -> torch.Tensor:
    """Turn uniforms into sparse features: x = (v / p)·[v < p].

    v: (instances, n_vectors, n_s), or (n_vectors, n_s) shared by all instances.
    p: (instances,) feature probability per instance, each in (0, 1], or one float.
    out: optional result buffer of the broadcast shape, filled in place.
    Returns x of shape (instances, n_vectors, n_s) (or (n_vectors, n_s) for a float p),
    distributed as c·u with c ~ Bernoulli(p), u ~ U[0, 1] (Persian Rug paper, section 2).
    """
    if isinstance(p, torch.Tensor):
        p = p.to(v.dtype).reshape(-1, 1, 1)
    x = torch.div(v, p, out=out)
    return x.mul_(v < p)   # x ≥ 0 times a bool: x, or +0 where v ≥ p (faster than masked_fill_)


def stream_generator(data_seed: int, device: torch.device | str = "cpu") -> torch.Generator:
    """The generator of a shared training-data stream, seeded from ``data_seed``.

    Its seed is derived from ``data_seed`` (numpy SeedSequence) so that a data stream and an
    initialisation generator seeded with the same integer never share draws.
    Raises ValueError on a negative seed.
    """
    if int(data_seed) < 0:
        raise ValueError(f"data seed must be >= 0, got {data_seed}")
    seed = int(np.random.SeedSequence([int(data_seed), DATA_STREAM]).generate_state(1, np.uint64)[0])
    g = torch.Generator(device=device)
    g.manual_seed(seed)
    return g


def sparse_features(p: torch.Tensor, n_vectors: int, n_s: int,
                    gens: Sequence[torch.Generator]) -> torch.Tensor:
    """Sample x of shape (instances, n_vectors, n_s), instance k with probability p[k].

    One fresh draw per call from each instance's generator (training data, fresh each batch).
    """
    return sparse_from_uniform(uniform(gens, n_vectors, n_s), p)


def heldout_uniform(seed: int, n_vectors: int, n_s: int, chunk: int = 8192,
                    device: torch.device | str = "cpu") -> Iterator[torch.Tensor]:
    """The fixed held-out sample, as uniforms v of shape (≤ chunk, n_s), chunk after chunk.

    The same ``seed`` gives the same v for every instance; each instance turns it into its
    own x with :func:`sparse_from_uniform`, so all models of a grid, the Persian rug and
    the linear optimum are scored on common random numbers. Total n_vectors rows.
    """
    g = torch.Generator(device=device)
    g.manual_seed(int(seed))
    done = 0
    while done < n_vectors:
        n = min(chunk, n_vectors - done)
        yield torch.rand(n, n_s, generator=g, device=device)
        done += n
