import functools

import numpy as np
import pandas as pd
import pytest

from tms.core import rates
from tms.persian_rug import forecast
from tms.pipeline import params


def _grids(pr, *args):
    """The forecast of the trained grids of ``pr`` (not fig. 3), indexed by n_s."""
    table = forecast.forecast(pr, *args)
    assert list(table.stage)[-1] == "pr_converge_fig3" and "pr_fig3" in list(table.stage)
    return table[table.stage.str.startswith("pr_train@")].set_index("n_s")


def test_the_convergence_checks_cost_one_model_per_p_at_factor_times_the_steps(load_profile):
    pr = params.SECTION.parse(load_profile("paper")).persian_rug
    table = forecast.forecast(pr).set_index("stage")
    axis = np.linspace(0.002001, 0.8, 20)
    n_d = sorted(max(1, int(1024 * r)) for r in axis)
    row = table.loc["pr_converge@1024"]
    assert row.models == 20 and row.chunks == 1 and row.sum_n_d == 20 * n_d[10]   # median n_d
    # one stack of 20 models of 20 widths: 3.0 ms of work a step at 28 TFLOP/s (fp32, one H100)
    # and 6.5 ms of launches
    work = 10 * 1024 * 1024 * 20 * n_d[10] / 28e12
    # on from the stop (its kept state): three times the steps more, of four
    assert row.minutes_median == pytest.approx(3 * 2445 * (6.5e-3 + work) / 60)
    widest = 10 * 1024 * 1024 * 20 * n_d[-1] / 28e12
    assert row.minutes_cap == pytest.approx(3 * 45000 * (6.5e-3 + widest) / 60)
    assert row.kept_gib == 0
    # with converge.capped, the models rerun at the cap are the widest: one width's launches
    pr = pr.model_copy(update={"converge": pr.converge.model_copy(update={"capped": True})})
    capped = forecast.forecast(pr).set_index("stage").loc["pr_converge@1024"]
    assert capped.minutes_cap == pytest.approx(3 * 45000 * (6.5e-3 / 20 + widest) / 60)
    assert capped.minutes_median == row.minutes_median
    fig3 = table.loc["pr_converge_fig3"]         # one p, n_d 130: the launches of one width
    assert fig3.models == 1 and fig3.minutes_median == pytest.approx(
        3 * 4530 * (6.5e-3 / 20 + 10 * 1024 * 512 * 130 / 28e12) / 60)
    # a grid that keeps no weights keeps no state: its check retrains from the start, four times
    none = pr.model_copy(update={"grid": pr.grid.model_copy(update={"keep_weights": "none"})})
    unkept = forecast.forecast(none).set_index("stage").loc["pr_converge@1024"]
    assert unkept.minutes_median == pytest.approx(4 * 2445 * (6.5e-3 + work) / 60)


def test_a_longer_window_is_forecast_at_its_own_median_stop_and_an_unmeasured_one_at_the_cap(
        load_profile):
    raw = load_profile("cpu-paper")
    raw["persian_rug"]["train"]["max_steps"] = 45000
    default = _grids(params.SECTION.parse(raw).persian_rug)
    for window in (2000, 1000):
        raw["persian_rug"]["train"]["window"] = window
        longer = _grids(params.SECTION.parse(raw).persian_rug)
        measured = forecast.MEDIAN_STOP.get((window, 0.003), {})     # the authors' lr
        for n_s in (128, 256, 512, 1024):
            steps = (measured[min(measured, key=lambda k: abs(k - n_s))]
                     if measured and n_s <= max(measured) else 45000)
            assert longer.loc[n_s].minutes_median == pytest.approx(
                default.loc[n_s].minutes_median * steps / forecast.MEDIAN_STOP[200, 0.003][n_s])
    assert longer.loc[1024].minutes_median == longer.loc[1024].minutes_cap   # window 1000
    stop = forecast.MEDIAN_STOP[2000, 0.003]
    assert stop[256] < 45000 and max(stop) < 1024


def test_the_median_stop_is_the_one_measured_at_the_grids_learning_rate(load_profile, root):
    """The default profile's grids (0.01/√n_s, 3.3× the authors') and fig. 3 model (lr 3e-4)
    are forecast at their own median stops, those of the committed default snapshot's models
    (2,640 steps at n_s 128, not the authors' rate's 4,320); a rate never measured, or a fixed
    lr, at the cap."""
    raw = load_profile("default")
    pr = params.SECTION.parse(raw).persian_rug
    table = forecast.forecast(pr).set_index("stage")
    snapshot = root / "results/default/data/persian_rug"
    for n_s in (64, 128):
        trained = pd.read_parquet(snapshot / f"train/n{n_s}.parquet")
        steps = trained[trained.model == "relu"].steps.median()
        assert forecast.MEDIAN_STOP[200, 0.01][n_s] == steps
        row = table.loc[f"pr_train@{n_s}"]
        assert row.minutes_median == pytest.approx(row.minutes_cap * steps / pr.train.max_steps)
    fig3 = table.loc["pr_fig3"]
    assert fig3.minutes_median == pytest.approx(
        fig3.minutes_cap * pd.read_parquet(snapshot / "fig3.parquet").steps[0] / pr.fig3.max_steps)
    for key, value in (("lr_scale", 0.02), ("lr", 1e-3)):
        raw = load_profile("default")
        raw["persian_rug"]["train"][key] = value
        other = _grids(params.SECTION.parse(raw).persian_rug)
        assert (other.minutes_median == other.minutes_cap).all(), key


def test_the_paper_grids_cost_what_their_closed_forms_say(load_profile):
    pr = params.SECTION.parse(load_profile("paper")).persian_rug
    table = _grids(pr)
    axis = np.linspace(0.002001, 0.8, 20)
    for n_s in (128, 1024, 8192):
        n_d = np.array([max(1, int(n_s * r)) for r in axis])
        row = table.loc[n_s]
        assert row.models == 400 and row.sum_n_d == 20 * n_d.sum()
        assert row.tflop_per_step == pytest.approx(10 * 1024 * n_s * 20 * n_d.sum() / 1e12)
        kept = 20 * 4 * ((2 * n_d + 1) * n_s).sum() / 2 ** 30 if n_s < 8192 else 0.0
        # and the states of at most two models a p, of the widest, three times its weights
        states = 3 * 2 * 20 * 4 * (2 * n_d.max() + 1) * n_s / 2 ** 30 if n_s < 8192 else 0.0
        assert row.kept_gib == pytest.approx(kept + states)
    assert table.loc[8192].sum_n_d == 1_313_800                  # 110 TFLOP a step, 80 GiB
    assert table.loc[8192].tflop_per_step == pytest.approx(110.2, abs=0.05)
    # n_s 1024 is one stack: 2,445 steps of 1.72 TFLOP at 28 TFLOP/s and the launches of its 20
    # widths, 68 ms a step (fp32, measured)
    one = table.loc[1024]
    assert one.chunks == 1
    assert one.minutes_median == pytest.approx(2445 * (one.tflop_per_step / 28 + 6.5e-3) / 60)
    assert one.minutes_cap == pytest.approx(45000 * (one.tflop_per_step / 28 + 6.5e-3) / 60)
    # n_s 128 is launch-bound: nearly all launches, at its own median stopping step
    small = table.loc[128]
    assert small.minutes_median == pytest.approx(4320 * (6.5e-3 + small.tflop_per_step / 28) / 60)
    assert small.tflop_per_step / 28 < 6.5e-3 / 5
    # the cpu-paper grid's 6 widths: 2.0 ms a step at n_s 128 (measured on one H100: 1.8 ms)
    ladder = _grids(params.SECTION.parse(load_profile("cpu-paper")).persian_rug).loc[128]
    assert 60 * ladder.minutes_median / 4320 == pytest.approx(1.98e-3, abs=0.02e-3)


def test_the_gpu_profile_trains_faster_in_tf32_and_keeps_no_weights_at_8192(load_profile):
    paper = _grids(params.SECTION.parse(load_profile("paper")).persian_rug)
    gpu = _grids(params.SECTION.parse(load_profile("gpu")).persian_rug)
    assert gpu.loc[1024].minutes_median == pytest.approx(
        2445 * (paper.loc[1024].tflop_per_step / 48.5 + 6.5e-3) / 60)
    assert gpu.loc[8192].models == 80 and gpu.loc[8192].kept_gib == 0
    assert gpu.minutes_median.sum() < 15                  # of the 25-minute sitting
    assert gpu.gpu_gib.max() <= 64                        # within its memory budget


def test_disk_counts_the_kept_weights_once_where_dvc_links_its_cache(load_profile):
    pr = params.SECTION.parse(load_profile("paper")).persian_rug
    linked, copied = forecast.forecast(pr, copies=1), forecast.forecast(pr, copies=2)
    assert (linked.kept_gib > 0).any()
    assert np.allclose(copied.disk_gib - linked.disk_gib, linked.kept_gib)


def _readme_forecast(readme: str) -> dict[tuple[str, int], list[str]]:
    """The README's forecast table: (profile, n_s) → its numbers left to right, as printed (a
    pair "median / cap" gives two, a note in brackets none)."""
    rows = {}
    for line in readme.splitlines():
        cells = [c.strip() for c in line.strip("| ").split("|")]
        if cells[0] in ("paper", "gpu") and len(cells) == 11:
            rows[(cells[0], int(cells[1]))] = [v.replace(",", "") for c in cells[2:]
                                               for v in c.split(" (")[0].split(" / ")]
    return rows


def test_the_performance_page_states_the_forecast(root, load_profile):
    rows = _readme_forecast((root / "docs/performance.md").read_text())
    columns = ["models", "sum_n_d", "tflop_per_step", "chunks", "minutes_median", "minutes_cap",
               "gpu_gib", "host_gib", "kept_gib", "disk_gib"]
    for name in ("paper", "gpu"):
        table = _grids(params.SECTION.parse(load_profile(name)).persian_rug)
        assert {n_s for prof, n_s in rows if prof == name} == set(table.index)
        for n_s, row in table.drop(columns="stage").iterrows():
            stated = dict(zip(columns, rows[(name, n_s)], strict=True))
            for col in ("models", "sum_n_d", "chunks"):                  # counts: exact
                assert int(stated[col]) == row[col], (name, n_s, col)
            for col, text in stated.items():     # rounded to its last digit or to 2 significant
                last = 10.0 ** -len(text.partition(".")[2])
                assert float(text) == pytest.approx(row[col], rel=0.05, abs=last / 2), \
                    (name, n_s, col)


def test_a_step_is_timed_by_the_difference_of_two_runs():
    calls = []

    def run(steps):                      # a fixed cost of 0.05 s and 0.01 s a step
        calls.append(steps)
        import time
        time.sleep(0.05 + 0.01 * steps)
    assert rates.seconds_per_step(run, 2, 8, repeats=1, min_seconds=0.05) == pytest.approx(
        0.01, rel=0.3)
    assert calls == [2, 10]
    calls.clear()                        # too fast to time over 8 steps: 32 more
    rates.seconds_per_step(run, 2, 8, repeats=1, min_seconds=0.2)
    assert calls == [2, 10, 34]
    with pytest.raises(ValueError, match="must be ≥ 1"):
        rates.seconds_per_step(run, 0)


@pytest.mark.integration
def test_the_measured_forecast_times_the_stages_own_training(load_profile, monkeypatch):
    """On the smoke profile, on this machine: every training stage a row, each a positive
    time; the Persian Rug rate is the grid's useful work over its measured step. Each step
    timed over a tenth of a second (make forecast: 0.3 s; the test checks the rows, not the
    precision of the rates)."""
    from tms.incidental import forecast as ip_forecast
    from tms.notes import forecast as notes_forecast

    monkeypatch.setattr(rates, "seconds_per_step", functools.partial(
        rates.seconds_per_step, min_seconds=0.1))

    p = params.SECTION.parse(load_profile("smoke"))
    pr = forecast.forecast(p.persian_rug, copies=1, device="cpu")
    assert list(pr.stage) == ["pr_train@16", "pr_train@32", "pr_fig3", "pr_converge@16",
                              "pr_converge@32", "pr_converge_fig3"]
    assert (pr.gflop_s > 0).all() and (pr.minutes_median > 0).all()
    assert (pr.minutes_median <= pr.minutes_cap).all()
    ip = ip_forecast.forecast(p.incidental_polysemanticity, "cpu")
    assert list(ip.stage) == ["ip_collisions", "ip_noise", "ip_sweep", "ip_single@single",
                              "ip_single@single_printed"]
    assert (ip.ms_per_step > 0).all()
    assert ip.minutes.tolist() == pytest.approx((ip.ms_per_step * ip.steps / 6e4).tolist())
    notes = notes_forecast.forecast(p.autoencoding_notes, "cpu")
    assert list(notes.stage) == ["notes_linear", "notes_relu"] and (notes.minutes > 0).all()


def test_a_cpu_times_a_piece_of_a_large_stack_and_a_gpu_the_whole_stack():
    """At n_s 1024 and batch 1024 a model of n_d 300 is 3.1 GFLOP a step: six of them fit
    :data:`forecast.MEASURE_FLOPS` (2·10¹⁰), a seventh does not; a GPU's rate depends on the
    stack's size, so there all 40 are timed."""
    from tms.engine.grid import Instance, Schedule

    insts = [Instance(0.1, 300, k, 1e-3) for k in range(40)]
    sched = Schedule(1024, 1e-7, 200, 30, 1000)
    one = 10.0 * 1024 * 1024 * 300
    piece, flops = forecast.measured_piece(1024, insts, sched, list(range(40)), "cpu")
    assert len(piece) == 6 and flops == pytest.approx(6 * one)
    for device in ("cuda", "cuda:0"):
        piece, flops = forecast.measured_piece(1024, insts, sched, list(range(40)), device)
        assert len(piece) == 40 and flops == pytest.approx(40 * one)
    wide = [Instance(0.1, 4096, 0, 1e-3)]          # one model above the limit is still timed
    assert len(forecast.measured_piece(8192, wide, sched, [0], "cpu")[0]) == 1
