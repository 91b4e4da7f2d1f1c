"""Measurement: footnote 6's race (``fig3.largest_wins``) with more models per m than a snapshot.

At the authors' 16 models per m the row reads inconclusive where no rank leads (m ≥ 4n) and
says how many models per m would decide it if each rank kept its measured share of the wins
(tms.incidental.race.times_to_decide). This trains them: ``--models`` further models at each
``--m``, with the fig. 3 settings of the snapshot's params.yaml (incidental_polysemanticity.
collisions: n, λ, optimiser, steps) and the stage's own code (tms.incidental.training.
collisions), in stacks of the snapshot's ``instances``, seeds from ``--seed-from`` on (past every
seed of its table); adds their rows to the snapshot's table and judges the claim on the whole
with the claims code (tms.incidental.claims). Prints the features won by ranks 1–8 at init per
m, the snapshot's alone and with the new models, and the row. Each stack's rows are appended to
``--out`` (CSV) as it ends; a rerun skips the stacks already there.

    .venv/bin/python bench/race.py results/ladder-settled --m 2048 4096 --models 16 48 \\
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
from tms.incidental import claims, params, training
from tms.incidental.evidence import Outputs


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


def train_more(snapshot: Path, ms: list[int], models: list[int], seed_from: int,
               out: Path) -> pd.DataFrame:
    """The new models' rows (tms.incidental.training.COLLISION_COLUMNS), trained stack by stack
    (:func:`stacks`) unless ``out`` already holds that stack's seeds at its m; each stack's
    rows appended to ``out`` as it ends. Raises ValueError if a seed is one of the snapshot's."""
    ip = params.SECTION.load(snapshot / "params.yaml")
    cfg = ip.collisions
    have = pd.read_parquet(snapshot / "data" / "incidental_polysemanticity" /
                           "collisions.parquet")
    if have.seed.max() >= seed_from:
        raise ValueError(f"--seed-from {seed_from} is not past the snapshot's seeds "
                         f"(up to {have.seed.max()})")
    done = pd.read_csv(out) if out.is_file() else have.iloc[:0]
    for m, seed, k in stacks(ms, models, cfg.instances, seed_from):
        if set(range(seed, seed + k)) <= set(done[done.m == m].seed):
            continue
        print(f"m {m}: {k} models, seeds {seed}–{seed + k - 1}", flush=True)
        rows = training.collisions(cfg.model_copy(update={"m": [m], "instances": k,
                                                          "seed": seed}),
                                   resolve_device(ip.device), ip.compute.precision)
        rows.to_csv(out, mode="a", header=not out.is_file(), index=False)
        done = pd.concat([done, rows], ignore_index=True)
    return done[done.m.isin(ms)]


def judged(snapshot: Path, more: pd.DataFrame) -> dict:
    """The row of ``fig3.largest_wins`` on the snapshot's fig. 3 table with ``more`` rows
    added (diverged models left out, as the claims stage leaves them)."""
    ip = params.SECTION.load(snapshot / "params.yaml")
    with contextlib.chdir(snapshot):                 # its data/ where the stage outputs lie
        o = Outputs.load(ip)
    kept = divergence.split(more.astype(o.collisions.dtypes.to_dict()))[0]
    return claims.CLAIMS.row("fig3.largest_wins", dataclasses.replace(
        o, collisions=pd.concat([o.collisions, kept], ignore_index=True)))


def wins(table: pd.DataFrame) -> pd.DataFrame:
    """Features won by ranks 1–8 at init per m, and the models."""
    ranks = [c for c in table if c.startswith("won_rank")]
    return table.groupby("m")[ranks].sum().assign(models=table.groupby("m").size())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("snapshot", type=Path, help="a results snapshot with ip_collisions' table")
    ap.add_argument("--m", type=int, nargs="+", required=True, help="neurons m, each a stack")
    ap.add_argument("--models", type=int, nargs="+", required=True,
                    help="further models at each --m")
    ap.add_argument("--seed-from", type=int, default=1000, help="the new models' first seed")
    ap.add_argument("--out", type=Path, required=True, help="CSV of the new models' rows")
    a = ap.parse_args()
    os.makedirs(a.out.parent, exist_ok=True)
    more = train_more(a.snapshot, a.m, a.models, a.seed_from, a.out)
    have = pd.read_parquet(a.snapshot / "data" / "incidental_polysemanticity" /
                           "collisions.parquet")
    print("the snapshot's models:\n" + wins(have).to_string())
    print("with the new ones:\n" + wins(pd.concat([have, more])).to_string())
    row = judged(a.snapshot, more)
    print(f"{row['verdict']} ({row.get('direction')}): {row['ours']}\n"
          f"{row.get('inconclusive') or ''}")


if __name__ == "__main__":
    main()
