"""The two kernels the cpu-paper profile spends its time in, at its shapes, as a share of the fp32
matmul peak measured in the same process (before and after them, the better of the two):

- the tied autoencoder stack of incidental polysemanticity's fig. 3 (tms.engine.tied.train): n 256,
  m 4096, l1 on, no noise, AdamW, 16 instances (the authors') and 4. Its useful work is counted
  as the model needs it: without noise the output is ReLU(W Wᵀ), a symmetric product (n²·m) and
  one product for the gradient (2·n²·m), 3·n²·m per instance and step; the work the engine does
  (3.5·n²·m: tms.engine.tied.gram computes 3/4 of a general product) is shown beside it;
- the Persian Rug stack at n_s 1024 on the profile's grid (5 p × 6 ratios of the authors'
  linspace, one model each, batch 1024; tms.engine.train.train_chunk): 10·batch·n_s·Σn_d a step.

Seconds per step by tms.core.rates.seconds_per_step (two step counts, the difference), so the
set-up of a stack is not counted.

    .venv/bin/python bench/kernels.py
"""

from __future__ import annotations

import argparse
import json

import throughput
from tms.core.rates import seconds_per_step
from tms.engine.grid import Instance, StackSpec
from tms.engine.tied import Optim, Setting, TiedSpec, train
from tms.engine.train import train_chunk
from tms.incidental.stats import fourth_norms
from tms.persian_rug.params import n_d_of

#: The cpu-paper profile's Persian Rug grid (points of linspace(0.002001, 0.8, 20)).
P_VALUES = (0.044, 0.086, 0.17, 0.254, 0.338)
RATIOS = (0.044, 0.086, 0.128, 0.17, 0.212, 0.254)


def tied(n: int, m: int, instances: int, device: str) -> dict:
    """ms a step of the noise-free tied stack, and its GFLOP/s counted both ways."""
    settings = [Setting(k, lam=1e-3) for k in range(instances)]
    optim = Optim("adamw", 1e-3, 0.01)

    def run(steps: int) -> None:
        train(TiedSpec(n, m, optim, steps, steps, device), settings, fourth_norms)
    s = seconds_per_step(run, 4, 32)
    return {"n": n, "m": m, "instances": instances, "ms_per_step": 1e3 * s,
            "gflops_needed": 3.0 * n * n * m * instances / s / 1e9,
            "gflops_done": 3.5 * n * n * m * instances / s / 1e9}


def rug_stack(n_s: int, device: str) -> dict:
    """ms a step of the Persian Rug stack of the profile's grid at ``n_s``, and its GFLOP/s."""
    lr = 3e-3 / n_s ** 0.5
    insts = [Instance(p, n_d_of(n_s, r), k, lr, 0)
             for k, (r, p) in enumerate((r, p) for r in RATIOS for p in P_VALUES)]
    def run(steps: int) -> None:
        train_chunk(StackSpec(n_s, throughput.fixed(steps), device=device), insts)
    s = seconds_per_step(run, 2, 4)
    flops = 10.0 * throughput.BATCH * n_s * sum(i.n_d for i in insts)
    return {"n_s": n_s, "models": len(insts), "sum_n_d": sum(i.n_d for i in insts),
            "ms_per_step": 1e3 * s, "gflops": flops / s / 1e9}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args(argv)
    before = throughput.matmul_peak(args.device)
    rows = {"tied_16": tied(256, 4096, 16, args.device),
            "tied_4": tied(256, 4096, 4, args.device),
            "persian_rug_1024": rug_stack(1024, args.device)}
    peak = max(before, throughput.matmul_peak(args.device)) / 1e9
    print(f"fp32 matmul peak: {peak:.0f} GFLOP/s ({args.device})")
    for name, r in rows.items():
        if "gflops_needed" in r:
            r["peak_share_needed"], r["peak_share_done"] = (r["gflops_needed"] / peak,
                                                            r["gflops_done"] / peak)
            print(f"{name}: tied n {r['n']}, m {r['m']}, {r['instances']} instances: "
                  f"{r['ms_per_step']:.0f} ms a step, {r['gflops_needed']:.0f} GFLOP/s needed "
                  f"({r['peak_share_needed']:.0%} of the peak; {r['peak_share_done']:.0%} "
                  "counting the 3.5·n²·m done)")
        else:
            r["peak_share"] = r["gflops"] / peak
            print(f"{name}: n_s {r['n_s']}, {r['models']} models, Σn_d {r['sum_n_d']}: "
                  f"{r['ms_per_step']:.0f} ms a step, {r['gflops']:.0f} GFLOP/s "
                  f"({r['peak_share']:.0%} of the peak)")
    return {"peak_gflops": peak, **rows}


if __name__ == "__main__":
    print(json.dumps(main(), indent=1))
