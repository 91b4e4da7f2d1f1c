import numpy as np
import pytest

from tms.persian_rug import weights


def _model(rng, n_d, n_s=6):
    return (rng.normal(size=(n_d, n_s)).astype(np.float32),
            rng.normal(size=(n_s, n_d)).astype(np.float32), rng.normal(size=n_s).astype(np.float32))


def test_a_folder_written_out_of_order_reads_back_every_kept_model(tmp_path):
    rng = np.random.default_rng(0)
    index = [("relu", 0, 2), ("relu", 3, 5), ("linear", 0, 1)]
    models = {(m, i): _model(rng, d) for m, i, d in index}
    with weights.Writer(tmp_path, 6, index) as out:
        for key in [("linear", 0), ("relu", 3), ("relu", 0)]:      # as chunks finish
            assert out.wants(*key)
            out.put(*key, *models[key])
        assert not out.wants("relu", 1)
    back = weights.read(tmp_path)
    assert list(back) == [("relu", 0), ("relu", 3), ("linear", 0)]
    for key, arrays in models.items():
        for a, b in zip(back[key], arrays):
            assert np.array_equal(a, b)
    # the documented layout: W_in flat and concatenated in file order, b stacked
    assert np.array_equal(np.load(tmp_path / "W_in.npy"),
                          np.concatenate([models[(m, i)][0].ravel() for m, i, _ in index]))
    assert np.load(tmp_path / "b.npy").shape == (3, 6)
    assert weights.nbytes(6, [2, 5, 1]) == sum(a.nbytes for m in models.values() for a in m)


def test_a_model_never_written_or_of_the_wrong_shape_is_an_error(tmp_path):
    rng = np.random.default_rng(1)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with pytest.raises(ValueError, match="1 kept models were never written"):
        with weights.Writer(tmp_path / "a", 6, [("relu", 0, 2), ("relu", 1, 2)]) as out:
            out.put("relu", 0, *_model(rng, 2))
    with weights.Writer(tmp_path / "b", 6, [("relu", 0, 2)]) as out:
        with pytest.raises(ValueError, match="shapes"):
            out.put("relu", 0, *_model(rng, 3))
        with pytest.raises(KeyError):
            out.put("relu", 7, *_model(rng, 2))
        out.put("relu", 0, *_model(rng, 2))


def test_a_folder_that_keeps_nothing_reads_back_empty(tmp_path):
    with weights.Writer(tmp_path, 6, []):
        pass
    assert weights.read(tmp_path) == {}
