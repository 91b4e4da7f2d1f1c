"""Progress off a terminal: a line at most every 30 s, with the count, what the caller adds and
the time left, on stderr and as a record of the logger tms.core.progress.LOG."""

import logging

import pytest

from tms.core import progress


@pytest.fixture
def logged():
    """The records tms.core.progress logs during the test: (event, message, its fields)."""
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            fields = {k: getattr(record, k) for k in ("done", "total", "step")
                      if hasattr(record, k)}
            records.append((record.event, record.getMessage(), fields))

    handler = Keep()
    progress.LOG.addHandler(handler)
    progress.LOG.setLevel(logging.INFO)
    yield records
    progress.LOG.removeHandler(handler)
    progress.LOG.setLevel(logging.NOTSET)


def test_off_a_terminal_a_line_every_interval_with_the_time_left(capsys, logged):
    now = [0.0]
    with progress.Progress("pr_train@1024", 100, bound=True, clock=lambda: now[0],
                           terminal=False) as p:
        for step in range(1, 101):
            now[0] = step * 1.0                    # a step a second
            p.update(1, active=101 - step)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3                          # at 30, 60 and 90 s
    assert lines[0] == ("pr_train@1024: step 30 of 100 (30%), active 71, 0m30s elapsed, "
                        "at most 1m10s left")
    assert [m for _, m, _ in logged] == lines
    assert logged[0][0] == progress.PROGRESS and logged[0][2] == {"done": 30, "total": 100}


def test_steps_taken_up_from_a_checkpoint_count_as_done_but_not_in_the_rate(capsys):
    now = [0.0]
    with progress.Progress("x", 100, clock=lambda: now[0], terminal=False) as p:
        p.resume(60)                                # a checkpoint at step 60
        for step in range(1, 41):
            now[0] = step * 1.0                     # a step a second from here
            p.update(1)
            if step == 30:
                assert p.line() == "x: step 90 of 100 (90%), 0m30s elapsed, 0m10s left"
    assert p.done == 100
    with progress.Progress("y", 100, terminal=True) as bar:
        bar.resume(60)
        assert bar.bar.n == 60 and bar.bar.format_dict["initial"] == 60   # tqdm's rate from 60
    capsys.readouterr()


def test_on_a_terminal_the_bar_takes_the_place_of_the_lines_and_the_log_keeps_them(
        capsys, logged):
    now = [0.0]
    with progress.Progress("x", 10, clock=lambda: now[0], every=3.0, terminal=True) as p:
        p.resume(5)
        for step in range(6, 11):
            now[0] = float(step)
            p.update(1)
        p.write("x: a line of its own")
    err = capsys.readouterr().err
    assert "x: step" not in err and "x: resuming from the checkpoint at step 5" in err
    assert logged == [
        (progress.RESUMED, "x: resuming from the checkpoint at step 5", {"step": 5}),
        (progress.PROGRESS, "x: step 6 of 10 (60%), 0m06s elapsed, 0m24s left",
         {"done": 6, "total": 10}),
        (progress.PROGRESS, "x: step 9 of 10 (90%), 0m09s elapsed, 0m02s left",
         {"done": 9, "total": 10}),
        (progress.MESSAGE, "x: a line of its own", {})]


def test_a_heartbeat_off_a_terminal_says_the_work_goes_on(capsys, logged):
    import time
    with progress.heartbeat("report x", every=0.05, terminal=False):
        time.sleep(0.18)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) >= 2 and lines[0] == "report x: still running, 0m00s elapsed"
    assert [m for _, m, _ in logged] == lines
    with progress.heartbeat("report y", every=0.01, terminal=True):
        time.sleep(0.05)
    assert capsys.readouterr().err == ""


def test_a_run_that_its_measured_speed_puts_past_an_hour_says_so_once(capsys, logged):
    # min_steps 10^8 once ran "24h12m left" without a word: the estimate in FLOPs before the
    # run undercounts small models; after 10 s of work the measured speed decides
    now = [0.0]
    with progress.Progress("pr_converge@64", 10**8, bound=True, clock=lambda: now[0],
                           terminal=False) as p:
        for step in range(1, 200):
            now[0] = step * 0.1                     # ten steps a second
            p.update(1)
    warned = [(e, m) for e, m, _ in logged if e == progress.WARNING]
    assert warned == [(progress.WARNING, "warning: pr_converge@64: up to 2777h46m left at the "
                       "speed of its first 0m10s (100000000 steps at most); stop it (Ctrl-C) "
                       "if that is not meant")]
    assert warned[0][1] in capsys.readouterr().err
    with progress.Progress("quick", 1000, clock=lambda: now[0], terminal=False) as p:
        for step in range(1, 1000):
            now[0] += 0.1                           # 100 s in all: no warning
            p.update(1)
    assert len([e for e, _, _ in logged if e == progress.WARNING]) == 1
