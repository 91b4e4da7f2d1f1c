"""make exps: dvc exp show as a table of the params that differ and the headline verdicts."""

from tms.pipeline import experiments


def _entry(name, lr, seed, reproduced):
    claims = {"persian_rug": {"empirical": {"reproduced": reproduced, "not_reproduced": 1,
                                            "inconclusive_holds": 2, "inconclusive_fails": 3}}}
    return {"rev": name * 7, "name": name, "data": {
        "params": {"params.yaml": {"data": {"persian_rug": {"train": {"lr_scale": lr},
                                                            "grid": {"n_s": [64, 128]}},
                                            "seed": seed}}},
        "metrics": {"reports/claims.json": {"data": claims}}}}


def test_the_table_shows_only_the_params_that_differ_and_the_verdicts():
    base = _entry("workspace", 0.01, 1, 9)
    head = {**_entry("main", 0.01, 1, 9), "experiments": [
        {"name": "fast", "revs": [_entry("fast", 0.02, 1, 8)]}]}
    frame, left = experiments.table([base, head])
    assert list(frame.columns) == ["experiment", "persian_rug.train.lr_scale", "PR R/N/I"]
    assert frame["experiment"].tolist() == ["workspace", "main", "fast"]
    assert frame["PR R/N/I"].tolist() == ["9/1/5", "9/1/5", "8/1/5"]
    assert left == 0


def test_no_more_than_twenty_columns():
    rows = [_entry("a", 0.01, 1, 1)]
    rows[0]["data"]["params"]["params.yaml"]["data"].update({f"k{i}": 0 for i in range(40)})
    other = _entry("b", 0.02, 2, 1)
    other["data"]["params"]["params.yaml"]["data"].update({f"k{i}": 1 for i in range(40)})
    frame, left = experiments.table(rows + [other])
    assert frame.shape[1] == experiments.MAX_COLUMNS and left == 42 - 18
