"""Checkpointed training resumes with the same bytes as an uninterrupted run
(tms.engine.checkpoint)."""

import dataclasses

import numpy as np
import pytest

from tms.engine import checkpoint, steps, train
from tms.engine.grid import Instance, Schedule, StackSpec
from tms.engine.train import train_grid

SCHED = Schedule(batch_size=32, adam_eps=1e-7, window=15, check_every=5, max_steps=240)
# some instances stop early, so later checkpoints hold finished results too
INSTS = [Instance(0.3, 2, 0, 2e-2), Instance(0.1, 2, 1, 5e-3), Instance(0.5, 6, 2, 1e-2),
         Instance(0.2, 6, 3, 3e-2), Instance(0.4, 6, 4, 1e-3)]


class Killed(Exception):
    """Stands for a kill right after a checkpoint was written."""


def _same_bytes(a: list[train.Result], b: list[train.Result]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        for f in dataclasses.fields(train.Result):
            u, v = getattr(x, f.name), getattr(y, f.name)
            if isinstance(u, np.ndarray):
                assert u.dtype == v.dtype and u.shape == v.shape and u.tobytes() == v.tobytes()
            else:
                assert u == v


@pytest.mark.parametrize("kill_after, budget", [(1, None), (3, None), (5, None), (4, 0.02)],
                         ids=["early", "later", "when done", "second of four chunks"])
def test_resumed_training_gives_the_same_bytes(tmp_path, monkeypatch, capsys, kill_after,
                                               budget):
    reference = train_grid(StackSpec(12, SCHED), INSTS)
    assert any(r.stopped for r in reference) and any(r.steps > 100 for r in reference)
    assert budget is None or len(train.plan_chunks(12, INSTS, SCHED, budget)) == 4
    ckpt = checkpoint.for_stage("pr_train@12", 40, "params", root=tmp_path)
    save, saves = checkpoint.Checkpoints.save, []

    def save_then_die(self, name, state):
        save(self, name, state)
        saves.append(state["done"])
        if len(saves) == kill_after:
            raise Killed

    monkeypatch.setattr(checkpoint.Checkpoints, "save", save_then_die)
    with pytest.raises(Killed):
        train_grid(StackSpec(12, SCHED), INSTS, memory_budget_mb=budget, ckpt=ckpt)
    monkeypatch.setattr(checkpoint.Checkpoints, "save", save)
    real, calls = steps.loss_and_grads, []

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)
    monkeypatch.setattr(steps, "loss_and_grads", counted)
    train_grid(StackSpec(12, SCHED), INSTS, memory_budget_mb=budget)       # from scratch
    fresh, calls[:] = len(calls), []
    resumed = train_grid(StackSpec(12, SCHED), INSTS, memory_budget_mb=budget, ckpt=ckpt)
    assert len(calls) < fresh              # the saved steps were not trained again
    if not saves[-1]:                                  # killed mid-stack: it resumed there
        assert "resuming from the checkpoint at step" in capsys.readouterr().err
    _same_bytes(resumed, reference)


def test_finished_stacks_are_not_trained_again(tmp_path, monkeypatch):
    ckpt = checkpoint.for_stage("s", 1000, "params", root=tmp_path)
    first = train_grid(StackSpec(12, SCHED), INSTS, ckpt=ckpt)

    def no_training(*args):
        raise AssertionError("a finished stack was trained again")

    monkeypatch.setattr(steps, "loss_and_grads", no_training)
    _same_bytes(train_grid(StackSpec(12, SCHED), INSTS, ckpt=ckpt), first)


def test_checkpoints_are_keyed_by_params_and_cleared(tmp_path):
    assert checkpoint.for_stage("s", 0, "params", root=tmp_path) is None
    with pytest.raises(ValueError, match="checkpoint_every must be >= 0"):
        checkpoint.for_stage("s", -1, "params", root=tmp_path)
    a = checkpoint.for_stage("s", 10, "params a", root=tmp_path)
    a.save("x", {"done": True})
    assert a.load("x") == {"done": True} and a.load("y") is None
    b = checkpoint.for_stage("s", 10, "params b", root=tmp_path)
    assert b.directory != a.directory and not a.directory.exists()   # other params: gone
    assert checkpoint.digest(checkpoint.code_digest(), "params b") == b.directory.name
    assert not a.due(0, 9) and a.due(0, 10) and a.due(5, 12) and not a.due(10, 19)
    b.save("x", {"done": True})
    assert [p.name for p in b.directory.iterdir()] == ["x.pt"]     # no temporary file left
    b.clear()
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("damage", ["flipped bit", "truncated", "not a checkpoint"])
def test_a_damaged_checkpoint_is_discarded_and_training_restarts(tmp_path, monkeypatch, capsys,
                                                                 damage):
    reference = train_grid(StackSpec(12, SCHED), INSTS)
    ckpt = checkpoint.for_stage("pr_train@12", 40, "params", root=tmp_path)
    save = checkpoint.Checkpoints.save

    def save_then_die(self, name, state):
        save(self, name, state)
        raise Killed

    monkeypatch.setattr(checkpoint.Checkpoints, "save", save_then_die)
    with pytest.raises(Killed):
        train_grid(StackSpec(12, SCHED), INSTS, ckpt=ckpt)
    monkeypatch.setattr(checkpoint.Checkpoints, "save", save)
    (path,) = ckpt.directory.glob("stack-*.pt")
    data = bytearray(path.read_bytes())
    if damage == "flipped bit":
        data[len(data) // 2] ^= 0x10
    elif damage == "truncated":
        data = data[:len(data) // 3]
    else:
        data = bytearray(b"PK\x03\x04" + data[4:])
    path.write_bytes(bytes(data))
    resumed = train_grid(StackSpec(12, SCHED), INSTS, ckpt=ckpt)
    out = capsys.readouterr()
    assert out.err.count("discarding the checkpoint") == 1 and str(path) in out.err
    assert "resuming" not in out.out
    _same_bytes(resumed, reference)


def test_checkpoints_of_other_code_are_not_resumed(tmp_path, monkeypatch):
    a = checkpoint.for_stage("s", 10, "params", root=tmp_path)
    monkeypatch.setattr(checkpoint, "code_digest", lambda: "edited code")
    b = checkpoint.for_stage("s", 10, "params", root=tmp_path)
    assert b.directory != a.directory and not a.directory.exists()


def test_a_file_where_the_checkpoints_folder_goes_is_named_before_training(tmp_path):
    from tms.core.schema import ParamsError

    root = tmp_path / ".checkpoints"
    root.write_text("not a folder")                         # once: FileExistsError's traceback
    with pytest.raises(ParamsError, match=r"\.checkpoints is a file where the checkpoints' "
                                          r"folder goes: remove it \(`rm .*\.checkpoints`"):
        checkpoint.for_stage("pr_train@16", 10, "params", root=root)
    root.unlink()
    root.mkdir()
    (root / "pr_train@16").write_text("")                    # one level down, the same
    with pytest.raises(ParamsError, match="pr_train@16 is a file"):
        checkpoint.for_stage("pr_train@16", 10, "params", root=root)
    assert checkpoint.for_stage("other", 10, "params", root=root).directory.is_dir()
