"""Where the stages of *Incidental polysemanticity* write, named once: every stage script, the
claims stage and the DVC plots stage take their paths from here, and :func:`outs` is checked
against dvc.yaml (tests/core/test_artefacts.py). Paths are relative to the repository root.
"""

from __future__ import annotations

DATA = "data/incidental_polysemanticity"
SPARSIFICATION = f"{DATA}/sparsification.parquet"
EULER = f"{DATA}/euler.parquet"
COLLISIONS = f"{DATA}/collisions.parquet"
NOISE = f"{DATA}/noise.parquet"
NOISE_FOURTH = f"{DATA}/noise_fourth"
SWEEP = f"{DATA}/sweep.parquet"
CHECKS = f"{DATA}/checks.parquet"
#: The fig. 6 runs: our σ, and the paper's printed σ.
RUNS = ("single", "single_printed")
#: The report's figures; the claims stage links each claim to its figure there.
FIGURES = "reports/figures/incidental_polysemanticity"
CLAIMS = "reports/claims/incidental_polysemanticity.json"


def stuck(run: str) -> str:
    """The stuck encodings found by the fig. 6 run ``run`` (tms.incidental.stats.STUCK_COLUMNS)."""
    return f"{DATA}/{run}_stuck.parquet"


def single(run: str) -> str:
    """The folder of the arrays of the fig. 6 run ``run`` (steps, fourth norms, W, diverged)."""
    return f"{DATA}/{run}"


def outs() -> dict[str, list[str]]:
    """Every data stage's outputs (DVC stage name → paths)."""
    return {"ip_sparsification": [SPARSIFICATION, EULER], "ip_collisions": [COLLISIONS],
            "ip_noise": [NOISE, NOISE_FOURTH], "ip_sweep": [SWEEP], "ip_checks": [CHECKS],
            "ip_claims": [CLAIMS],
            **{f"ip_single@{run}": [stuck(run), single(run)] for run in RUNS}}
