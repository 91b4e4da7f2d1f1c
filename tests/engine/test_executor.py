import numpy as np
import pytest
import ray

from tms.engine import executor
from tms.engine.grid import Instance, Schedule, StackSpec, plan_chunks
from tms.engine.train import train_grid


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.mark.integration
def test_ray_tasks_give_the_results_of_the_local_executor(local_ray):
    # two seed indices × three p: six groups of equal inputs, cut into several chunks that
    # run as Ray tasks (Ray sets one OMP thread in its workers; the driver here has torch's
    # default): the very same bytes as the in-process run of the whole grid
    sched = Schedule(batch_size=32, adam_eps=1e-7, window=10, check_every=5, max_steps=30)
    insts = [Instance(p, d, 10 * s + k, 1e-2, s) for s in (0, 1)
             for k, (p, d) in enumerate([(p, d) for p in (0.1, 0.3, 0.6) for d in (3, 6)])]
    budget = 0.03
    assert len(plan_chunks(12, insts, sched, budget)) >= 2
    local = train_grid(StackSpec(12, sched), insts)
    remote = train_grid(StackSpec(12, sched), insts, memory_budget_mb=budget,
                        executor=executor.ray_map("cpu"))
    for a, b in zip(local, remote):
        for name in ("W_in", "W_out", "b", "train_losses"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        assert (a.steps, a.stopped) == (b.steps, b.stopped)


def test_an_executor_by_name_and_a_cluster_that_does_not_answer(monkeypatch):
    assert executor.named("local", "cpu") is executor.local_map
    with pytest.raises(ValueError, match="'dask'"):
        executor.named("dask", "cpu")

    def refuse(address=None, **kwargs):
        raise ConnectionError(f"Could not find any running Ray instance at {address}.\nmore")
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", refuse)
    ray_run = executor.named("ray", "cpu", "ray://nowhere:10001")
    with pytest.raises(ConnectionError, match="no Ray cluster answers at 'ray://nowhere:10001' "
                                              r"\(Could not find any running Ray instance"):
        list(ray_run(len, [[1]]))
    # a training stage finds out while it plans, before any work, naming the key
    from tms.core.schema import Compute, ParamsError
    from tms.persian_rug import training

    spec = training.GridSpec(16, 0, 1e-2, Schedule(32, 1e-7, 10, 5, 20), 1, 64,
                             compute=Compute(executor="ray", ray_address="ray://nowhere:10001"))
    with pytest.raises(ParamsError, match="persian_rug.compute.ray_address"):
        training.plan_grid(spec, training.expand(16, [0.1], [0.25], 1))
