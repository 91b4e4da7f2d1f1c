"""tms-repro: the library behind the DVC pipeline that rebuilds three papers on toy models of
superposition.

One package per concern; an arrow is "imports":

    pipeline ──> reporting ──> persian_rug, incidental, notes ──> engine ──> core

- :mod:`tms.pipeline` (top): the whole params file's schema and profiles, the stage runner,
  repro, the forecast command, verify, snapshots.
- :mod:`tms.reporting`: report notebooks, the site, the DAG, DVC plots, the browser check.
- :mod:`tms.persian_rug`, :mod:`tms.incidental`, :mod:`tms.notes`: one package per paper, each
  with its params schema, its science, the statistics of its trained weights, its figures,
  its claims and its errata.
- :mod:`tms.engine`: the batched training engine; knows no paper and no params file.
- :mod:`tms.core` (ground): the registry of papers (tms.core.papers), atomic artefacts (tables,
  arrays, JSON, figures), the machine checks, the claims framework and errata, progress records,
  the shared params types with the loader and its error format, devices, diverged models out of
  tables, and the files a script runs (code deps).
"""
