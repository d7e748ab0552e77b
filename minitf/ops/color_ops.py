"""Colour ops of ``tf.image``: grayscale, HSV, hue, saturation and gamma.

The image tutorials (CIFAR-10's ``distorted_inputs``, Hvass-Labs'
``pre_process_image``) jitter colours as well as brightness and contrast.
The three colour spaces involved:

* **grayscale** — one channel, the luma ``0.2989 R + 0.5870 G + 0.1140 B``
  (:func:`rgb_to_grayscale`, a ``tensordot`` with the weights, as in TF);
  :func:`grayscale_to_rgb` repeats it three times (``Tile``).
* **HSV** — hue, saturation, value, all in ``[0, 1]``: ``V = max(R, G, B)``,
  ``S = (V - min) / V`` (0 where ``V = 0``), and the hue the position on the
  colour wheel, ``(G - B) / (6 (V - min))`` when red is the largest (plus
  1/3 when green is, 2/3 when blue is, taken modulo 1).  ``RGBToHSV`` and
  ``HSVToRGB`` are ops, with TF's kernels' formulas.
* **RGB adjusted in HSV** — ``AdjustHue`` turns the hue by ``delta`` (a
  fraction of the wheel) and ``AdjustSaturation`` scales the saturation
  (clipped to ``[0, 1]``); both keep each pixel's value.  As in TF they
  work on float images, so an integer image is converted to float32 in
  ``[0, 1]`` first and back afterwards.

:func:`adjust_gamma` is ``gain * image ** gamma`` in float.  The random
variants draw their factor with ``random_uniform`` like ``random_brightness``.

Gradients: ``RGBToHSV`` has TF's (piecewise, with TF's tie rules for which
channel is the largest and the smallest); ``HSVToRGB``, ``AdjustHue`` and
``AdjustSaturation`` have none in TF and are declared not differentiable.
The compositions (grayscale, gamma) differentiate through their ops.

Mirrors ``tensorflow/python/ops/image_ops_impl.py`` and ``image_grad.py``
(TF 1.15) and the kernels ``colorspace_op.h``, ``adjust_hue_op.cc`` and
``adjust_saturation_op.cc``; the NumPy kernels are in
``plugins/numpy_cpu/kernels/image.py``.
"""

from minitf.api_scopes import control_dependencies, name_scope
from minitf.framework import dtypes
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import (
    array_ops, comparison_ops, joining_ops, linalg_ops, math_ops, padding_ops, random_ops,
    select_ops, unary_ops)
from minitf.ops.image_ops import convert_image_dtype
from minitf.ops.logging_ops import Assert
from minitf.ops.op_def_library import apply_op, define_op, gradient, not_differentiable

HSV_TYPES = (dtypes.float16, dtypes.float32, dtypes.float64)
ADJUST_TYPES = (dtypes.float16, dtypes.float32)
GRAY_WEIGHTS = [0.2989, 0.5870, 0.1140]


def _as_float(image):
    """``image`` itself when float16/float32, else converted to float32 in ``[0, 1]``."""
    if image.dtype.base_dtype in (dtypes.float16, dtypes.float32):
        return image
    return convert_image_dtype(image, dtypes.float32)


# ---- grayscale ----------------------------------------------------------------------------------
def rgb_to_grayscale(images, name=None):
    """The luma of RGB ``images``, a last dimension of 1 (``tf.image.rgb_to_grayscale``).

    ``gray = 0.2989 R + 0.5870 G + 0.1140 B``, computed in float32 and
    converted back to the images' dtype (so uint8 stays uint8).

    Args:
        images: any rank >= 1, the last dimension the 3 channels.
        name: the name scope (default ``rgb_to_grayscale``).
    """
    with name_scope(name, "rgb_to_grayscale", [images]) as scope:
        images = convert_to_tensor(images, name="images")
        original = images.dtype.base_dtype
        flt_image = convert_image_dtype(images, dtypes.float32)
        gray_float = linalg_ops.tensordot(flt_image, GRAY_WEIGHTS, [-1, -1])
        gray_float = array_ops.expand_dims(gray_float, -1)
        return convert_image_dtype(gray_float, original, name=scope)


def grayscale_to_rgb(images, name=None):
    """One-channel ``images`` with the channel repeated three times (``tf.image.grayscale_to_rgb``).

    Raises:
        ValueError: for a rank below 2 or a last dimension other than 1.
    """
    with name_scope(name, "grayscale_to_rgb", [images]) as scope:
        images = convert_to_tensor(images, name="images")
        shape = images.shape
        if shape.ndims is not None:
            if shape.ndims < 2:
                raise ValueError("'image' (shape %s) must be at least two-dimensional." % shape)
            if shape[-1].value is not None and shape[-1].value != 1:
                raise ValueError("Last dimension of a grayscale image should be size 1.")
        rank_1 = array_ops.expand_dims(array_ops.rank(images) - 1, 0)
        multiples = joining_ops.concat([array_ops.ones(rank_1, dtype=dtypes.int32),
                                        array_ops.expand_dims(3, 0)], 0)
        rgb = padding_ops.tile(images, multiples, name=scope)
        if shape.ndims is not None:
            rgb.set_shape(shape[:-1].concatenate([3]))
        return rgb


# ---- HSV ----------------------------------------------------------------------------------------
def _colorspace_shape(op):
    """The input's shape, whose last dimension must be the 3 channels."""
    shape = op.inputs[0].shape
    if shape.ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    if shape.ndims is not None and shape[-1].value not in (None, 3):
        raise ValueError("Dimension must be 3 but is %d" % shape[-1].value)
    return [shape if shape.ndims is None else shape[:-1].concatenate([3])]


_rgb_to_hsv = define_op("RGBToHSV", inputs=("images",), outputs=("output",),
                        shape_fn=_colorspace_shape, type_constraint=HSV_TYPES,
                        doc="RGB to hue, saturation, value; all in [0, 1].")
_hsv_to_rgb = define_op("HSVToRGB", inputs=("images",), outputs=("output",),
                        shape_fn=_colorspace_shape, type_constraint=HSV_TYPES,
                        doc="Hue, saturation, value to RGB.")


def rgb_to_hsv(images, name=None):
    """RGB ``images`` (floats in ``[0, 1]``) in HSV (``tf.image.rgb_to_hsv``).

    ``output[..., 0]`` is the hue, ``[..., 1]`` the saturation and
    ``[..., 2]`` the value, each in ``[0, 1]`` (formulas in the module
    docstring).

    Raises:
        ValueError: when the last dimension is known and not 3.
        TypeError: for an integer image (convert it first, as in TF).
    """
    return apply_op(_rgb_to_hsv, [images], name=name or "RGBToHSV")


def hsv_to_rgb(images, name=None):
    """HSV ``images`` back in RGB (``tf.image.hsv_to_rgb``); the inverse of :func:`rgb_to_hsv`.

    TF's kernel: with ``dh = 6 H``, ``R = V (1 - S + S clip(|dh - 3| - 1, 0, 1))``
    and likewise ``G`` with ``clip(2 - |dh - 2|, 0, 1)`` and ``B`` with
    ``clip(2 - |dh - 4|, 0, 1)``.
    """
    return apply_op(_hsv_to_rgb, [images], name=name or "HSVToRGB")


def _reciprocal(x):
    """``1 / x`` where ``x != 0``, else 0 (TF's ``_CustomReciprocal``)."""
    nonzero = comparison_ops.not_equal(x, 0.0)
    safe = select_ops.where(nonzero, x, array_ops.ones_like(x))
    return select_ops.where(nonzero, math_ops.div(1.0, safe), array_ops.zeros_like(x))


@gradient("RGBToHSV")
def _rgb_to_hsv_gradient(op, grad):
    """TF's piecewise derivative of the HSV formulas.

    Which channel is the largest (``V``) and the smallest decides the
    formula; ties go as in TF (red before green before blue for the largest,
    the reverse for the smallest).  With ``range = max - min``:

    * ``dV`` is 1 for the largest channel;
    * ``S = range / max``: ``dS/dmax = min / max**2``, ``dS/dmin = -1 / max``;
    * ``H = N / (6 range) + offset`` with ``N`` the difference of the other
      two channels (``G - B`` when red is largest, ``B - R`` for green,
      ``R - G`` for blue): ``dH = (dN range - N drange) / (6 range**2)``.
    """
    images = op.inputs[0]
    dtype = images.dtype.base_dtype
    red, green, blue = joining_ops.unstack(images, num=3, axis=-1)

    def mask(condition):
        return unary_ops.cast(condition, dtype)

    ge, gt = comparison_ops.greater_equal, comparison_ops.greater
    both = comparison_ops.logical_and
    largest = [mask(both(ge(red, blue), ge(red, green))),
               mask(both(gt(green, red), ge(green, blue))),
               mask(both(gt(blue, red), gt(blue, green)))]
    smallest = [mask(both(comparison_ops.less(red, blue), comparison_ops.less(red, green))),
                mask(both(comparison_ops.less_equal(green, red), comparison_ops.less(green, blue))),
                mask(both(comparison_ops.less_equal(blue, red),
                          comparison_ops.less_equal(blue, green)))]
    channels = [red, green, blue]
    v_max = math_ops.add_n([m * c for m, c in zip(largest, channels)])
    v_min = math_ops.add_n([m * c for m, c in zip(smallest, channels)])
    v_range = v_max - v_min
    # N for each case of the largest channel, and its derivative by each channel.
    numerator = largest[0] * (green - blue) + largest[1] * (blue - red) + \
        largest[2] * (red - green)
    d_numerator = [largest[2] - largest[1], largest[0] - largest[2], largest[1] - largest[0]]
    dh_denominator = _reciprocal(6.0 * unary_ops.square(v_range))
    positive = mask(gt(v_max, 0.0))
    grad_h, grad_s, grad_v = joining_ops.unstack(grad, num=3, axis=-1)
    results = []
    for i in range(3):
        d_range = largest[i] - smallest[i]
        dh = (d_numerator[i] * v_range - numerator * d_range) * dh_denominator
        ds = positive * (largest[i] * v_min * _reciprocal(unary_ops.square(v_max))
                         - smallest[i] * _reciprocal(v_max))
        results.append(grad_h * dh + grad_s * ds + grad_v * largest[i])
    return [joining_ops.stack(results, axis=-1)]


not_differentiable("HSVToRGB", reason="TF registers no gradient for it")


# ---- hue and saturation -------------------------------------------------------------------------
def _adjust_shape(op):
    shape = op.inputs[0].shape
    if shape.ndims is not None and shape.ndims < 3:
        raise ValueError("Shape must be at least rank 3 but is rank %d" % shape.ndims)
    if op.inputs[1].shape.ndims not in (None, 0):
        raise ValueError("Shape must be rank 0 but is rank %d" % op.inputs[1].shape.ndims)
    return [shape]


_adjust_hue = define_op("AdjustHue", inputs=("images", "delta"), outputs=("output",),
                        shape_fn=_adjust_shape, type_constraint=ADJUST_TYPES,
                        doc="Turns the hue of RGB images by delta (a fraction of the wheel).")
_adjust_saturation = define_op(
    "AdjustSaturation", inputs=("images", "scale"), outputs=("output",),
    shape_fn=_adjust_shape, type_constraint=ADJUST_TYPES,
    doc="Scales the saturation of RGB images, clipped to [0, 1].")
not_differentiable("AdjustHue", "AdjustSaturation", reason="TF registers no gradient for them")


def adjust_hue(image, delta, name=None):
    """Turns the hue of RGB ``image`` by ``delta`` (``tf.image.adjust_hue``).

    Each pixel's hue moves ``delta`` of the way round the colour wheel
    (modulo 1); its lowest and highest channels keep their values.

    Args:
        image: RGB images, at least 3-D, the last dimension the 3 channels.
        delta: a float in ``[-1, 1]``.
        name: the name scope (default ``adjust_hue``).

    Returns:
        ``image``'s shape and dtype (an integer image goes through float32).
    """
    with name_scope(name, "adjust_hue", [image]):
        image = convert_to_tensor(image, name="image")
        original = image.dtype.base_dtype
        flt_image = _as_float(image)
        delta = convert_to_tensor(delta, dtype=dtypes.float32, name="delta")
        rgb_altered = apply_op(_adjust_hue, [flt_image, delta], name="AdjustHue")
        return convert_image_dtype(rgb_altered, original)


def adjust_saturation(image, saturation_factor, name=None):
    """Scales the saturation of RGB ``image`` (``tf.image.adjust_saturation``).

    In HSV, ``S = min(max(S * saturation_factor, 0), 1)``; hue and value
    are kept.  0 gives the gray image of the same value.

    Args:
        image: RGB images, at least 3-D, the last dimension the 3 channels.
        saturation_factor: a float.
        name: the name scope (default ``adjust_saturation``).
    """
    with name_scope(name, "adjust_saturation", [image]):
        image = convert_to_tensor(image, name="image")
        original = image.dtype.base_dtype
        flt_image = _as_float(image)
        scale = convert_to_tensor(saturation_factor, dtype=dtypes.float32, name="scale")
        adjusted = apply_op(_adjust_saturation, [flt_image, scale], name="AdjustSaturation")
        return convert_image_dtype(adjusted, original)


def random_hue(image, max_delta, seed=None):
    """:func:`adjust_hue` by a delta drawn from ``[-max_delta, max_delta)``
    (``tf.image.random_hue``).

    Raises:
        ValueError: unless ``0 <= max_delta <= 0.5``.
    """
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_ops.random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_hue(image, delta)


def random_saturation(image, lower, upper, seed=None):
    """:func:`adjust_saturation` by a factor drawn from ``[lower, upper)``
    (``tf.image.random_saturation``).

    Raises:
        ValueError: unless ``0 <= lower < upper``.
    """
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    saturation_factor = random_ops.random_uniform([], lower, upper, seed=seed)
    return adjust_saturation(image, saturation_factor)


# ---- gamma --------------------------------------------------------------------------------------
def adjust_gamma(image, gamma=1, gain=1):
    """Gamma correction, ``gain * image ** gamma`` (``tf.image.adjust_gamma``).

    An integer image is converted to float32 in ``[0, 1]`` first and back,
    saturating, afterwards (so ``gain`` scales the full range).

    Raises:
        ValueError: for a Python ``gamma`` below 0 (a tensor one is checked
            when the op runs: ``InvalidArgumentError``).
    """
    with name_scope(None, "adjust_gamma", [image, gamma, gain]):
        image = convert_to_tensor(image, name="image")
        original = image.dtype.base_dtype
        flt_image = _as_float(image)
        if isinstance(gamma, Tensor):
            check = Assert(comparison_ops.greater_equal(gamma, 0),
                           ["Gamma should be a non-negative real number."])
            with control_dependencies([check]):
                gamma = array_ops.identity(gamma)
        elif gamma < 0:
            raise ValueError("Gamma should be a non-negative real number.")
        adjusted = gain * flt_image ** gamma
        return convert_image_dtype(adjusted, original, saturate=True)


__all__ = ["adjust_gamma", "adjust_hue", "adjust_saturation", "grayscale_to_rgb",
           "hsv_to_rgb", "random_hue", "random_saturation", "rgb_to_grayscale", "rgb_to_hsv"]
