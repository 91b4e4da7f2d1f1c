"""The precision of the training products: torch's settings within the block only."""

import pytest
import torch

from tms.engine import precision


def test_matmul_precision_sets_torch_within_the_block_only():
    matmul = torch.backends.cuda.matmul
    before = matmul.allow_bf16_reduced_precision_reduction
    with precision.matmul_precision("bf16", "cpu") as dtype:
        assert dtype == torch.bfloat16 and not matmul.allow_bf16_reduced_precision_reduction
    assert matmul.allow_bf16_reduced_precision_reduction == before
    with precision.matmul_precision("fp32", "cpu") as dtype:
        assert dtype is None


def test_unknown_precision_and_tf32_off_cuda_are_refused():
    with pytest.raises(ValueError, match="precision must be one of"):
        precision.check("fp16", "cpu")
    with pytest.raises(ValueError, match="tf32.*CUDA"):
        precision.check("tf32", "cpu")
    assert precision.gpu_path("cpu", "bf16") and not precision.gpu_path("cpu", "fp32")
