"""Random ops: ``tf.random_normal``, ``tf.random_uniform``, ``tf.truncated_normal`` ...

Randomness lives in a handful of *standard* ops — ``RandomStandardNormal``
(N(0, 1)), ``RandomUniform`` (U[0, 1)), ``TruncatedNormal``, ``RandomUniformInt``,
``RandomShuffle``, ``Multinomial`` — whose only inputs are a shape (or the
values to permute).  The wrappers then map the standard draw onto the requested
distribution with ordinary math ops, exactly as TF1 builds them::

    tf.random_normal([2, 3], mean=1.0, stddev=2.0)
    # random_normal/RandomStandardNormal  ->  random_normal/mul (* stddev)
    #                                     ->  random_normal     (+ mean)

so ``mean`` and ``stddev`` may be tensors, and gradients flow into them (the
"reparameterization trick") while the random op itself is not differentiable.

**Seeds.**  Every random op carries two attrs, ``seed`` and ``seed2``, chosen
by :func:`minitf.api_scopes.get_seed` from the graph-level seed
(``tf.set_random_seed``) and the op-level ``seed`` argument; ``0, 0`` means
"unseeded".  A kernel draws from a generator seeded by those attrs that lives
as long as the session (:meth:`KernelContext.random_generator`), hence TF1's
contract:

* with a seed, the same program gives the same numbers in every new session
  and every new process;
* successive ``run`` calls in one session draw *new* numbers;
* without any seed, every session draws different numbers.

Mirrors ``tensorflow/python/ops/random_ops.py``.
"""

from minitf.api_scopes import get_seed
from minitf.framework import dtypes
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape, dimension_value
from minitf.framework.tensor_util import constant_value, constant_value_as_shape
from minitf.ops import math_ops
from minitf.ops.op_def_library import apply_op, define_op, graph_of, not_differentiable

_SHAPE_TYPES = (dtypes.int32, dtypes.int64)


# ---- shapes and seeds shared by every random op ----------------------------------------
def _shape_tensor(shape):
    """``shape`` (list, tuple, TensorShape or 1-D int tensor) as an int tensor ``shape``."""
    if isinstance(shape, TensorShape):
        if not shape.is_fully_defined():
            raise ValueError("Cannot convert a partially known TensorShape %s to a Tensor."
                             % shape)
        shape = shape.as_list()
    if isinstance(shape, (list, tuple)):
        dims = [dimension_value(d) for d in shape]
        return convert_to_tensor(dims, dtype=dtypes.int32 if not dims else None, name="shape")
    return convert_to_tensor(shape, name="shape")


def _shape_from_input(op):
    """Shape function: the output shape is the value of input 0, the shape tensor."""
    shape_input = op.inputs[0]
    if shape_input.shape.ndims not in (None, 1):
        raise ValueError("Shape must be rank 1 but is rank %d" % shape_input.shape.ndims)
    return [constant_value_as_shape(shape_input)]


def _dtype_attr(op):
    return [dtypes.as_dtype(op.get_attr("dtype"))]


def _seed_attrs(seed):
    """The ``seed``/``seed2`` attrs for op-level ``seed`` (``0, 0``: unseeded)."""
    seed1, seed2 = get_seed(seed)
    return {"seed": seed1 or 0, "seed2": seed2 or 0}


def _float_dtype(dtype):
    dtype = dtypes.as_dtype(dtype).base_dtype
    if not dtype.is_floating:
        raise TypeError("Expected a floating point dtype, got %s." % dtype.name)
    return dtype


def _standard_op(name, doc):
    """Declares a random op of the form ``Op(shape) -> tensor of attr dtype``."""
    return define_op(name, inputs=("shape",), attrs={"seed": 0, "seed2": 0, "dtype": None},
                     shape_fn=_shape_from_input, dtype_fn=_dtype_attr,
                     type_constraint=_SHAPE_TYPES, stateful=True, doc=doc)


# ---- normal ------------------------------------------------------------------------------
_random_standard_normal = _standard_op(
    "RandomStandardNormal", "Samples of N(0, 1) in a tensor of the given shape.")


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Samples from a normal distribution (``tf.random_normal``).

    Built as ``RandomStandardNormal(shape) * stddev + mean``.

    Args:
        shape: the output shape: a list, tuple, TensorShape or 1-D int32 tensor.
        mean: the mean, a scalar (or a tensor broadcasting against the sample).
        stddev: the standard deviation, likewise.
        dtype: a floating point type (else TypeError).
        seed: the op-level seed (see :func:`tf.set_random_seed`).
        name: the name scope (default ``random_normal``); the result is named
            after it.

    Example:
        >>> x = tf.random_normal([1000], mean=5.0, stddev=0.1, seed=1)
        >>> x.op.name, x.shape
        ('random_normal', TensorShape([Dimension(1000)]))
    """
    dtype = _float_dtype(dtype)
    graph = graph_of([shape, mean, stddev])
    with graph.as_default(), graph.name_scope(name or "random_normal") as scope:
        shape_tensor = _shape_tensor(shape)
        mean_tensor = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev_tensor = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        attrs = dict(_seed_attrs(seed), dtype=dtype)
        rnd = apply_op(_random_standard_normal, [shape_tensor], attrs=attrs,
                       name="RandomStandardNormal")
        mul = math_ops.multiply(rnd, stddev_tensor, name="mul")
        return math_ops.add(mul, mean_tensor, name=scope)


_truncated_normal = _standard_op(
    "TruncatedNormal",
    "Samples of N(0, 1) with every value beyond 2 standard deviations redrawn.")


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Samples from a truncated normal distribution (``tf.truncated_normal``).

    Values more than two standard deviations from the mean are dropped and
    redrawn, so every value lies in ``[mean - 2 stddev, mean + 2 stddev]``.
    (The truncation shrinks the actual standard deviation to about
    ``0.8796 * stddev``.)  Built as ``TruncatedNormal(shape) * stddev + mean``;
    arguments as in :func:`random_normal`.
    """
    dtype = _float_dtype(dtype)
    graph = graph_of([shape, mean, stddev])
    with graph.as_default(), graph.name_scope(name or "truncated_normal") as scope:
        shape_tensor = _shape_tensor(shape)
        mean_tensor = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev_tensor = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        attrs = dict(_seed_attrs(seed), dtype=dtype)
        rnd = apply_op(_truncated_normal, [shape_tensor], attrs=attrs, name="TruncatedNormal")
        mul = math_ops.multiply(rnd, stddev_tensor, name="mul")
        return math_ops.add(mul, mean_tensor, name=scope)


# ---- uniform -----------------------------------------------------------------------------
_random_uniform = _standard_op("RandomUniform",
                               "Samples of U[0, 1) in a tensor of the given shape.")


def _scalar_inputs_shape(op):
    for t in op.inputs[1:]:
        if t.shape.ndims not in (None, 0):
            raise ValueError("Shape must be rank 0 but is rank %d" % t.shape.ndims)
    return _shape_from_input(op)


_random_uniform_int = define_op(
    "RandomUniformInt", inputs=("shape", "minval", "maxval"), attrs={"seed": 0, "seed2": 0},
    shape_fn=_scalar_inputs_shape, dtype_fn=lambda op: [op.inputs[1].dtype],
    type_constraint=_SHAPE_TYPES, same_dtype_inputs=("minval", "maxval"), stateful=True,
    doc="Integers drawn uniformly from [minval, maxval).")


def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Samples from a uniform distribution on ``[minval, maxval)`` (``tf.random_uniform``).

    Floats are built as ``RandomUniform(shape) * (maxval - minval) + minval``
    (``maxval`` defaults to 1).  Integers (int32, int64) come from one
    ``RandomUniformInt`` op, and ``maxval`` is required: the result is slightly
    biased unless ``maxval - minval`` is a power of two, as in TF.

    Args:
        shape: the output shape: a list, tuple, TensorShape or 1-D int32 tensor.
        minval: the inclusive lower bound (scalar).
        maxval: the exclusive upper bound (scalar).
        dtype: float16, float32, float64, int32 or int64.
        seed: the op-level seed (see :func:`tf.set_random_seed`).
        name: the name scope (default ``random_uniform``).

    Raises:
        ValueError: for an integer ``dtype`` without ``maxval``, or another dtype.
    """
    dtype = dtypes.as_dtype(dtype).base_dtype
    if dtype not in dtypes.FLOATING + (dtypes.int32, dtypes.int64):
        raise ValueError("Invalid dtype %r" % dtype)
    if maxval is None:
        if dtype.is_integer:
            raise ValueError("Must specify maxval for integer dtype %r" % dtype)
        maxval = 1
    graph = graph_of([shape, minval, maxval])
    with graph.as_default(), graph.name_scope(name or "random_uniform") as scope:
        shape_tensor = _shape_tensor(shape)
        minval = convert_to_tensor(minval, dtype=dtype, name="min")
        maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
        seeds = _seed_attrs(seed)
        if dtype.is_integer:
            return apply_op(_random_uniform_int, [shape_tensor, minval, maxval], attrs=seeds,
                            name=scope)
        rnd = apply_op(_random_uniform, [shape_tensor], attrs=dict(seeds, dtype=dtype),
                       name="RandomUniform")
        scaled = math_ops.multiply(rnd, math_ops.subtract(maxval, minval, name="sub"),
                                   name="mul")
        return math_ops.add(scaled, minval, name=scope)


# ---- permutations and categorical samples -----------------------------------------------------
_random_shuffle = define_op(
    "RandomShuffle", inputs=("value",), attrs={"seed": 0, "seed2": 0},
    shape_fn=lambda op: [op.inputs[0].shape], stateful=True,
    doc="A random permutation of value along its first dimension.")


def random_shuffle(value, seed=None, name=None):
    """Randomly permutes ``value`` along its first dimension (``tf.random_shuffle``).

    Example:
        ``[[1, 2], [3, 4], [5, 6]]`` may become ``[[5, 6], [1, 2], [3, 4]]``:
        rows move, each row stays intact.
    """
    graph = graph_of([value])
    with graph.as_default():
        return apply_op(_random_shuffle, [value], attrs=_seed_attrs(seed),
                        name=name or "RandomShuffle")


def _multinomial_shape(op):
    logits, num_samples = op.inputs
    logits_shape = logits.shape.with_rank(2)
    samples = constant_value(num_samples)
    return [TensorShape([logits_shape[0], None if samples is None else int(samples)])]


_multinomial = define_op(
    "Multinomial", inputs=("logits", "num_samples"),
    attrs={"seed": 0, "seed2": 0, "output_dtype": dtypes.int64},
    shape_fn=_multinomial_shape, dtype_fn=lambda op: [op.get_attr("output_dtype")],
    type_constraint=dtypes.FLOATING, stateful=True,
    doc="Class indices drawn from the softmax of each row of logits.")


def multinomial(logits, num_samples, seed=None, name=None, output_dtype=None):
    """Draws class indices from categorical distributions (``tf.multinomial``).

    Args:
        logits: ``[batch_size, num_classes]`` unnormalized log-probabilities:
            row ``i`` is the distribution ``softmax(logits[i])``.
        num_samples: how many independent samples to draw per row.
        seed: the op-level seed.
        output_dtype: int32 or int64 (default).

    Returns:
        A ``[batch_size, num_samples]`` tensor of class indices.
    """
    output_dtype = dtypes.as_dtype(output_dtype or dtypes.int64)
    graph = graph_of([logits, num_samples])
    with graph.as_default(), graph.name_scope(name or "multinomial"):
        logits = convert_to_tensor(logits, name="logits")
        attrs = dict(_seed_attrs(seed), output_dtype=output_dtype)
        return apply_op(_multinomial, [logits, num_samples], attrs=attrs, name="Multinomial")


not_differentiable("RandomStandardNormal", "TruncatedNormal", "RandomUniform",
                   "RandomUniformInt", "RandomShuffle", "Multinomial")
