"""*Incidental polysemanticity: a new obstacle for mechanistic interpretability*.

Symbols are the paper's: n features, m neurons, W (n × m) tied weights, λ (l1), σ (noise).

- theory: closed forms of section 2.1 and appendix C with their Monte Carlo checks.
- sparsification: the single-encoding ODE of figs. 2 and 7.
- training: the trained experiments of figs. 3–6; stats: statistics of trained W.
- figures: figs. 1–7; claims: the claims table.
"""
