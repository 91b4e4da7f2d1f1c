"""``make forecast [PROFILE=…]``: the predicted time and memory of every training stage of a
profile, from rates measured on this machine (each paper's ``forecast`` module: each stage's own
training code timed for a few steps on the profile's device), for params.yaml or a profile of
profiles/, before any run. Printed one table per paper (the registry's, tms.core.papers), then
the sum; written to ``logs/forecast.csv`` (stage, predicted seconds where a stopping rule
ends training both at the median stopping step and with every model at its step cap, and the
digest of the params it was made for), which ``make snapshot`` puts beside each stage's measured
time when the params are the run's.

    python -m tms.pipeline.forecast [PROFILE]           # measured here (a minute or two)
    python -m tms.pipeline.forecast [PROFILE] --h100    # the Persian Rug grids on one H100
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import pandas as pd

from tms.core import io, papers
from tms.core.device import resolve_device
from tms.core.schema import ParamsError
from tms.persian_rug import forecast as pr_forecast
from tms.persian_rug.params import KEY as PR
from tms.pipeline import params, profiles

#: Where the predicted seconds of each stage are written (read by tms.pipeline.snapshot).
FORECAST_FILE = Path("logs/forecast.csv")


def params_digest(p: params.Params) -> str:
    """A digest of validated params (the whole file's): equal for equal values, whatever their
    layout in the file."""
    return hashlib.sha256(p.model_dump_json().encode()).hexdigest()[:16]


def _show(title: str, table: pd.DataFrame) -> None:
    print(f"\n{title}")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))


def _seconds(table: pd.DataFrame) -> pd.DataFrame:
    """stage, seconds (at the median stopping step where a stopping rule ends training) and
    seconds_cap (every model at its step cap) of a paper's forecast table."""
    return pd.DataFrame({"stage": table.stage,
                         "seconds": 60 * table.get("minutes_median", table.get("minutes")),
                         "seconds_cap": 60 * table.get("minutes_cap", table.get("minutes"))})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("profile", nargs="?", help="a profile of profiles/ (default: params.yaml)")
    ap.add_argument("--h100", action="store_true",
                    help="the Persian Rug grids at the rates of one H100, nothing measured")
    args = ap.parse_args(argv)
    try:
        raw = (None if args.profile is None else profiles.profile(
            profiles.default_params(), profiles.profile_path(args.profile)))
        p = params.SECTION.load() if raw is None else params.SECTION.parse(raw)
        if args.h100:
            _show("Persian Rug, trained grids on one H100 (its measured rates)",
                  pr_forecast.forecast(p.persian_rug))
            return 0
        devices = {p_.key: resolve_device(getattr(p, p_.key).device) for p_ in papers.PAPERS}
    except (ParamsError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"measuring each training stage for a few steps on this machine "
          f"({', '.join(sorted(set(devices.values())))}) ...", flush=True)
    tables = {}
    for paper in papers.PAPERS:
        device = devices[paper.key]
        tables[paper.key] = paper.module("forecast").forecast(getattr(p, paper.key),
                                                              device=device)
        _show(f"{paper.title.split(':')[0]} on {device}", tables[paper.key])
    seconds = pd.concat([_seconds(t) for t in tables.values()], ignore_index=True).assign(
        params=params_digest(p))
    io.write_csv(seconds, FORECAST_FILE)
    pr = tables[PR]
    print(f"\ntraining stages: {seconds.seconds.sum() / 60:.1f} min predicted, the Persian Rug "
          f"models {pr.minutes_median.sum():.1f} min of it at the median stopping step "
          f"({pr.minutes_cap.sum():.1f} min if every model ran to its cap); written to "
          f"{FORECAST_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
