"""``make forecast [PROFILE=…]``: the predicted cost of a profile's trained Persian Rug grids
(tms.persian_rug.forecast), printed one row per n_s, for params.yaml or a profile of profiles/.

    python -m tms.pipeline.forecast [PROFILE]     # default: params.yaml; or paper, gpu
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tms.core import machine
from tms.persian_rug import forecast
from tms.pipeline import params, profiles


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("profile", nargs="?", help="a profile of profiles/ (default: params.yaml)")
    args = ap.parse_args(argv)
    raw = (None if args.profile is None else
           profiles.profile(profiles.default_params(), Path("profiles") / f"{args.profile}.yaml"))
    pr = params.SECTION.load() if raw is None else params.SECTION.parse(raw)
    table = forecast.forecast(pr.persian_rug, machine.disk_copies())
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
