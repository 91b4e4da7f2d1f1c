"""The notes on toy autoencoding (propositions and equations, no figures of their own).

Symbols are the notes': D features (n_s), d hidden units (n_d), sparsity S (p = 1 − S), A = W_out,
B = W_in.

- theory: section 1, critical points of the linear autoencoder x ↦ ABx.
- data: sections 2.1 and 3.1, the moments of the sparse data and its skeletons.
- flows: section 2.2, gradients, the tied-weight flow and its energy.
- training: models trained by the engine (Proposition 1 / Corollary 2, section 3).
- figures: one figure per proposition or equation; claims: the claims table.
"""
