"""CPU kernels of the random ops.

Each kernel draws from ``ctx.random_generator()``: a NumPy ``Generator``
seeded by the op's ``seed``/``seed2`` attrs that lives as long as the session,
so seeded programs repeat across sessions and processes while successive runs
draw fresh numbers.  NumPy draws float32 and float64 directly; float16 samples
are drawn in float32 and rounded.
"""

import numpy as np

from minitf_numpy_cpu.kernels.table import kernel


def _draw_dtype(ctx):
    """The float type to draw in: the output's, or float32 for float16."""
    dtype = np.dtype(ctx.output_dtypes[0])
    return np.float32 if dtype == np.float16 else dtype


@kernel("RandomStandardNormal")
def random_standard_normal(ctx, shape, seed, seed2, dtype):
    rng = ctx.random_generator()
    sample = rng.standard_normal(tuple(shape), dtype=_draw_dtype(ctx))
    return sample.astype(ctx.output_dtypes[0], copy=False)


@kernel("TruncatedNormal")
def truncated_normal(ctx, shape, seed, seed2, dtype):
    """Standard normal samples; those beyond 2 in magnitude are redrawn until none is."""
    rng = ctx.random_generator()
    sample = rng.standard_normal(tuple(shape), dtype=_draw_dtype(ctx))
    outside = np.abs(sample) > 2.0
    while outside.any():
        sample[outside] = rng.standard_normal(int(outside.sum()), dtype=sample.dtype)
        outside = np.abs(sample) > 2.0
    return sample.astype(ctx.output_dtypes[0], copy=False)


@kernel("RandomUniform")
def random_uniform(ctx, shape, seed, seed2, dtype):
    rng = ctx.random_generator()
    sample = rng.random(tuple(shape), dtype=_draw_dtype(ctx))
    return sample.astype(ctx.output_dtypes[0], copy=False)


@kernel("RandomUniformInt")
def random_uniform_int(ctx, shape, minval, maxval, seed, seed2):
    if minval >= maxval:
        raise ctx.invalid_argument("Need minval < maxval, got %s >= %s" % (minval, maxval))
    rng = ctx.random_generator()
    return rng.integers(minval, maxval, size=tuple(shape), dtype=ctx.output_dtypes[0])


@kernel("RandomShuffle")
def random_shuffle(ctx, value, seed, seed2):
    if np.ndim(value) == 0:
        return value
    return ctx.random_generator().permutation(value)


@kernel("Multinomial")
def multinomial(ctx, logits, num_samples, seed, seed2, output_dtype):
    """Inverse-CDF sampling from ``softmax(logits[i])``, row by row."""
    if num_samples < 0:
        raise ctx.invalid_argument("num_samples should be nonnegative, got %d" % num_samples)
    if logits.shape[1] == 0:
        raise ctx.invalid_argument("num_classes should be positive, got 0")
    rng = ctx.random_generator()
    logits = logits.astype(np.float64)
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    cdf = np.cumsum(probs, axis=1)
    cdf /= cdf[:, -1:]
    draws = rng.random((logits.shape[0], int(num_samples)))
    samples = [np.searchsorted(row_cdf, row_draws, side="right")
               for row_cdf, row_draws in zip(cdf, draws)]
    samples = np.array(samples, dtype=ctx.output_dtypes[0]).reshape(draws.shape)
    return np.minimum(samples, logits.shape[1] - 1)
