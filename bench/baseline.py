"""The baseline of bench/throughput.py: the authors' approach, one model after another.

Each model is an ``nn.Linear`` pair with a ReLU output, trained by autograd and
``torch.optim.Adam`` on fresh sparse batches drawn the plain way (two full random tensors
per step: which features are on, and their values), with per-feature MSE loss.
"""

import torch
from torch import nn


class ToyModel(nn.Module):
    """f(x) = ReLU(W_out W_in x + b) (Persian Rug paper, eq. 1)."""

    def __init__(self, n_s: int, n_d: int):
        super().__init__()
        self.W_in = nn.Linear(n_s, n_d, bias=False)
        self.W_out = nn.Linear(n_d, n_s)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.W_out(self.W_in(x)))


def train_one(n_s: int, n_d: int, p: float, seed: int, lr: float, batch: int, steps: int,
              device: str = "cpu") -> ToyModel:
    """Train one model for ``steps`` Adam steps on batches of ``batch`` vectors."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    torch.manual_seed(seed)
    model = ToyModel(n_s, n_d).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr, eps=1e-7)
    for _ in range(steps):
        on = torch.rand(batch, n_s, generator=gen, device=device) < p
        x = torch.rand(batch, n_s, generator=gen, device=device) * on
        loss = nn.functional.mse_loss(model(x), x)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model


def train_sequential(n_s: int, grid: list[tuple[float, int]], lr: float, batch: int, steps: int,
                     device: str = "cpu") -> None:
    """Train every (p, n_d) of ``grid`` in turn, seed = its index."""
    for k, (p, n_d) in enumerate(grid):
        train_one(n_s, n_d, p, k, lr, batch, steps, device)
