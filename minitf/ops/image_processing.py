"""Image preprocessing built from ordinary ops: flips, crops, brightness, contrast, standardization.

The data-augmentation steps of TF1's image tutorials (CIFAR-10's
``distorted_inputs``) are not ops of their own: each is a few array, math and
random ops, exactly as TF builds them, so they run on any device and the
deterministic ones have gradients for free::

    image = tf.random_crop(image, [24, 24, 3])             # random_uniform % limit -> Slice
    image = tf.image.random_flip_left_right(image)         # cond(u < 0.5, ReverseV2, image)
    image = tf.image.random_brightness(image, max_delta=63)
    image = tf.image.random_contrast(image, lower=0.2, upper=1.8)
    image = tf.image.per_image_standardization(image)      # (x - mean) / adjusted_stddev

An image is ``[height, width, channels]`` and a batch
``[batch, height, width, channels]``; functions that accept both say so.
Shape errors that the static shape shows are a ``ValueError`` at
construction, as in TF.  The random functions take an op-level ``seed`` and
follow the graph-level seed like every random op
(:mod:`minitf.ops.random_ops`).

Brightness and contrast work in float32: an integer image is converted with
:func:`~minitf.ops.image_ops.convert_image_dtype` (to ``[0, 1]``), adjusted,
and converted back with saturation.  minitf builds ``adjust_contrast`` from
a mean and arithmetic where TF has one ``AdjustContrastv2`` op: the values
are the same, and the result is differentiable.

Mirrors ``tensorflow/python/ops/image_ops_impl.py`` (TF 1.15) and
``random_ops.random_crop``.
"""

from minitf.api_scopes import control_dependencies, name_scope
from minitf.framework import dtypes
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import (
    array_ops, comparison_ops, joining_ops, math_ops, nn_ops, padding_ops, random_ops,
    reduction_ops, slicing_ops, transpose_ops, unary_ops)
from minitf.ops.cond import cond
from minitf.ops.image_ops import convert_image_dtype
from minitf.ops.logging_ops import Assert


# ---- shape checks -------------------------------------------------------------------------------
def _check_image(image, batch_allowed=True):
    """Raises TF's ValueError when ``image``'s static shape is not an image's.

    An image is 3-D; with ``batch_allowed`` also a 4-D batch.
    """
    shape = image.shape
    if shape.ndims is None:
        raise ValueError("'image' (shape %s) must have a known rank in minitf" % shape)
    if shape.ndims < 3:
        raise ValueError("'image' (shape %s) must be at least three-dimensional." % shape)
    if batch_allowed and shape.ndims != 3 and shape.ndims != 4:
        raise ValueError("'image' must have either 3 or 4 dimensions.")
    if any(d == 0 for d in shape.as_list()[-3:]):
        raise ValueError("all dims of 'image.shape' must be > 0.")


def _image_dims(image):
    """``[batch, height, width, channels]`` of a 4-D image: ints where known, else scalars."""
    static = image.shape.as_list()
    dynamic = array_ops.shape(image)
    return [d if d is not None else dynamic[i] for i, d in enumerate(static)]


def _static_or_none(values):
    return [None if isinstance(v, Tensor) else v for v in values]


# ---- flips ------------------------------------------------------------------------------------
def _flip(image, axis, scope_name):
    with name_scope(None, scope_name, [image]):
        image = convert_to_tensor(image, name="image")
        _check_image(image)
        return transpose_ops.reverse(image, [axis + image.shape.ndims - 3])


def flip_left_right(image):
    """Mirrors ``image`` (3-D or a 4-D batch) horizontally (``tf.image.flip_left_right``)."""
    return _flip(image, 1, "flip_left_right")


def flip_up_down(image):
    """Mirrors ``image`` (3-D or a 4-D batch) vertically (``tf.image.flip_up_down``)."""
    return _flip(image, 0, "flip_up_down")


def _random_flip(image, axis, seed, scope_name):
    """Flips with probability 1/2: one coin for a 3-D image, one per image of a batch."""
    with name_scope(None, scope_name, [image]) as scope:
        image = convert_to_tensor(image, name="image")
        _check_image(image)
        if image.shape.ndims == 3:
            uniform_random = random_ops.random_uniform([], 0, 1.0, seed=seed)
            mirror_cond = comparison_ops.less(uniform_random, 0.5)
            result = cond(mirror_cond, lambda: transpose_ops.reverse(image, [axis]),
                          lambda: image, name=scope)
            result.set_shape(image.shape)
            return result
        batch_size = array_ops.shape(image)[0]
        uniform_random = random_ops.random_uniform([batch_size], 0, 1.0, seed=seed)
        flips = unary_ops.round(array_ops.reshape(uniform_random, [batch_size, 1, 1, 1]))
        flips = unary_ops.cast(flips, image.dtype)
        flipped = transpose_ops.reverse(image, [axis + 1])
        return flips * flipped + (1 - flips) * image


def random_flip_left_right(image, seed=None):
    """Mirrors ``image`` horizontally with probability 1/2 (``tf.image.random_flip_left_right``).

    Args:
        image: ``[height, width, channels]``, or a batch (each image decides alone).
        seed: the op-level seed.
    """
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    """Mirrors ``image`` vertically with probability 1/2 (``tf.image.random_flip_up_down``)."""
    return _random_flip(image, 0, seed, "random_flip_up_down")


# ---- crops and pads ---------------------------------------------------------------------------
def random_crop(value, size, seed=None, name=None):
    """A random ``size``-shaped slice of ``value`` (``tf.random_crop``, ``tf.image.random_crop``).

    Built as TF builds it: ``offset = random_uniform(...) % (shape - size + 1)``,
    then ``Slice(value, offset, size)``.

    Args:
        value: any tensor (an image: ``[h, w, c]``).
        size: the crop's shape, one entry per dimension of ``value``.
        seed: the op-level seed.
        name: the name scope (default ``random_crop``).

    Raises:
        InvalidArgumentError: at run time, when ``size`` exceeds ``value``'s shape.
    """
    with name_scope(name, "random_crop", [value, size]) as scope:
        value = convert_to_tensor(value, name="value")
        size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        shape = array_ops.shape(value)
        check = Assert(reduction_ops.reduce_all(comparison_ops.greater_equal(shape, size)),
                       ["Need value.shape >= size, got ", shape, size], summarize=1000)
        with control_dependencies([check]):
            shape = array_ops.identity(shape)
        limit = math_ops.add(math_ops.subtract(shape, size), 1)
        offset = math_ops.floormod(
            random_ops.random_uniform(array_ops.shape(shape), dtype=size.dtype,
                                      maxval=size.dtype.max, seed=seed), limit)
        return slicing_ops.slice(value, offset, size, name=scope)


def _batched(image):
    """``(4-D image, was it a batch)``: a 3-D image gets a batch dimension of 1."""
    image = convert_to_tensor(image, name="image")
    _check_image(image)
    if image.shape.ndims == 3:
        return array_ops.expand_dims(image, 0), False
    return image, True


def _unbatched(image, is_batch):
    return image if is_batch else array_ops.squeeze(image, axis=[0])


def _known(*values):
    """True when none of ``values`` is a tensor: a check on them can run now."""
    return not any(isinstance(v, Tensor) for v in values)


def _fail_if(condition, message):
    """TF's ``_assert`` for known values: a ``ValueError`` at construction."""
    if condition:
        raise ValueError(message)


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The ``target_height x target_width`` window at an offset (``tf.image.crop_to_bounding_box``).

    Args:
        image: 3-D or a 4-D batch.
        offset_height, offset_width: the window's top-left corner.
        target_height, target_width: the window's size.

    Raises:
        ValueError: when the known sizes do not fit.
    """
    with name_scope(None, "crop_to_bounding_box", [image]):
        image, is_batch = _batched(image)
        batch, height, width, depth = _image_dims(image)
        _fail_if(_known(offset_width) and offset_width < 0, "offset_width must be >= 0.")
        _fail_if(_known(offset_height) and offset_height < 0, "offset_height must be >= 0.")
        _fail_if(_known(target_width) and target_width <= 0, "target_width must be > 0.")
        _fail_if(_known(target_height) and target_height <= 0, "target_height must be > 0.")
        _fail_if(_known(width, target_width, offset_width) and width < target_width + offset_width,
                 "width must be >= target + offset.")
        _fail_if(_known(height, target_height, offset_height)
                 and height < target_height + offset_height, "height must be >= target + offset.")
        cropped = slicing_ops.slice(
            image, joining_ops.stack([0, offset_height, offset_width, 0]),
            joining_ops.stack([-1, target_height, target_width, -1]))
        cropped.set_shape(_static_or_none([batch, target_height, target_width, depth]))
        return _unbatched(cropped, is_batch)


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """Zero-pads ``image`` to ``target_height x target_width`` (``tf.image.pad_to_bounding_box``).

    The image's top-left corner lands at ``(offset_height, offset_width)``.

    Raises:
        ValueError: when the known sizes do not fit.
    """
    with name_scope(None, "pad_to_bounding_box", [image]):
        image, is_batch = _batched(image)
        batch, height, width, depth = _image_dims(image)
        after_width = target_width - offset_width - width
        after_height = target_height - offset_height - height
        _fail_if(_known(offset_height) and offset_height < 0, "offset_height must be >= 0")
        _fail_if(_known(offset_width) and offset_width < 0, "offset_width must be >= 0")
        _fail_if(_known(after_width) and after_width < 0, "width must be <= target - offset")
        _fail_if(_known(after_height) and after_height < 0, "height must be <= target - offset")
        paddings = array_ops.reshape(
            joining_ops.stack([0, 0, offset_height, after_height, offset_width, after_width,
                               0, 0]), [4, 2])
        padded = padding_ops.pad(image, paddings)
        padded.set_shape(_static_or_none([batch, target_height, target_width, depth]))
        return _unbatched(padded, is_batch)


def _max(x, y):
    return math_ops.maximum(x, y) if isinstance(x, Tensor) or isinstance(y, Tensor) else max(x, y)


def _min(x, y):
    return math_ops.minimum(x, y) if isinstance(x, Tensor) or isinstance(y, Tensor) else min(x, y)


def resize_image_with_crop_or_pad(image, target_height, target_width):
    """Centre-crops and/or zero-pads ``image`` (``tf.image.resize_image_with_crop_or_pad``).

    A dimension larger than the target is cropped around its centre; a
    smaller one is padded evenly with zeros on both sides.

    Args:
        image: 3-D or a 4-D batch.
        target_height, target_width: the size of the result (> 0).
    """
    with name_scope(None, "resize_image_with_crop_or_pad", [image]):
        image, is_batch = _batched(image)
        _fail_if(_known(target_width) and target_width <= 0, "target_width must be > 0.")
        _fail_if(_known(target_height) and target_height <= 0, "target_height must be > 0.")
        _, height, width, _ = _image_dims(image)
        width_diff = target_width - width
        height_diff = target_height - height
        cropped = crop_to_bounding_box(image, _max(-height_diff // 2, 0),
                                       _max(-width_diff // 2, 0),
                                       _min(target_height, height), _min(target_width, width))
        resized = pad_to_bounding_box(cropped, _max(height_diff // 2, 0),
                                      _max(width_diff // 2, 0), target_height, target_width)
        return _unbatched(resized, is_batch)


def central_crop(image, central_fraction):
    """The central ``central_fraction`` of ``image``'s height and width (``tf.image.central_crop``).

    Args:
        image: 3-D or a 4-D batch.
        central_fraction: in ``(0, 1]``; 0.5 keeps the middle half of each side.

    Raises:
        ValueError: for a fraction outside ``(0, 1]``.
    """
    with name_scope(None, "central_crop", [image]):
        image = convert_to_tensor(image, name="image")
        if central_fraction <= 0.0 or central_fraction > 1.0:
            raise ValueError("central_fraction must be within (0, 1]")
        if central_fraction == 1.0:
            return image
        image, is_batch = _batched(image)
        _, height, width, depth = _image_dims(image)
        starts = []
        for size in (height, width):
            if isinstance(size, Tensor):
                size = unary_ops.cast(size, dtypes.float64)
                starts.append(unary_ops.cast((size - size * central_fraction) / 2, dtypes.int32))
            else:
                starts.append(int((float(size) - float(size) * central_fraction) / 2))
        sizes = [height - 2 * starts[0], width - 2 * starts[1]]
        cropped = slicing_ops.slice(image, joining_ops.stack([0, starts[0], starts[1], 0]),
                                    joining_ops.stack([-1, sizes[0], sizes[1], -1]))
        cropped.set_shape([image.shape[0].value] + _static_or_none(sizes) + [depth])
        return _unbatched(cropped, is_batch)


# ---- standardization, brightness, contrast ------------------------------------------------------
def per_image_standardization(image):
    """Scales each image to mean 0 and variance 1 (``tf.image.per_image_standardization``).

    Computes ``(x - mean) / adjusted_stddev`` over each image's pixels and
    channels, with ``adjusted_stddev = max(stddev, 1 / sqrt(N))`` (``N``
    values per image) so a uniform image does not divide by zero.  The
    result is float32 (integer images are cast, not rescaled, as TF1 does).

    Args:
        image: ``[height, width, channels]`` or a batch.

    Returns:
        A float32 tensor of ``image``'s shape.
    """
    with name_scope(None, "per_image_standardization", [image]) as scope:
        image = convert_to_tensor(image, name="image")
        _check_image(image, batch_allowed=False)  # any rank >= 3: the last three are an image
        num_pixels = reduction_ops.reduce_prod(array_ops.shape(image)[-3:])
        image = unary_ops.cast(image, dtypes.float32)
        axes = [-1, -2, -3]
        image_mean = reduction_ops.reduce_mean(image, axis=axes, keepdims=True)
        variance = math_ops.subtract(
            reduction_ops.reduce_mean(unary_ops.square(image), axis=axes, keepdims=True),
            unary_ops.square(image_mean))
        stddev = unary_ops.sqrt(nn_ops.relu(variance))
        min_stddev = unary_ops.rsqrt(unary_ops.cast(num_pixels, dtypes.float32))
        pixel_value_scale = math_ops.maximum(stddev, min_stddev)
        image = math_ops.subtract(image, image_mean)
        return math_ops.div(image, pixel_value_scale, name=scope)


def _as_float(image):
    """``image`` itself when float16/float32, else converted to float32 in ``[0, 1]``."""
    if image.dtype.base_dtype in (dtypes.float16, dtypes.float32):
        return image
    return convert_image_dtype(image, dtypes.float32)


def adjust_brightness(image, delta):
    """Adds ``delta`` to every value of ``image`` (``tf.image.adjust_brightness``).

    An integer image is converted to float32 in ``[0, 1]`` first (so ``delta``
    is a fraction of the full range) and back, saturating, afterwards.
    """
    with name_scope(None, "adjust_brightness", [image, delta]) as scope:
        image = convert_to_tensor(image, name="image")
        original = image.dtype.base_dtype
        flt_image = _as_float(image)
        adjusted = math_ops.add(flt_image, unary_ops.cast(delta, flt_image.dtype), name=scope)
        return convert_image_dtype(adjusted, original, saturate=True)


def adjust_contrast(images, contrast_factor):
    """Scales each channel's deviation from its mean (``tf.image.adjust_contrast``).

    For every image and channel: ``(x - mean) * contrast_factor + mean``, the
    mean taken over height and width.  Integer images go through float32 as
    in :func:`adjust_brightness`.

    Args:
        images: at least 3-D, the last three dimensions ``[height, width, channels]``.
        contrast_factor: a float scalar.
    """
    with name_scope(None, "adjust_contrast", [images, contrast_factor]) as scope:
        images = convert_to_tensor(images, name="images")
        if images.shape.ndims is not None and images.shape.ndims < 3:
            raise ValueError("Shape must be at least rank 3 but is rank %d" % images.shape.ndims)
        original = images.dtype.base_dtype
        flt_images = _as_float(images)
        factor = unary_ops.cast(contrast_factor, flt_images.dtype)
        mean = reduction_ops.reduce_mean(flt_images, axis=[-3, -2], keepdims=True)
        adjusted = math_ops.add(math_ops.multiply(math_ops.subtract(flt_images, mean), factor),
                                mean, name=scope)
        return convert_image_dtype(adjusted, original, saturate=True)


def random_brightness(image, max_delta, seed=None):
    """:func:`adjust_brightness` by a random delta (``tf.image.random_brightness``).

    The delta is drawn uniformly from ``[-max_delta, max_delta)``.

    Raises:
        ValueError: for a negative ``max_delta``.
    """
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_ops.random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_brightness(image, delta)


def random_contrast(image, lower, upper, seed=None):
    """:func:`adjust_contrast` by a random factor (``tf.image.random_contrast``).

    The factor is drawn uniformly from ``[lower, upper)``.

    Raises:
        ValueError: unless ``0 <= lower < upper``.
    """
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    contrast_factor = random_ops.random_uniform([], lower, upper, seed=seed)
    return adjust_contrast(image, contrast_factor)


__all__ = ["adjust_brightness", "adjust_contrast", "central_crop", "crop_to_bounding_box",
           "flip_left_right", "flip_up_down", "pad_to_bounding_box", "per_image_standardization",
           "random_brightness", "random_contrast", "random_crop", "random_flip_left_right",
           "random_flip_up_down", "resize_image_with_crop_or_pad"]
