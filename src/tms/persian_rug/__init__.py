"""*The Persian Rug: solving toy models of superposition using large-scale symmetries*.

- theory: the thermodynamic-limit loss of the symmetric model (section 4) and the optimal
  linear loss; bounds: the limits and bounds of section 4.3 / appendix D.
- rug: the Persian rug model (section 4.2.2, fig. 1, eq. 6).
- training: the trained (p, ratio) grids of one n_s; stats: statistics of trained weights
  (figs. 3–7); fits and scaling: the loss scalings of section 4.3.
- figures: figs. 1–7 and the bound figures; claims: the claims table.
"""
