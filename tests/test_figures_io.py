import numpy as np
import pandas as pd
import pytest

from tms import figures, io, rug


def test_nearest_grid_point():
    assert figures.nearest([0.002001, 0.044, 0.086], 0.05) == 0.044
    assert figures.nearest([0.1, 0.5], 0.001) == 0.1


def test_saved_figures_are_byte_stable(tmp_path):
    W = rug.rug_matrix(16, rug.choose_rows(16, 4, 0))
    a = figures.save(figures.fig1_rug(W, 4), tmp_path / "a")
    b = figures.save(figures.fig1_rug(W, 4), tmp_path / "b")
    for x, y in zip(a, b):
        assert x.read_bytes() == y.read_bytes()
    assert b"Date" not in a[1].read_bytes().split(b"</metadata>")[0].split(b"<metadata>")[-1]


def test_fig2_draws_every_series_for_every_p():
    theory = pd.DataFrame({"p": [0.1] * 3 + [0.5] * 3, "ratio": [0.25, 0.5, 1.0] * 2,
                           "loss": [0.02, 0.01, 0.0, 0.08, 0.05, 0.0],
                           "loss_linear": [0.03, 0.02, 0.0, 0.09, 0.06, 0.0]})
    rug_t = pd.DataFrame({"p": [0.1, 0.5], "ratio": [0.25, 0.25], "loss": [0.02, 0.08]})
    trained = pd.DataFrame({"model": ["relu"] * 4, "p": [0.1, 0.1, 0.5, 0.5],
                            "ratio": [0.25, 0.25, 0.25, 0.25], "loss": [0.021, 0.023, 0.08, 0.081],
                            "seed_index": [0, 1, 0, 1]})
    fig = figures.fig2_loss(trained, rug_t, theory, [0.1, 0.5])
    left = fig.axes[0]
    labels = [line.get_label() for line in left.get_lines()]
    assert labels.count("Persian rug") == 2 and labels.count("optimal linear") == 2
    theory_line = next(line for line in left.get_lines() if line.get_label() == "p = 0.1: theory")
    assert list(theory_line.get_xdata()) == [0.25, 0.5]        # ratio 1 (loss 0) left off log axis
    assert left.get_yscale() == "log"


def test_atomic_write_leaves_old_target_on_failure(tmp_path):
    target = tmp_path / "t.json"
    io.write_json({"a": 1}, target)
    with pytest.raises(RuntimeError):
        with io.atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("interrupted")
    assert target.read_text().startswith("{") and sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]


def test_arrays_round_trip(tmp_path):
    arrays = {"W_in": np.arange(6, dtype=np.float32), "b": np.ones((2, 3), np.float32)}
    io.write_arrays(arrays, tmp_path / "w")
    back = io.read_arrays(tmp_path / "w")
    assert set(back) == {"W_in", "b"} and np.array_equal(back["b"], arrays["b"])
