"""`make bench`: the throughput benchmark (bench/throughput.py), the cpu-paper profile's two
kernels at its shapes (bench/kernels.py), the measurements behind the
engine's fixed choices (bench/pieces.py: batch pieces; bench/sparse_input.py: dense W_in x;
bench/small_steps.py: the tied stacks' SGD),
on a CUDA machine the GPU path at the authors' scale and each precision (bench/gpu.py; without
CUDA it says so), then the default-profile repro timing (bench/repro_time.py), in one run;
everything printed and written to bench/results.json.

    .venv/bin/python bench/run.py
"""

from pathlib import Path

import gpu
import kernels
import pieces
import repro_time
import small_steps
import sparse_input
import throughput
from tms.core import io


def main() -> None:
    results = {"throughput": throughput.main([]), "kernels": kernels.main([]),
               "pieces": pieces.main([]),
               "sparse_input": sparse_input.main([]), "small_steps": small_steps.main([]),
               "gpu": gpu.main([]),
               "repro_seconds": repro_time.main()}
    io.write_json(results, Path(__file__).with_name("results.json"))


if __name__ == "__main__":
    main()
