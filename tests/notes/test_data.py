"""Sections 2.1 and 3.1 of the notes on toy autoencoding (tms.notes.data)."""

import itertools
import math

import numpy as np
import pytest
import torch

from tms.engine import sampler
from tms.engine.models import init_stack
from tms.engine.train import heldout_loss
from tms.notes import data


@pytest.mark.parametrize("S", [0.0, 0.5, 0.95])
def test_monte_carlo_moments_agree_with_the_closed_forms(S):
    D, n = 6, 40000
    r = data.moments_mc(S, D, n, seed=11)
    q = 1 - S
    assert (r["diag"], r["off"]) == (pytest.approx(q / 3), pytest.approx(q * q / 4))
    # the closed-form standard errors against the sample-based 95% half-widths (within 10%),
    # and the Monte Carlo means within 4 of them
    for key in ("diag", "off"):
        assert r[f"{key}_ci"] == pytest.approx(data.Z95 * r[f"{key}_se"], rel=0.1)
        assert abs(r[f"{key}_mc"] - r[key]) <= 4 * r[f"{key}_se"]
    assert r["diag_se"] == pytest.approx(math.sqrt((q / 5 - q * q / 9) / (D * n)), rel=1e-12)
    tol = 4 * 0.5 / math.sqrt(n)
    assert abs(r["zero_diag_mc"] - S) <= tol and abs(r["zero_off_mc"] - (1 - q * q)) <= tol
    assert r["lambda1_mc"] == pytest.approx(q / 3 + (D - 1) * q * q / 4, rel=0.05)
    assert r["lambda_rest_mc"] == pytest.approx(q / 3 - q * q / 4, rel=0.05)


def test_off_diagonal_standard_error_matches_repeated_sampling():
    # the closed-form off_se against the spread of off_mc over 40 independent seeds (±25%)
    runs = [data.moments_mc(0.6, 5, 2000, seed)["off_mc"] for seed in range(40)]
    se = data.moments_mc(0.6, 5, 2000, 0)["off_se"]
    assert np.std(runs, ddof=1) == pytest.approx(se, rel=0.25)


def test_moments_table_uses_one_seed_per_grid_point():
    t = data.moments_table([0.5, 0.9], [2, 3], 2000, 7)
    assert list(zip(t.S, t.D)) == [(0.5, 2), (0.5, 3), (0.9, 2), (0.9, 3)]
    again = data.moments_mc(0.9, 2, 2000, 7 + 2)
    assert t.diag_mc.iloc[2] == again["diag_mc"]


def test_skeleton_masses_match_enumeration_of_the_activity_patterns():
    S, D = 0.8, 5
    mu = data.skeleton_mass(S, D)
    by_pattern = np.zeros(D + 1)
    for c in itertools.product([0, 1], repeat=D):
        by_pattern[sum(c)] += (1 - S) ** sum(c) * S ** (D - sum(c))
    np.testing.assert_allclose(mu, by_pattern, rtol=1e-12)
    assert data.mass_ge2(S, D) == pytest.approx(1 - S**D - D * (1 - S) * S ** (D - 1),
                                                rel=1e-12)
    assert data.mass_ge2(0.999, 20) == pytest.approx(by_l2(0.999, 20), rel=1e-10)
    with pytest.raises(ValueError, match="S must be"):
        data.mass_ge2(1.0, 3)


def by_l2(S, D):
    return sum(math.comb(D, l) * (1 - S) ** l * S ** (D - l) for l in range(2, D + 1))


def test_skeletons_table_monte_carlo_within_four_standard_errors():
    t = data.skeletons_table([0.7, 0.95], [5, 40], 20000, 3)
    z = (t.mass_ge2_mc - t.mass_ge2).abs() / t.mass_ge2_se
    assert len(t) == 4 and z.max() <= 4
    assert t.mean_active.tolist() == pytest.approx([1.5, 12.0, 0.25, 2.0])


def test_exactly_l_active_is_the_data_conditioned_on_its_skeleton():
    gen = sampler.generators([4])[0]
    x = data.exactly_l_active(20000, 8, 3, gen)
    assert ((x != 0).sum(dim=1) == 3).all()
    share = (x != 0).double().mean(dim=0)                        # each position: 3/8
    assert torch.all((share - 3 / 8).abs() < 4 * math.sqrt(3 / 8 * 5 / 8 / 20000))
    active = x[x != 0].double()
    assert abs(active.mean().item() - 0.5) < 4 * math.sqrt(1 / 12 / len(active))
    with pytest.raises(ValueError, match="l must be"):
        data.exactly_l_active(5, 4, 5, gen)


def test_stratified_share_and_loss_agree_with_plain_monte_carlo():
    # a random ReLU-output model; the strata estimate against a plain sample of the data
    # (tms.engine.sampler) split by its number of active features, and the engine's held-out loss
    D, S = 8, 0.8
    model = init_stack(D, [3], sampler.generators([5]))
    m, se = data.loss_by_active_count(model, 4000, seed=9)
    r = data.loss_share(m[0], se[0], S)
    x = sampler.sparse_features(torch.tensor([1 - S]), 200000, D, sampler.generators([6]))
    with torch.no_grad():
        y = torch.relu(x @ model.W_in.transpose(1, 2) @ model.W_out.transpose(1, 2)
                       + model.b[:, None])
    e = (y - x).pow(2).sum(dim=2)[0].double()
    active = (x[0] != 0).sum(dim=1)
    plain = float(e[active >= 2].sum() / e.sum())
    # plain-MC error of a ratio estimate, bounded via the share of summed squared errors
    plain_se = float(e.std() / e.mean()) / math.sqrt(len(e))
    assert abs(plain - r["share_ge2"]) <= 4 * (r["share_ci"] / data.Z95 + plain_se)
    held = heldout_loss(model, torch.tensor([1 - S]), 12, 200000)[0]
    assert abs(held - r["loss"]) <= 4 * (r["loss_ci"] / data.Z95 + plain_se * held)
    assert r["mass_ge2"] == pytest.approx(by_l2(S, D))
