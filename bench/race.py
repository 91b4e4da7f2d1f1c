"""Measurement: footnote 6's race (``fig3.largest_wins``) with more models per m than a snapshot.

At the authors' 16 models per m the row decides no trend in rank at m ≥ 8n, where the wins are
few (tms.incidental.race.trend). This trains more: ``--models`` further models at each
``--m``, with the fig. 3 settings of the snapshot's params.yaml (incidental_polysemanticity.
collisions: n, λ, optimiser, steps) and the stage's own code (tms.incidental.training.
collisions), in stacks of the snapshot's ``instances``, seeds from ``--seed-from`` on; adds their
rows to the snapshot's table and judges the claim on the whole with the claims code
(tms.incidental.claims). Prints the features won by ranks 1–8 at init per m, the snapshot's
alone and with the new models, and the row. ``--out`` (CSV) is rewritten atomically as each
stack ends; a rerun with the same arguments skips the stacks already there.

    .venv/bin/python bench/race.py results/ladder-settled --m 2048 4096 --models 48 48 \\
        --out docs/measurements/race-more-models-cpu.csv
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
from pathlib import Path

import pandas as pd

from tms.core import divergence
from tms.core.device import resolve_device
from tms.incidental import claims, params, race, training
from tms.incidental.evidence import Outputs

CLAIM = "fig3.largest_wins"


def stacks(ms: list[int], models: list[int], size: int, seed_from: int
           ) -> list[tuple[int, int, int]]:
    """(m, first seed, models) of each stack to train: ``models[j]`` models at ``ms[j]`` in
    stacks of at most ``size``, seeds consecutive from ``seed_from`` over every stack. Raises
    ValueError unless ``ms`` and ``models`` pair up and every count is positive."""
    if len(ms) != len(models) or min(models, default=0) < 1 or size < 1:
        raise ValueError(f"--m {ms} and --models {models} must pair up, each count ≥ 1")
    out, seed = [], seed_from
    for m, count in zip(ms, models):
        while count > 0:
            k = min(size, count)
            out.append((m, seed, k))
            seed, count = seed + k, count - k
    return out


def snapshot_outputs(snapshot: Path) -> Outputs:
    """What the incidental claims read from the snapshot's ``data/`` and params.yaml. Raises
    FileNotFoundError where an output is missing, SystemExit where its fig. 3 table predates
    the winners' ranks (columns won_rank1…)."""
    ip = params.SECTION.load(snapshot / "params.yaml")
    with contextlib.chdir(snapshot):                 # its data/ where the stage outputs lie
        o = Outputs.load(ip)
    if "won_rank1" not in o.collisions:
        raise SystemExit(f"{snapshot}'s fig. 3 table has no winners' ranks (won_rank1…): "
                         "its ip_collisions predates them")
    return o


def train_more(o: Outputs, ms: list[int], models: list[int], seed_from: int,
               out: Path) -> pd.DataFrame:
    """The new models' rows (tms.incidental.training.COLLISION_COLUMNS; ``instance`` is the
    seed less collisions.seed, as in the stage's table), trained stack by stack (:func:`stacks`,
    the fig. 3 settings of ``o.ip``) unless ``out`` already holds that stack's seeds at its m.
    Raises ValueError if a planned seed is one of the snapshot's, and what
    tms.incidental.training.collisions raises (a stack that does not fit the device)."""
    cfg = o.ip.collisions
    plan = stacks(ms, models, cfg.instances, seed_from)
    wanted = {(m, s) for m, first, k in plan for s in range(first, first + k)}
    if clash := {s for _, s in wanted} & set(o.collisions.seed):
        raise ValueError(f"seeds {sorted(clash)[:5]}… are the snapshot's: raise --seed-from")
    done = (pd.read_csv(out).drop_duplicates(["m", "seed"], keep="last") if out.is_file()
            else o.collisions.iloc[:0])
    for m, first, k in plan:
        seeds = range(first, first + k)
        if set(seeds) <= set(done.seed[done.m == m]):
            continue
        print(f"m {m}: {k} models, seeds {first}–{first + k - 1}", flush=True)
        rows = training.collisions(cfg.model_copy(update={"m": [m], "instances": k,
                                                          "seed": first}),
                                   resolve_device(o.ip.device), o.ip.compute.precision)
        rows["instance"] = rows.seed - cfg.seed
        done = pd.concat([done[~((done.m == m) & done.seed.isin(seeds))], rows],
                         ignore_index=True)
        done.to_csv(f"{out}.tmp", index=False)
        os.replace(f"{out}.tmp", out)
    keep = pd.Series(list(zip(done.m, done.seed))).isin(wanted).to_numpy()
    return done[keep].astype(o.collisions.dtypes.to_dict())


def judged(o: Outputs, more: pd.DataFrame) -> dict:
    """The row of :data:`CLAIM` on the snapshot's fig. 3 table with ``more`` rows added
    (diverged models left out, as the claims stage leaves them)."""
    kept = divergence.split(more)[0]
    return claims.CLAIMS.row(CLAIM, dataclasses.replace(
        o, collisions=pd.concat([o.collisions, kept], ignore_index=True)))


def wins(table: pd.DataFrame) -> pd.DataFrame:
    """Features won by ranks 1–8 at init per m (tms.incidental.race.wins_by_m), and the
    models."""
    return race.wins_by_m(table).assign(models=table.groupby("m").size())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("snapshot", type=Path, help="a results snapshot with ip_collisions' table")
    ap.add_argument("--m", type=int, nargs="+", required=True, help="neurons m, each a stack")
    ap.add_argument("--models", type=int, nargs="+", required=True,
                    help="further models at each --m")
    ap.add_argument("--seed-from", type=int, default=1000, help="the new models' first seed")
    ap.add_argument("--out", type=Path, required=True, help="CSV of the new models' rows")
    a = ap.parse_args()
    o = snapshot_outputs(a.snapshot)                  # before any training
    a.out.parent.mkdir(parents=True, exist_ok=True)
    more = train_more(o, a.m, a.models, a.seed_from, a.out)
    print("the snapshot's models:\n" + wins(o.collisions).to_string())
    print("with the new ones:\n" + wins(pd.concat([o.collisions, more])).to_string())
    row = judged(o, more)
    print(f"{row['verdict']} ({row.get('direction')}): {row['ours']}\n"
          f"{row.get('inconclusive') or ''}")


if __name__ == "__main__":
    main()
