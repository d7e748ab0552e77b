"""``tf.image``: decoding, encoding, resizing and augmenting images.

The ops with kernels of their own (the codecs, the resize ops, dtype
conversion) are in :mod:`minitf.ops.image_ops`; the functions built from
ordinary ops (flips, crops, brightness, contrast, standardization) in
:mod:`minitf.ops.image_processing`; the colour ops (grayscale, HSV, hue,
saturation, gamma) in :mod:`minitf.ops.color_ops`.  This module gives them TF1's
``tf.image`` names.  See ``docs/concepts/images_and_strings.rst``.
"""

from minitf.ops.image_ops import (  # noqa: F401 - the public API
    ResizeMethod, convert_image_dtype, decode_image, decode_jpeg, decode_png, encode_jpeg,
    encode_png, resize_bilinear, resize_images, resize_nearest_neighbor)
from minitf.ops.image_processing import (  # noqa: F401
    adjust_brightness, adjust_contrast, central_crop, crop_to_bounding_box, flip_left_right,
    flip_up_down, pad_to_bounding_box, per_image_standardization, random_brightness,
    random_contrast, random_crop, random_flip_left_right, random_flip_up_down,
    resize_image_with_crop_or_pad)
from minitf.ops.color_ops import (  # noqa: F401
    adjust_gamma, adjust_hue, adjust_saturation, grayscale_to_rgb, hsv_to_rgb, random_hue,
    random_saturation, rgb_to_grayscale, rgb_to_hsv)

resize = resize_images  # TF1's tf.image.resize is resize_images
resize_with_crop_or_pad = resize_image_with_crop_or_pad
