"""A stage that would not fit this machine's memory stops before any work, with the numbers
(tms.core.machine), for every kind of training stack and the stages that sample large
arrays; a training that could take more than an hour says so."""

import importlib.util
import re

import pytest

from tms.core import machine
from tms.core.schema import ParamsError
from tms.engine import checkpoint
from tms.engine.grid import Instance, Schedule
from tms.incidental import training as ip_training
from tms.notes import training as notes_training
from tms.persian_rug import training as pr_training
from tms.pipeline import params


def test_available_memory_is_read_and_compared():
    have = machine.available_bytes("cpu")
    assert 2**26 < have < 2**50
    machine.check_fits(have // 4, "cpu", "a quarter of it", "-")
    with pytest.raises(ParamsError) as err:
        machine.check_fits(2 * have, "cpu", "twice of it", "ask for less")
    assert str(err.value).startswith("twice of it needs about ")
    assert "GiB, and cpu has" in str(err.value) and str(err.value).endswith(": ask for less")


@pytest.fixture
def small_machine(monkeypatch):
    """A machine with 256 bytes free: every training stack is too large."""
    monkeypatch.setattr(machine, "available_bytes", lambda device: 256)


def _never(*args, **kwargs):
    raise AssertionError("training started")


def test_every_training_stack_is_checked_before_it_trains(small_machine, load_profile,
                                                          monkeypatch):
    p = params.SECTION.parse(load_profile("smoke"))
    monkeypatch.setattr(pr_training, "train_chunks", _never)
    monkeypatch.setattr(notes_training, "train_grid", _never)
    monkeypatch.setattr(ip_training, "train", _never)
    pr = p.persian_rug
    sched = Schedule.of(pr.train)
    points = pr_training.expand(16, pr.grid.at(16).p, pr.grid.at(16).ratio, 1)
    with pytest.raises(ParamsError, match="training n_s = 16"):
        pr_training.train_and_score(pr_training.GridSpec(16, 0, 0.01, sched, 0, 65536), points,
                                    True)
    ip = p.incidental_polysemanticity
    for run, key in [(ip_training.collisions, "collisions"), (ip_training.noise_runs, "noise"),
                     (ip_training.sweep, "sweep"), (ip_training.single, "single")]:
        with pytest.raises(ParamsError, match=f"training incidental_polysemanticity.{key}"):
            run(getattr(ip, key))
    an = p.autoencoding_notes
    r = an.relu
    relu_run = notes_training.Run(0, r.train.lr, Schedule.of(r.train, r.max_steps), 0, 65536)
    with pytest.raises(ParamsError, match="training autoencoding_notes.relu"):
        notes_training.relu_tables(r.D, r.d, r.S, r.seeds, relu_run, 100, 0)
    lin = an.linear
    lin_run = notes_training.Run(0, lin.train.lr, Schedule.of(lin.train, max(lin.steps)), 0,
                                 65536)
    with pytest.raises(ParamsError, match="training autoencoding_notes.linear"):
        notes_training.linear_table(lin.D, lin.d, lin.S, lin.steps, an.scale_min, lin_run)


def test_a_run_that_can_take_more_than_an_hour_says_so(monkeypatch, capsys, load_profile):
    machine.warn_if_long(3600 * machine.SLOWEST, "cpu", "quick")   # no run can take an hour
    assert capsys.readouterr().err == ""
    assert machine.fp32_flops("cpu") > machine.SLOWEST
    monkeypatch.setattr(machine, "fp32_flops", lambda device: 1e9)
    machine.warn_if_long(7.2e12, "cpu", "slow")
    assert capsys.readouterr().err == ("warning: slow: up to 2 h at this machine's fp32 matmul "
                                       "speed (1 GFLOP/s on cpu; 7.2e+12 FLOPs to the step cap, "
                                       "fewer if the stopping rule ends it sooner)\n")
    # every kind of training stack predicts its time: here on a machine of 1 FLOP/s
    monkeypatch.setattr(machine, "SLOWEST", 0.0)
    monkeypatch.setattr(machine, "fp32_flops", lambda device: 1.0)
    monkeypatch.setattr(pr_training, "train_chunks", _never)
    monkeypatch.setattr(ip_training, "train", _never)
    p = params.SECTION.parse(load_profile("smoke"))
    pr = p.persian_rug
    points = pr_training.expand(16, pr.grid.at(16).p, pr.grid.at(16).ratio, 1)
    with pytest.raises(AssertionError, match="training started"):
        spec = pr_training.GridSpec(16, 0, 0.01, Schedule.of(pr.train), 0, 65536)
        pr_training.train_and_score(spec, points, True)
    with pytest.raises(AssertionError, match="training started"):
        ip_training.noise_runs(p.incidental_polysemanticity.noise)
    err = capsys.readouterr().err
    assert "warning: training 4 models of n_s = 16: up to " in err
    assert "warning: training incidental_polysemanticity.noise (8 models of n = 4" in err


@pytest.mark.parametrize("script, shown", [
    ("stages/persian_rug/pr_rug.py", "the rug (n_s = 32, n_fit = 256) needs about"),
    ("stages/notes/notes_data.py", "sampling autoencoding_notes.moments (n_vectors = 2000"),
])
def test_the_stages_that_sample_or_build_large_arrays_check_the_machine_first(
        small_machine, tmp_path, monkeypatch, root, load_profile, script, shown):
    spec = importlib.util.spec_from_file_location("stage_under_test", root / script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ParamsError, match=re.escape(shown)):
        module.main(module.params.SECTION.parse(load_profile("smoke")))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("config, local, copies", [
    (None, None, 2),                                        # DVC's default: reflink, else copy
    ("[cache]\n    type = reflink,copy\n", None, 2),
    ("[cache]\n    type = hardlink,symlink\n", None, 1),         # this project's
    ("[cache]\n    type = copy,hardlink\n", None, 2),       # a copy comes first
    ("[cache]\n    type = reflink,hardlink,copy\n", None, 2),   # a directory is copied
    ("[core]\n    analytics = false\n", "[cache]\n    type = symlink\n", 1),
])
def test_disk_copies_follow_dvc_cache_type(tmp_path, config, local, copies):
    (tmp_path / ".dvc").mkdir()
    for name, text in ((".dvc/config", config), (".dvc/config.local", local)):
        if text is not None:
            (tmp_path / name).write_text(text)
    assert machine.disk_copies(tmp_path) == copies


def test_weights_too_large_for_the_disk_stop_before_training(load_profile, monkeypatch,
                                                             tmp_path):
    monkeypatch.chdir(tmp_path)                  # no .dvc/config here: two copies
    free = 3000
    monkeypatch.setattr(machine.shutil, "disk_usage",
                        lambda path: machine.shutil._ntuple_diskusage(10**15, 10**15, free))
    monkeypatch.setattr(pr_training, "train_chunks", _never)
    pr = params.SECTION.parse(load_profile("smoke")).persian_rug
    points = pr_training.expand(16, pr.grid.at(16).p, pr.grid.at(16).ratio, 1)
    sched = Schedule.of(pr.train)
    weights = 4 * sum((2 * pt.n_d + 1) * 16 for pt in points)
    assert 2 * weights > free

    def train(ckpt=None, keep=None):
        spec = pr_training.GridSpec(16, 0, 0.01, sched, 0, 65536)
        plan = pr_training.plan_grid(spec, points, ckpt, keep)
        pr_training.train_and_score(spec, points, True, ckpt, plan=plan)

    with pytest.raises(ParamsError) as err:
        train()
    message = str(err.value)
    assert message.startswith(f"writing the kept weights of {len(points)} of {len(points)} "
                              f"models of n_s = 16 needs")
    assert f"{2 * weights / machine.GiB:.3g} GiB of disk" in message
    assert "keep_weights" in message and "cache.type hardlink,symlink" in message
    # keeping one model's weights fits; its checkpoints, which hold every trained stack's
    # state and the kept weights, do not
    one = [points[0]]
    with pytest.raises(AssertionError, match="training started"):
        train(keep=lambda pt: pt in one)
    ckpt = checkpoint.Checkpoints(tmp_path, 1)
    need = (2 * pr_training.weights.nbytes(16, [points[0].n_d])
            + pr_training.ckpt_bytes(16, [Instance(pt.p, pt.n_d, 0, 0.01) for pt in points],
                                     [list(range(len(points)))], one, sched))
    assert need > free
    with pytest.raises(ParamsError, match=f"{need / machine.GiB:.3g} GiB of disk "
                                                 r"\(with DVC's cache copy and the "
                                                 r"checkpoints\)"):
        train(keep=lambda pt: pt in one, ckpt=ckpt)
    # where DVC links its cache (this project's .dvc/config), the weights count once, and the
    # message does not suggest linking
    (tmp_path / ".dvc").mkdir()
    (tmp_path / ".dvc/config").write_text("[cache]\n    type = hardlink,symlink\n")
    free = weights + 1
    with pytest.raises(AssertionError, match="training started"):
        train()
    free = weights - 1
    with pytest.raises(ParamsError) as err:
        train()
    assert f"{weights / machine.GiB:.3g} GiB of disk, and" in str(err.value)
    assert "cache.type" not in str(err.value)
