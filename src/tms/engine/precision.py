"""The arithmetic of the training products: ``compute.precision`` of every paper's params.

- ``fp32``: float32 throughout (the authors'; the default);
- ``tf32``: the products' inputs rounded to TF32 (10-bit mantissa) inside NVIDIA's tensor cores,
  sums in float32 (``torch.backends.cuda.matmul.allow_tf32``): CUDA only;
- ``bf16``: the products' inputs and outputs in bfloat16, sums in float32; weights, optimiser
  state and every elementwise step stay float32. On CPU it runs too, on the GPU path of
  tms.engine.train (bucketed), at the speed of the CPU's bfloat16 units: several times slower
  than fp32 without them, 0.44–0.83× its time with them (docs/performance.md, Precision).

The held-out loss of each against fp32 on the bench grid is measured by bench/gpu.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch

#: The values of ``compute.precision``.
PRECISIONS = ("fp32", "tf32", "bf16")


def check(name: str, device: torch.device | str) -> None:
    """Raise ValueError unless ``name`` is one of :data:`PRECISIONS` and available on ``device``
    (tf32 only on CUDA: it has no effect elsewhere)."""
    if name not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {name!r}")
    if name == "tf32" and torch.device(device).type != "cuda":
        raise ValueError(f"precision 'tf32' needs a CUDA device, got {str(device)!r}")


def gpu_path(device: torch.device | str, name: str) -> bool:
    """Whether training takes the GPU (bucketed) path by default: on CUDA, or for bf16 (the
    only path with bfloat16 products)."""
    return torch.device(device).type == "cuda" or name == "bf16"


@contextmanager
def matmul_precision(name: str, device: torch.device | str) -> Iterator[torch.dtype | None]:
    """Within the block, products on ``device`` use the precision ``name`` (one of
    :data:`PRECISIONS`); yields the dtype for the products' inputs and outputs (torch.bfloat16
    for bf16, else None: float32). TF32 is on only within a tf32 block and off in the others
    (torch's ``fp32_precision`` of CUDA matmuls, or ``allow_tf32`` where torch lacks it); in a
    bf16 block cuBLAS's reduced-precision reductions are off, so sums stay float32. The previous
    settings are restored after the block. Raises ValueError as :func:`check`."""
    check(name, device)
    matmul = torch.backends.cuda.matmul
    tf32_key = "fp32_precision" if hasattr(matmul, "fp32_precision") else "allow_tf32"
    tf32_on = {"fp32_precision": ("tf32", "ieee"), "allow_tf32": (True, False)}[tf32_key]
    before = {tf32_key: getattr(matmul, tf32_key),
              "allow_bf16_reduced_precision_reduction":
                  matmul.allow_bf16_reduced_precision_reduction}
    setattr(matmul, tf32_key, tf32_on[0] if name == "tf32" else tf32_on[1])
    if name == "bf16":
        matmul.allow_bf16_reduced_precision_reduction = False
    try:
        yield torch.bfloat16 if name == "bf16" else None
    finally:
        for key, value in before.items():
            setattr(matmul, key, value)


def bmm(a: torch.Tensor, b: torch.Tensor, dtype: torch.dtype | None = None,
        out: torch.Tensor | None = None) -> torch.Tensor:
    """The batched product a b ((I, r, k) by (I, k, c): (I, r, c), float32) with its inputs and
    output in ``dtype`` (None: float32, as the block of :func:`matmul_precision` allows), into
    ``out`` when given."""
    if dtype is None:
        return torch.bmm(a, b, out=out)
    c = torch.bmm(a.to(dtype), b.to(dtype))
    return c.float() if out is None else out.copy_(c)
