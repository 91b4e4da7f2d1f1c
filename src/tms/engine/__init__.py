"""The batched training engine: many small models trained in lockstep; it knows no paper.

- sampler: the sparse feature data (x = c·u, c ~ Bernoulli(p), u ~ U[0, 1]) and the generators.
- models: instance-stacked ReLU-output / linear autoencoders (padded and ragged), hand-written
  loss and gradients: split into pieces for the CPU's threads, or a bucket of equal n_d at a time
  with batched matmuls (the GPU path).
- precision: the arithmetic of the training products (fp32, tf32, bf16).
- optim: batched Adam with one learning rate per instance (the grids); torch's Adam, AdamW and
  SGD over a stack that shares one (the tied autoencoders).
- train: the trainer (stopping rule, divergence, chunks within a memory budget, held-out loss).
- tied: the tied-weight autoencoder with l1 and hidden-layer noise, and its trainer.
- checkpoint, executor, threads: resuming a killed run, in-process or Ray chunks, worker
  threads.
"""
