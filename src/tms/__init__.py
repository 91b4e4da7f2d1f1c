"""tms-repro: the library behind the DVC pipeline that rebuilds three papers on toy models of
superposition.

One package per concern; an arrow is "imports":

    reporting ──> persian_rug, incidental, notes ──> engine ──> pipeline

- :mod:`tms.pipeline`: params schema and profiles, the stage runner, atomic artefacts
  (tables, arrays, JSON, figures, claims tables), diverged models out of tables.
- :mod:`tms.engine`: the batched training engine; knows no paper.
- :mod:`tms.persian_rug`, :mod:`tms.incidental`, :mod:`tms.notes`: one package per paper, each
  with its science, the statistics of its trained weights, its figures and its claims.
- :mod:`tms.reporting`: report notebooks, the site, the DAG, DVC plots, errata, the browser check.
"""
