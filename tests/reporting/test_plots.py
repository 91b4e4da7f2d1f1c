import numpy as np
import pandas as pd

from tms.reporting import plots


def test_fourth_norm_curves_are_thinned_to_exact_values_at_kept_steps():
    noise = pd.DataFrame({"instance": [0, 1, 2], "noise": ["bipolar", "bipolar", "normal"],
                          "sigma": [0.1, 0.1, 0.2]})
    steps = np.arange(0, 50_005, 5)                          # 10,001 recorded steps
    fourth = np.random.default_rng(0).random((3, len(steps)))
    out = plots.fourth_norms(noise, steps, fourth, 14)
    for series, curve in out.groupby("series"):
        assert len(curve) == plots.CURVE_POINTS
        assert curve.step.iloc[0] == 0 and curve.step.iloc[-1] == 50_000
        assert curve.step.is_monotonic_increasing and curve.step.is_unique
    at = np.searchsorted(steps, out[out.series == "bipolar σ=0.1"].step)
    np.testing.assert_array_equal(out[out.series == "bipolar σ=0.1"].fourth,
                                  (fourth[0, at] + fourth[1, at]) / 2)
    np.testing.assert_array_equal(out[out.series == "normal σ=0.2"].fourth, fourth[2, at])
    assert np.allclose(out[out.series == "random unit vector 3/(m+2)"].fourth, 3 / 16)
    short = plots.fourth_norms(noise, steps[:7], fourth[:, :7], 14)
    assert short[short.series == "normal σ=0.2"].step.tolist() == steps[:7].tolist()
    kept = noise.drop(index=0).reset_index(drop=True)        # instance 0 left out (diverged)
    one = plots.fourth_norms(kept, steps, fourth, 14)
    np.testing.assert_array_equal(one[one.series == "bipolar σ=0.1"].fourth, fourth[1, at])
