"""The per-step cost of the tied stacks of Incidental polysemanticity's figs. 4–6 (n 8, m 16,
hidden noise, SGD, 100,000 steps a stage in every profile): a step of tms.engine.tied.train with
its SGD (tms.engine.optim.PlainSgd) against the same step with torch.optim.SGD, the update of
both the same to the bit. At this size a step is a few dozen small torch calls, and
torch.optim's per-step bookkeeping was the largest of them.

    .venv/bin/python bench/small_steps.py
"""

from __future__ import annotations

import argparse
import json
from unittest import mock

import torch

from tms.core.rates import seconds_per_step
from tms.engine import optim, tied
from tms.engine.tied import Optim, Setting, TiedSpec

#: Fig. 4's stack in params.yaml: 2 noise kinds × 3 σ × 5 instances.
SETTINGS = [Setting(k, lam=0.0, sigma=s, noise=kind) for k, (kind, s) in enumerate(
    (kind, s) for kind in ("bipolar", "normal") for s in (0.07, 0.1, 0.15) for _ in range(5))]


class TorchSgd:
    """torch.optim.SGD over the stack, made where PlainSgd is (its first step makes it)."""

    def __init__(self, lr: float):
        self.lr, self.opt = lr, None

    def step(self, params: list[torch.Tensor], grads: list[torch.Tensor]) -> None:
        if self.opt is None:
            self.opt = optim.StackOptimizer(torch.optim.SGD(params, lr=self.lr))
        self.opt.step(params, grads)


def ms_per_step(n: int = 8, m: int = 16) -> float:
    """ms a step of fig. 4's stack with the SGD that tms.engine.tied.train uses."""
    def run(steps: int) -> None:
        tied.train(TiedSpec(n, m, Optim("sgd", 0.02), steps, steps), SETTINGS,
                   lambda W: W.sum(dim=(1, 2)))
    return 1e3 * seconds_per_step(run, 100, 2000)


def main(argv: list[str] | None = None) -> dict:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)
    plain = ms_per_step()
    with mock.patch.object(optim, "PlainSgd", TorchSgd):
        torch_optim = ms_per_step()
    out = {"instances": len(SETTINGS), "plain_sgd_ms_per_step": plain,
           "torch_optim_sgd_ms_per_step": torch_optim, "ratio": torch_optim / plain}
    print(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
