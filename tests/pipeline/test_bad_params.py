"""Invalid params files: each stops with one message naming the dotted key, the bad value and
what is allowed, and a real stage given one exits 2 before touching any file."""

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import typing
from pathlib import Path

import pytest
import torch
import yaml
from dvc.utils.serialize import parse_yaml as dvc_parse_yaml

from tms.core import device, papers, params_file, schema
from tms.core.schema import ParamsError
from tms.engine import optim, precision, tied
from tms.incidental import params as ip_params
from tms.pipeline import params, repro, stage

PR, IP, AN = papers.KEYS
class _Delete:
    """As a value in the tables below: the key is removed."""

    def __repr__(self) -> str:
        return "<deleted>"           # the same test id in every process (pytest-xdist)


DELETE = _Delete()


def _with_value(raw: dict, path: str, value) -> dict:
    """``raw`` with the dotted ``path`` set to ``value`` (removed, for :data:`DELETE`)."""
    *parents, last = path.split(".")
    node = raw
    for key in parents:
        node = node[key]
    if value is DELETE:
        del node[last]
    else:
        node[last] = value
    return raw


# (dotted key, bad value, text of the value in the message, what is allowed)
BAD = [
    # out-of-range p and ratio, empty grids
    (f"{PR}.grid.p", [0.1, 1.5], "1.5", "(0, 1]"),
    (f"{PR}.grid.p", [0.0], "0.0", "(0, 1]"),
    (f"{PR}.grid.p", [], "[]", "empty"),
    (f"{PR}.grid.ratio", [0.5, 1.2], "1.2", "(0, 1]"),
    (f"{PR}.grid.ratio", {"start": 0.1, "stop": 2.0, "num": 3}, "2.0", "(0, 1]"),
    (f"{PR}.grid.n_s", [], "[]", "at least 1 item"),
    (f"{PR}.grid.models", [], "[]", "at least 1 item"),
    (f"{PR}.grid.models", ["relu", "tanh"], "tanh", "'relu' or 'linear'"),
    (f"{PR}.fig3.p", 0.0, "0.0", "greater than 0"),
    (f"{PR}.converge.factor", 1.0, "1.0", "greater than 1"),
    (f"{PR}.converge.tolerance", 0.0, "0.0", "greater than 0"),
    (f"{PR}.converge.min_steps", -1, "-1", "greater than or equal to 0"),
    (f"{PR}.scaling.max_p_over_r", 1.0, "1.0", "less than 1"),      # log(r/p) > 0 in the regime
    (f"{AN}.moments.S", [0.5, 1.0], "1.0", "less than 1"),
    (f"{AN}.scale_min", 1.5, "1.5", "less than 1"),
    # learning rates
    (f"{PR}.train.lr", 0.0, "0.0", "greater than 0"),
    (f"{PR}.train.lr", -1e-3, "-0.001", "greater than 0"),
    (f"{AN}.relu.train.lr", 0, "0", "greater than 0"),
    # σ and λ
    (f"{IP}.single.sigma", -0.1, "-0.1", "greater than 0"),
    (f"{IP}.checks.sigma", 0.0, "0.0", "greater than 0"),
    (f"{IP}.sparsification.lam", 0.0, "0.0", "greater than 0"),
    # wrong types
    (f"{PR}.train.lr_scale", "fast", "'fast'", "valid number"),
    (f"{PR}.train.max_steps", 10.5, "10.5", "valid integer"),
    (f"{PR}.grid.seeds", 1.5, "1.5", "valid integer"),
    (f"{IP}.collisions.lam", "1e-3", "'1e-3'", "valid number"),
    (f"{PR}.train.batch_size", 0, "0", "greater than or equal to 1"),
    (f"{PR}.eval.n_vectors", 1000, "1000", "greater than or equal to 65536"),
    (f"{PR}.train.checkpoint_every", -100, "-100", "greater than or equal to 0"),
    (f"{PR}.train.checkpoint_every", 2.5, "2.5", "valid integer"),
    (f"{PR}.train.diverge_factor", 0.5, "0.5", "greater than 1"),
    (f"{PR}.compute.memory_budget_mb", 0, "0", "greater than 0"),
    (f"{PR}.compute.executor", "dask", "'dask'", "'local' or 'ray'"),
    (f"{AN}.linear.train.diverge_factor", "big", "'big'", "valid number"),
    # the rug needs a power of two; shapes that do not fit
    (f"{PR}.rug.n_s", 1000, "1000", "power of two"),
    (f"{PR}.fig1.n_s", 100, "100", "power of two"),
    (f"{PR}.fig1.n_d", 300, "300", "must be <= n_s"),
    (f"{PR}.fig2.n_s", 48, "48", "must be one of grid.n_s"),
    (f"{AN}.linear.d", [1, 16], "16", "must be < D"),
    (f"{AN}.linear.steps", [300, 100], "[300, 100]", "strictly increasing"),
    # negative seeds
    (f"{PR}.train.seed", -1, "-1", "greater than or equal to 0"),
    (f"{PR}.eval.seed", -5, "-5", "greater than or equal to 0"),
    (f"{AN}.saddle.seed", -1, "-1", "greater than or equal to 0"),
    (f"{IP}.collisions.seed", -3, "-3", "greater than or equal to 0"),
    # unknown and misspelt keys (the message lists the allowed keys, the closest first)
    (f"{PR}.train.windw", 3, "3", "did you mean 'window'"),
    (f"{AN}.relu.max_step", 30, "30", "did you mean 'max_steps'"),
    ("persian_rugg", {}, "{}", "did you mean 'persian_rug'"),
    (f"{IP}.sweep.optimiser", {"name": "sgd"}, "'sgd'", "allowed keys here: n, m, instances"),
    # missing sections
    (f"{PR}.fig3", DELETE, None, "missing; this key is required"),
    (f"{AN}.flows", DELETE, None, "missing; this key is required"),
    # devices that do not exist
    (f"{PR}.device", "tpu", "'tpu'", "auto|cpu|cuda"),
    (f"{AN}.device", "cuda:x", "'cuda:x'", "auto|cpu|cuda"),
    # sizes that would hang a stage or exhaust memory
    (f"{PR}.grid.ratio", {"start": 0.1, "stop": 0.8, "num": 10**10}, "10000000000",
     "less than or equal to 1000"),
    (f"{PR}.rug.n_s", 2**30, "1073741824", "power of two from 2 to 32768"),
    (f"{PR}.fig1.n_s", 2**20, "1048576", "power of two from 2 to 8192"),
    (f"{PR}.eval.n_vectors", 10**12, "1000000000000", "less than or equal to 16777216"),
    (f"{PR}.rug.n_fit", 10**12, "1000000000000", "less than or equal to 1048576"),
    (f"{PR}.rug.n_fit", 2**20, "1048576", "n_fit · n_s"),
    (f"{PR}.scaling.n_boot", 10**12, "1000000000000", "less than or equal to 100000"),
    (f"{PR}.train.max_steps", 10**9, "1000000000", "less than or equal to 10000000"),
    (f"{PR}.train.batch_size", 10**7, "10000000", "less than or equal to 65536"),
    (f"{PR}.grid.seeds", 10**6, "1000000", "less than or equal to 10000"),
    (f"{PR}.grid.seeds", 5000, "5000", "p × ratio × seeds × models = 180000 models"),
    (f"{PR}.grid.n_s", [32, 10**6], "1000000", "less than or equal to 65536"),
    # weights to keep: all, none or points on the grid; per-n_s grids of the grid's n_s
    (f"{PR}.grid.keep_weights", "some", "'some'", "'all' or 'none'"),
    (f"{PR}.grid.keep_weights", [{"p": 0.1, "ratio": 0.3}], "0.3",
     "the point p = 0.1, ratio = 0.3 of keep_weights is not on the grid of n_s = 64"),
    (f"{PR}.grid.keep_weights", [{"p": 0.1}], None, "missing"),
    (f"{PR}.grid.by_n_s", [{"n_s": 4096, "seeds": 1}], "4096", "must be one of n_s = [64, 128]"),
    (f"{PR}.grid.by_n_s", [{"n_s": 64}, {"n_s": 64}], "64", "named once"),
    (f"{PR}.grid.by_n_s", [{"n_s": 128, "seeds": 5000}], "5000",
     "at n_s = 128, p × ratio × seeds × models = 180000 models"),
    (f"{PR}.grid.by_n_s", [{"n_s": 128, "ratio": [0.5, 1.5]}], "1.5", "(0, 1]"),
    (f"{PR}.grid.by_n_s", [{"n_s": 128, "keep_weights": [{"p": 0.3, "ratio": 0.2}]}], "0.3",
     "at n_s = 128, the point p = 0.3"),
    (f"{PR}.fig3.block", 1024, "1024", "must be <= n_s = 512"),
    # seeds outside numpy's range; ±inf and NaN
    (f"{PR}.train.seed", 2**64, "18446744073709551616", "less than or equal to 4294967295"),
    (f"{PR}.train.seed", -1, "-1", "greater than or equal to 0"),
    (f"{PR}.train.adam_eps", float("inf"), "inf", "finite number"),
    (f"{PR}.train.adam_eps", 10.0, "10.0", "less than or equal to 1"),
    (f"{PR}.train.lr_scale", float("nan"), "nan", "finite number"),
    (f"{PR}.compute.memory_budget_mb", float("inf"), "inf", "finite number"),
    (f"{PR}.fig2.p", [0.1, float("-inf")], "-inf", "finite number"),
    # the same grid value twice
    (f"{PR}.grid.p", [0.1, 0.05, 0.1], "0.1", "appears more than once"),
    (f"{PR}.grid.p", [0.1, 0.10005, 0.5], "0.10005", "within 0.1% of each other"),
    (f"{PR}.grid.by_n_s", [{"n_s": 64, "ratio": [0.3498, 0.3503]}], "0.3503",
     "at n_s = 64, ratio = [0.35, 0.35]: values within 0.1% of each other (or of the grid's)"),
    # two ratios one n_d apart at an n_s: the same model twice
    (f"{PR}.grid.ratio", [0.25, 0.26], "0.26", "at n_s = 64: ratios 0.25 and 0.26 give the same "
     "n_d = 16"),
    (f"{PR}.grid.by_n_s", [{"n_s": 64, "ratio": [0.05, 0.06, 0.5]}], "0.06",
     "at n_s = 64, ratio = [0.05, 0.06, 0.5]: ratios 0.05 and 0.06 give the same n_d = 3"),
    (f"{PR}.grid.n_s", [32, 64, 32], "32", "appears more than once"),
    (f"{PR}.grid.ratio", {"start": 0.5, "stop": 0.5, "num": 3}, "0.5", "appears more than once"),
    (f"{PR}.grid.models", ["relu", "relu"], "'relu'", "appears more than once"),
    (f"{PR}.fig2.p", [0.1, 0.1], "0.1", "appears more than once"),
    (f"{PR}.scaling.theory_p", [0.01, 0.01], "0.01", "appears more than once"),
    (f"{IP}.collisions.m", [64, 64], "64", "appears more than once"),
    (f"{IP}.sweep.lam", [1e-3, 1e-3], "0.001", "appears more than once"),
    (f"{IP}.sparsification.m", [100, 100], "100", "appears more than once"),
    (f"{AN}.moments.D", [2, 2], "2", "appears more than once"),
    (f"{AN}.linear.d", [1, 1], "1", "appears more than once"),
    (f"{AN}.relu.S", [0.5, 0.5], "0.5", "appears more than once"),
    # the incidental section's sizes
    (f"{IP}.checks.samples", 10**12, "1000000000000", "less than or equal to 100000000"),
    (f"{IP}.sparsification.m", [10**10], "10000000000", "less than or equal to 10000000"),
    (f"{IP}.collisions.n", 10**5, "100000", "less than or equal to 4096"),
    (f"{IP}.collisions.m", [10**5, 2 * 10**5], "100000", "less than or equal to 65536"),
    (f"{IP}.collisions.instances", 10**6, "1000000", "less than or equal to 10000"),
    (f"{IP}.single.steps", 10**9, "1000000000", "less than or equal to 10000000"),
    (f"{IP}.noise.record_every", 10**6, "1000000", "must be <= steps = 100000"),
    (f"{IP}.collisions.optimizer.lr", float("inf"), "inf", "finite number"),
    (f"{IP}.noise.sigma", [0.1, float("nan")], "nan", "finite number"),
    # the notes' sizes
    (f"{AN}.flows.lr", float("inf"), "inf", "finite number"),
    (f"{AN}.flows.lr", 1e3, "1000.0", "gradient steps; from 1 to 1e6"),
    (f"{AN}.saddle.epsilon", {"start": 1e-3, "stop": 100.0, "num": 10**10}, "10000000000",
     "less than or equal to 1000"),
    (f"{AN}.moments.n_vectors", 10**12, "1000000000000", "less than or equal to 100000000"),
    (f"{AN}.moments.n_vectors", 10**8, "100000000", "n_vectors · max(D)"),
    (f"{AN}.relu.D", 10**7, "10000000", "less than or equal to 4096"),
    (f"{AN}.relu.n_per_stratum", 10**7, "10000000", "n_per_stratum · D"),
    (f"{AN}.relu.train.adam_eps", float("inf"), "inf", "finite number"),
    (f"{AN}.eval.n_vectors", 10**9, "1000000000", "less than or equal to 16777216"),
    (f"{AN}.linear.steps", [100, 10**9], "1000000000", "less than or equal to 10000000"),
    # lists of any length, and products of sizes, that once ran for minutes or hours silently
    (f"{PR}.theory.ratio", [k / 1001 for k in range(1, 1002)], "(1001 values)",
     "ratio grid has 1001 values; at most 1000"),
    (f"{PR}.theory.ratio", {"start": 1e-5, "stop": 1.0, "num": 10**5}, "100000",
     "less than or equal to 1000"),
    (f"{PR}.scaling.theory_p", [k / 5001 for k in range(1, 5001)], "(5000 values)",
     "at most 1000 items"),
    (f"{AN}.moments.S", [k / 20001 for k in range(20000)], "(20000 values)",
     "at most 1000 items"),
    (f"{IP}.collisions.m", list(range(2, 2002)), "(2000 values)", "at most 1000 items"),
    (f"{IP}.checks.m", 65536, "65536", "samples · m = 1.311e+10; at most 1.074e+09"),
    (f"{PR}.grid.by_n_s", [{"n_s": 64, "p": [0.1]}] * 1001, "(1001 values)",
     "at most 1000 items"),
    # a p the sampler cannot draw (float32 uniforms: multiples of 2^-24): once accepted, the
    # models marked diverged with a NaN loss
    (f"{PR}.grid.p", [1.0e-300, 0.5], "1e-300", "below 5.96e-06 = 100 · 2^-24"),
    (f"{PR}.grid.p", [1.0e-7, 0.5], "1e-07", "below 5.96e-06"),
    (f"{PR}.grid.p", {"start": 1e-9, "stop": 0.5, "num": 3}, "1e-09", "below 5.96e-06"),
    (f"{PR}.grid.by_n_s", [{"n_s": 64, "p": [1e-8, 0.1]}], "1e-08", "below 5.96e-06"),
    (f"{PR}.fig3.p", 1.0e-300, "1e-300", "below 5.96e-06"),
    (f"{PR}.fig3.p", 5.0e-6, "5e-06", "below 5.96e-06"),
    (f"{PR}.grid.keep_weights", [{"p": 1e-12, "ratio": 0.2}], "1e-12", "below 5.96e-06"),
    # step counts that set the time: once blamed on memory_budget_mb, or run for a day
    (f"{PR}.converge.min_steps", 10**12, "1000000000000", "less than or equal to 10000000"),
    (f"{PR}.converge.min_steps", 10**8, "100000000", "less than or equal to 10000000"),
    (f"{PR}.converge.factor", 1e6, "1000000.0", "less than or equal to 16"),
    (f"{PR}.fig3.max_steps", 10**9, "1000000000", "less than or equal to 10000000"),
]

# Products of sizes over more than one key: (the edits, the key reported, what the message says)
TOO_MUCH = [
    ({f"{AN}.flows.T": 10**7, f"{AN}.flows.D": 4096}, f"{AN}.flows.T = 10000000",
     "T · D = 4.096e+10; at most 2.684e+08"),
    ({f"{PR}.fig2.p": [k / 501 for k in range(1, 501)],
      f"{PR}.theory.ratio": {"start": 0.001, "stop": 1.0, "num": 1000}}, f"{PR} = {{...}}",
     "fig2.p × theory.ratio = 5e+05; at most 1e+05"),
    ({f"{PR}.scaling.theory_p": [k / 501 for k in range(1, 501)],
      f"{PR}.scaling.theory_ratio": {"start": 0.001, "stop": 1.0, "num": 1000}},
     f"{PR}.scaling = {{...}}", "theory_p × theory_ratio = 5e+05; at most 1e+05"),
    ({f"{PR}.rug.n_s": 32768, f"{PR}.rug.n_fit": 4096,
      f"{PR}.rug.ratio": {"start": 0.001, "stop": 1.0, "num": 1000}}, f"{PR} = {{...}}",
     "× rug.n_s = 1.369e+13; at most 1.1e+12"),
    ({f"{IP}.checks.n": 4096, f"{IP}.checks.samples": 4000}, f"{IP}.checks.samples = 4000",
     "must be >= 2n = 8192"),
    ({f"{IP}.checks.n": 4096, f"{IP}.checks.m": 4096, f"{IP}.checks.samples": 10**4},
     f"{IP}.checks.m = 4096", "n · m = 1.678e+07; at most 4.194e+06"),
    ({f"{AN}.moments.S": [k / 100 for k in range(100)], f"{AN}.moments.n_vectors": 10**6,
      f"{AN}.moments.D": [2, 8, 32, 128, 256]}, f"{AN}.moments.n_vectors = 1000000",
     "S × n_vectors · sum(D) = 4.26e+10; at most 1.718e+10"),
]


# Devices: (CUDA devices there are, the device named, what the message says)
DEVICE_BAD = [
    (0, "cuda", "CUDA is not available"),
    (0, "cuda:3", "CUDA is not available"),
    (1, "cuda:3", "1 CUDA device(s), cuda:0 to cuda:0"),
    (1, "tpu", "'auto', 'cpu', 'cuda' or 'cuda:N'"),
]

# A real stage given a bad value: (its command, key, value, what its message says)
STAGE_BAD = [
    (["stages/persian_rug/pr_theory.py"], f"{PR}.rug.n_s", 48, f"{PR}.rug.n_s = 48"),
    (["stages/persian_rug/pr_train.py", "--n-s", "16"], f"{PR}.device", "cuda:3",
     f"{PR}.device = 'cuda:3'"),
    (["stages/notes/notes_relu.py"], f"{AN}.relu.train.lr", 0.0, f"{AN}.relu.train.lr = 0.0"),
    (["stages/persian_rug/pr_converge.py", "--of", "16"], f"{PR}.converge.factor", 0.5,
     f"{PR}.converge.factor = 0.5"),
    (["stages/incidental/ip_sweep.py"], f"{IP}.sweep.sigmas", [0.1],
     f"{IP}.sweep.sigmas: unknown key"),
    # inputs that once ran for more than a minute without a word
    (["stages/persian_rug/pr_rug.py"], f"{PR}.eval.n_vectors", 10**12,
     f"{PR}.eval.n_vectors = 1000000000000"),
    (["stages/persian_rug/pr_rug.py"], f"{PR}.rug.n_fit", 10**12,
     f"{PR}.rug.n_fit = 1000000000000"),
    (["stages/incidental/ip_checks.py"], f"{IP}.checks.samples", 10**12,
     f"{IP}.checks.samples = 1000000000000"),
    (["stages/notes/notes_flows.py"], f"{AN}.flows.lr", float("inf"), f"{AN}.flows.lr = inf"),
    (["stages/incidental/ip_checks.py"], f"{IP}.checks",
     {"n": 8, "m": 65536, "sigma": 0.1, "samples": 200000, "seed": 0, "m_exact": 4},
     f"{IP}.checks.m = 65536: samples · m"),
    (["stages/incidental/ip_sparsification.py"], f"{IP}.sparsification.euler.dt", [0.5, 1e-6],
     f"{IP}.sparsification.euler.dt = [0.5, 1e-06]: the Euler steps"),
    (["stages/incidental/ip_sparsification.py"], f"{IP}.sparsification.init_std", 1e300,
     f"{IP}.sparsification.init_std = 1e+300"),
    (["stages/notes/notes_flows.py"], f"{AN}.flows.init_std", 1e300,
     f"{AN}.flows.init_std = 1e+300"),
]

# The incidental polysemanticity section: (key within it, value, what the message says)
IP_BAD = [
    ("noise.sigma", [0.1, -0.1], "greater than or equal to 0"),
    ("sweep.sigma", [0.0, 0.1], "greater than 0"),
    ("sweep.lam", [-1e-3, 0.1], "greater than 0"),
    ("collisions.lam", -1e-3, "greater than or equal to 0"),
    ("collisions.optimizer.lr", 0.0, "greater than 0"),
    ("collisions.optimizer.name", "rmsprop", "'adam', 'adamw' or 'sgd'"),
    ("noise.optimizer.weight_decay", 0.01, "adamw only"),
    ("noise.noise", ["uniform"], "'bipolar' or 'normal'"),
    ("single.noise", "laplace", "'bipolar' or 'normal'"),
    ("collisions.m", [16, 64], "must be >= n = 32"),
    ("collisions.level", 1.0, "less than 1"),
    ("sparsification.lam", 0.1, "1/sqrt(m)"),
    ("sparsification.euler.dt", [0.5, 0.3], "multiple of the next"),
    ("sparsification.euler.lam", 0.5, "1/sqrt(m)"),
    ("single.stuck_below", 0.0, "greater than 0"),
    ("checks.m_exact", 9, "less than or equal to 6"),
    ("noise.record_every", 0, "greater than or equal to 1"),
    ("device", "tpu", "pattern"),
    ("noise.sigmas", [0.1], "unknown key"),
    ("sweep", None, "missing"),
    # a start that once ran the exact solution's integration for ever
    ("sparsification.init_std", 1.0e300, "less than or equal to 1000"),
    ("sparsification.init_std", 1.0e4, "less than or equal to 1000"),
    ("sparsification.init_std", 0.0, "greater than 0"),
]

# The notes' section: (key, value, what the message says)
AN_BAD = [
    ("autoencoding_notes.linear.d", [1, 16], "d = 16 must be < D = 16"),
    ("autoencoding_notes.moments.S", [0.5, 1.0], "less than 1"),
    ("autoencoding_notes.scale_min", 1.0, "less than 1"),
    ("autoencoding_notes.saddle.I", [1, 2, 3], "top index set"),
    ("autoencoding_notes.saddle.I", [1, 2, 9], "distinct indices in 1..8"),
    ("autoencoding_notes.saddle.epsilon", {"start": 0.0, "stop": 1.0, "num": 3}, "greater than 0"),
    ("autoencoding_notes.linear.steps", [300, 100], "strictly increasing"),
    ("autoencoding_notes.flows.lr", 1e-6, "gradient steps"),
    ("autoencoding_notes.relu.n_per_stratum", 10, "greater than or equal to 100"),
    ("autoencoding_notes.relu.trian", {}, "unknown key"),
    # a start that once ran the flows for ever
    ("autoencoding_notes.flows.init_std", 1.0e300, "less than or equal to 1000"),
    ("autoencoding_notes.flows.init_std", 1.0e5, "less than or equal to 1000"),
    ("autoencoding_notes.flows.init_std", -0.1, "greater than 0"),
]

# Params files YAML cannot hold safely: (text, what the message says, the case)
FILE_BAD = [
    ("a: &x [1, 2]\nb: &y [*x, *x]\nc: [*y, *y]\n", "aliases (*name) are not allowed",
     "alias bomb"),
    ("persian_rug:\n  device: cpu\n  device: cuda\n", "key 'device' is given twice",
     "duplicated key"),
    ("persian_rug: [1, 2\n", "not a valid params file", "invalid YAML"),
    ("? [a, b]\n: 1\n", "a key must be a plain name", "unhashable key"),
    ("a: " + "[" * 5000 + "]" * 5000 + "\n", "nested more than 32 deep",
     "lists nested 5,000 deep (once a RecursionError)"),
    ("a:\n" + "".join("  " * k + f"k{k}:\n" for k in range(1, 40)), "nested more than 32 deep",
     "mappings nested 40 deep"),
]

# A profile overlay whose ``extends:`` names no profile of its folder (once: a traceback)
EXTENDS_BAD = [None, ["smoke"], "", "no-such-profile", "../profiles/smoke", 3]

# Things at the params file's path that are not a params file: (make it there, the message)
NOT_A_FILE = [
    (lambda path: path.mkdir(), "a folder, not a params file"),
    (lambda path: os.mkfifo(path), "a named pipe, not a params file"),          # once: a hang
    (lambda path: path.symlink_to("/dev/zero"), "a device, not a params file"),  # once: a hang
]


@pytest.mark.parametrize("key, value, shown, allowed", BAD,
                         ids=[f"{k}={v!r}"[:60] for k, v, *_ in BAD])
def test_bad_params_name_key_value_and_rule(load_profile, key, value, shown, allowed):
    with pytest.raises(ParamsError) as err:
        params.SECTION.parse(_with_value(load_profile("default"), key, value), "params.yaml")
    msg = str(err.value)
    assert msg.startswith("params.yaml: invalid parameters")
    lines = [line for line in msg.splitlines()[1:] if line.strip().startswith(key)]
    assert lines, msg                                    # the dotted key, in full
    assert any(allowed in line for line in lines), msg   # what is allowed
    if shown is not None:
        assert any(shown in line for line in lines), msg  # the bad value


@pytest.mark.parametrize("edits, shown, says", TOO_MUCH, ids=[s for _, s, _ in TOO_MUCH])
def test_products_of_sizes_are_bounded_before_any_work(load_profile, edits, shown, says):
    raw = load_profile("default")
    for key, value in edits.items():
        _with_value(raw, key, value)
    with pytest.raises(ParamsError) as err:
        params.SECTION.parse(raw, "params.yaml")
    (line,) = str(err.value).splitlines()[1:]
    assert line.strip().startswith(shown) and says in line, line


@pytest.mark.parametrize("count, name, allowed", DEVICE_BAD)
def test_missing_device_is_a_params_error(monkeypatch, count, name, allowed):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: count > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
    monkeypatch.delenv("TMS_DEVICE", raising=False)
    with pytest.raises(ParamsError) as err:
        device.resolve_device(name)
    assert f"device = {name!r}" in str(err.value) and allowed in str(err.value)
    assert device.resolve_device("auto") == ("cuda" if count else "cpu")


@pytest.mark.parametrize("count, chosen, why", [
    (0, "cpu", "CUDA is not available"),
    (2, "cuda", "Fake GPU, 2 CUDA device(s)"),
])
def test_auto_says_which_device_it_chose(monkeypatch, load_profile, count, chosen, why):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: count > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "Fake GPU")
    monkeypatch.delenv("TMS_DEVICE", raising=False)
    p = params.SECTION.parse(load_profile("paper"))
    said = params.SECTION.check_devices(p)
    auto = [s for s in type(p).model_fields if getattr(p, s).device == "auto"]
    assert auto and len(said) == len(auto)
    for section, choice in zip(auto, said):
        line = str(choice)
        assert line.startswith(f"{section}.device = 'auto': {chosen} (") and why in line
        assert (choice.key, choice.device) == (f"{section}.device", chosen) and why in choice.why
    monkeypatch.setenv("TMS_DEVICE", "cpu")              # the environment's choice is not auto
    assert params.SECTION.check_devices(p) == []


@pytest.mark.parametrize("section", papers.KEYS)
def test_tf32_without_cuda_is_a_params_error_naming_the_key(monkeypatch, load_profile, section):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.delenv("TMS_DEVICE", raising=False)
    raw = load_profile("default")
    raw[section]["compute"]["precision"] = "tf32"
    with pytest.raises(ParamsError, match=f"{section}.compute.precision = 'tf32'"):
        params.SECTION.check_devices(params.SECTION.parse(raw))
    raw[section]["compute"]["precision"] = "bf16"            # bf16 runs on CPU too
    params.SECTION.check_devices(params.SECTION.parse(raw))
    raw[section]["compute"]["precision"] = "fp16"
    with pytest.raises(ParamsError, match=f"{section}.compute.precision"):
        params.SECTION.parse(raw)


def test_the_ray_executor_without_ray_is_a_params_error_saying_how_to_get_it(monkeypatch,
                                                                          load_profile):
    raw = load_profile("default")
    raw["persian_rug"]["compute"]["executor"] = "ray"
    p = params.SECTION.parse(raw)
    params.SECTION.check_devices(p)                          # the tests' environment has Ray
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ray" else real(name, *a))
    with pytest.raises(ParamsError, match=r"persian_rug.compute.executor = 'ray': Ray is not "
                                          r"installed .*`make ray`"):
        params.SECTION.check_devices(p)
    raw["persian_rug"]["compute"]["executor"] = "local"      # the default needs nothing more
    params.SECTION.check_devices(params.SECTION.parse(raw))


def test_the_params_precisions_are_the_engines():
    assert typing.get_args(schema.Precision) == precision.PRECISIONS


def test_the_params_noises_and_optimisers_are_the_engines():
    # a kind the schema accepts but the engine lacks would fail only once the stage trains
    assert typing.get_args(ip_params.NoiseKind) == tied.NOISES
    assert typing.get_args(ip_params.IpOptimizer.model_fields["name"].annotation) == \
        optim.OPTIMIZERS


def _snapshot(root: Path) -> dict[str, tuple[str, int]]:
    return {str(f.relative_to(root)): (hashlib.sha256(f.read_bytes()).hexdigest(),
                                       f.stat().st_mtime_ns)
            for f in sorted(root.rglob("*")) if f.is_file()}


@pytest.mark.integration
@pytest.mark.parametrize("argv, key, value, shown", STAGE_BAD)
def test_a_stage_with_bad_params_exits_2_and_touches_nothing(tmp_path, root, load_profile, argv,
                                                             key, value, shown, stage_env):
    if value == "cuda:3" and torch.cuda.device_count() > 3:
        pytest.skip("this machine has a cuda:3")
    shutil.copytree(root / "stages", tmp_path / "stages",
                    ignore=shutil.ignore_patterns("__pycache__"))
    raw = _with_value(load_profile("smoke"), key, value)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw))
    (tmp_path / "data").mkdir()
    (tmp_path / "data/previous.parquet").write_bytes(b"an output of an earlier run")
    before = _snapshot(tmp_path)
    # as DVC runs it, started warm; a hang fails here
    run = subprocess.run([sys.executable, "stages/run.py", *argv], cwd=tmp_path, env=stage_env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr
    assert shown in run.stderr
    assert "Traceback" not in run.stderr
    log = tmp_path / stage.LOG_FILE                      # the stages' log records the refusal
    assert shown in log.read_text()
    records = tmp_path / stage.RECORDS_FILE
    assert [r["event"] for r in repro.read_records(records)] == [stage.STARTED, stage.ERROR,
                                                                 stage.ENDED]
    log.unlink()
    records.unlink()
    assert _snapshot(tmp_path) == before


# The incidental polysemanticity section
SECTION = IP


@pytest.mark.parametrize("path, value, expected", IP_BAD)
def test_bad_incidental_params_name_key_value_and_rule(load_profile, path, value, expected):
    raw = _with_value(load_profile("default"), f"{SECTION}.{path}",
                      DELETE if value is None else value)
    with pytest.raises(ParamsError) as err:
        params.SECTION.parse(raw, "params.yaml")
    msg = str(err.value)
    assert expected in msg
    assert f"{SECTION}.{path.rsplit('.', 1)[0]}" in msg


def test_the_incidental_section_is_required(load_profile):
    with pytest.raises(ParamsError, match=f"{SECTION}: missing"):
        params.SECTION.parse(_with_value(load_profile("default"), SECTION, DELETE))


# The notes section
@pytest.mark.parametrize("path, value, expected", AN_BAD)
def test_bad_notes_params_name_the_key(load_profile, path, value, expected):
    raw = _with_value(load_profile("default"), path, value)
    with pytest.raises(ParamsError) as err:
        params.SECTION.parse(raw, "params.yaml")
    assert expected in str(err.value) and path.rsplit(".", 1)[0] in str(err.value)


@pytest.mark.integration
def test_a_bad_value_stops_a_notes_stage_before_any_output(tmp_path, root, load_profile):
    raw = _with_value(load_profile("default"), f"{AN}.saddle.I", [1, 2, 3])
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw))
    run = subprocess.run([sys.executable, str(root / "stages/notes/notes_saddle.py")],
                         cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 2
    assert "autoencoding_notes.saddle" in run.stderr and "top index set" in run.stderr
    assert not (tmp_path / "data").exists()


# The file itself

@pytest.mark.parametrize("text, shown", [r[:2] for r in FILE_BAD],
                         ids=[r[2] for r in FILE_BAD])
def test_a_file_yaml_cannot_hold_safely_is_refused_naming_the_line(tmp_path, text, shown):
    path = tmp_path / "params.yaml"
    path.write_text(text)
    with pytest.raises(ParamsError) as err:
        params.SECTION.load(path)
    assert str(err.value).startswith(f"{path}: ") and shown in str(err.value)
    assert "line" in str(err.value)
    assert "<unicode string>" not in str(err.value)      # the parser's place names the file


@pytest.mark.parametrize("name", EXTENDS_BAD, ids=map(repr, EXTENDS_BAD))
def test_an_overlay_extending_no_profile_is_named(tmp_path, load_profile, name):
    from tms.pipeline import profiles

    (tmp_path / "smoke.yaml").write_text("{}\n")
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump({"extends": name}))
    with pytest.raises(ParamsError) as err:
        profiles.profile(load_profile("default"), tmp_path / "mine.yaml")
    assert str(err.value) == (f"{tmp_path / 'mine.yaml'}: extends = {name!r}: the name of a "
                              f"profile in {tmp_path}/ (mine, smoke)")


@pytest.mark.parametrize("make, says", NOT_A_FILE, ids=["folder", "fifo", "dev-zero"])
def test_a_params_path_that_is_not_a_file_is_named_at_once(tmp_path, make, says):
    path = tmp_path / "params.yaml"
    make(path)
    with pytest.raises(ParamsError) as err:
        params.SECTION.load(path)
    assert str(err.value).startswith(f"{path}: ") and says in str(err.value)


def test_the_values_validated_are_those_dvc_reads():
    # YAML 1.1 (PyYAML) and 1.2 (ruamel.yaml, DVC's) differ on these: the stage would run with
    # a value other than the one dvc.lock records, or refuse a number DVC takes
    text = ("a: 010\nb: 1e-3\nc: yes\nd: 0o17\ne: 1_000\nf: [.5, 2e1, -1.0e-07]\n"
            "g: {h: off, i: ~, j: 0x1F}\n")
    ours = params_file.parse_yaml(text, "params.yaml")
    assert ours == dvc_parse_yaml(text, "params.yaml")
    assert ours["a"] == 10 and ours["b"] == 0.001 and ours["c"] == "yes"
    assert ours != yaml.safe_load(text)                      # PyYAML: 8, '1e-3', True, …


def test_a_file_that_is_not_utf8_is_refused(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_bytes("persian_rug:\n  device: cpu  # caf\xe9\n".encode("latin-1"))
    with pytest.raises(ParamsError, match="not UTF-8 text .* save it as UTF-8"):
        params.SECTION.load(path)


@pytest.mark.parametrize("body", [
    # nine levels of nine aliases each: 9^9 nodes if expanded
    "a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{k}: &a{k} [{', '.join([f'*a{k - 1}'] * 9)}]\n" for k in range(1, 9)),
    "persian_rug:\n  train: {seed: 1, seed: 2}\n",
], ids=["alias bomb", "duplicated key"])
@pytest.mark.integration
def test_a_stage_refuses_such_a_file_at_once(tmp_path, root, body):
    shutil.copytree(root / "stages", tmp_path / "stages",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "params.yaml").write_text(body)
    run = subprocess.run([sys.executable, "stages/persian_rug/pr_theory.py"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)   # a hang fails here
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "params.yaml: not a valid params file" in run.stderr
    assert not (tmp_path / "data").exists()


def test_a_training_section_that_cannot_stop_early_is_warned_about(load_profile):
    train = params.SECTION.parse(load_profile("default")).persian_rug.train
    assert schema.schedule_warnings("persian_rug.train", train, train.max_steps) == []
    (idle,) = schema.schedule_warnings("persian_rug.train", train, 2 * train.window)
    assert idle.startswith("persian_rug.train.window = 200: the stopping rule needs more than")
    (never,) = schema.schedule_warnings("persian_rug.train", train, train.check_every - 1)
    assert "neither the stopping rule nor the divergence check runs" in never


@pytest.mark.integration
def test_a_grid_too_large_for_this_machine_stops_before_training(tmp_path, root, load_profile):
    # the largest stack of n_s = 65536 within a 10^9 MiB budget needs far more than any machine
    raw = load_profile("smoke")
    raw[PR]["grid"]["n_s"] = [65536]
    raw[PR]["fig2"]["n_s"] = 65536
    raw[PR]["compute"]["memory_budget_mb"] = 1e9
    shutil.copytree(root / "stages", tmp_path / "stages",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw))
    env = {k: v for k, v in os.environ.items() if k != "TMS_DEVICE"}
    run = subprocess.run([sys.executable, "stages/persian_rug/pr_train.py", "--n-s", "65536"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert "training n_s = 65536 (its largest stack" in run.stderr
    assert "GiB available: lower the budget" in run.stderr
    assert not (tmp_path / "data").exists()
