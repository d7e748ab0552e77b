"""Synthetic handwritten-looking digits: MNIST's shape, drawn on the spot, no files.

Real MNIST (:mod:`minitf.datasets.mnist`) needs four files or a network
connection.  When neither is at hand — a fresh clone in CI, a laptop on a
train — a course still wants a digit classifier to train, so this module
draws digits itself: each digit is a few pen strokes (lines and elliptic
arcs) in a unit box, and every example gets its own random handwriting:

* the stroke's control points are jittered a little (a wobbly hand);
* the whole digit is rotated, sheared, scaled and shifted (an affine map);
* the pen has a random thickness, and its edge is anti-aliased.

Pixels are rendered from the distance to the nearest stroke segment, then
quantised to ``uint8`` 28 x 28 images with labels 0-9 — the arrays
:func:`~minitf.datasets.load_mnist` returns, so code written for one runs on
the other.  The same ``seed`` always gives the same images (NumPy's
``default_rng``), so results are reproducible.

The digits are easier than MNIST's (one stroke style per digit), so a small
MLP reaches 95-99% test accuracy on them within an epoch or two; accuracy on
real MNIST is the number to quote.

Example:
    >>> (x_train, y_train), (x_test, y_test) = load_synthetic_digits(1000, 200, seed=0)
    >>> x_train.shape, x_train.dtype, y_train.dtype
    ((1000, 28, 28), dtype('uint8'), dtype('int64'))
"""

import numpy as np

IMAGE_SIZE = 28
_ARC_SEGMENTS = 14


def _arc(cx, cy, rx, ry, start, stop):
    """Points of an elliptic arc; angles in degrees, 0 = right, 90 = down (image y)."""
    angles = np.radians(np.linspace(start, stop, _ARC_SEGMENTS + 1))
    return np.stack([cx + rx * np.cos(angles), cy + ry * np.sin(angles)], axis=1)


def _line(*points):
    return np.array(points, dtype=np.float64)


# Each digit: its ways of being written (people write 1, 4, 7 and 9 in more
# than one way), each a list of polylines — arrays of [x, y] points in the
# unit box, y pointing down like image rows.  A digit fills about the middle
# 20 x 20 pixels of the 28 x 28 image, as MNIST's do.
GLYPHS = {
    0: [[_arc(0.5, 0.5, 0.2, 0.34, 0, 360)]],
    1: [[_line((0.38, 0.28), (0.52, 0.16), (0.52, 0.84))],
        [_line((0.5, 0.16), (0.5, 0.84))],
        [_line((0.38, 0.28), (0.52, 0.16), (0.52, 0.84)), _line((0.36, 0.84), (0.68, 0.84))]],
    2: [[np.concatenate([_arc(0.5, 0.35, 0.2, 0.19, 190, 385),
                         _line((0.3, 0.84), (0.72, 0.84))])],
        [np.concatenate([_arc(0.5, 0.35, 0.2, 0.19, 190, 385),
                         _arc(0.38, 0.8, 0.08, 0.06, 270, 30), _line((0.45, 0.83), (0.72, 0.8))])]],
    3: [[_arc(0.48, 0.33, 0.18, 0.17, -160, 90), _arc(0.48, 0.66, 0.21, 0.18, -90, 160)],
        [_line((0.3, 0.16), (0.68, 0.16), (0.46, 0.44)), _arc(0.48, 0.64, 0.21, 0.2, -90, 160)]],
    4: [[_line((0.62, 0.84), (0.62, 0.16), (0.28, 0.62), (0.76, 0.62))],
        [_line((0.32, 0.16), (0.3, 0.58), (0.74, 0.58)), _line((0.64, 0.3), (0.64, 0.84))]],
    5: [[np.concatenate([_line((0.7, 0.16), (0.36, 0.16), (0.33, 0.46)),
                         _arc(0.5, 0.64, 0.2, 0.2, -130, 150)])]],
    6: [[np.concatenate([_line((0.64, 0.16), (0.44, 0.36)),
                         _arc(0.5, 0.64, 0.19, 0.2, 210, 570)])],
        [np.concatenate([_arc(0.66, 0.62, 0.34, 0.46, 235, 180),
                         _arc(0.5, 0.66, 0.18, 0.18, 180, 540)])]],
    7: [[_line((0.28, 0.16), (0.72, 0.16), (0.44, 0.84))],
        [_line((0.28, 0.16), (0.72, 0.16), (0.44, 0.84)), _line((0.42, 0.5), (0.68, 0.5))]],
    8: [[_arc(0.5, 0.32, 0.16, 0.16, 90, 450), _arc(0.5, 0.66, 0.2, 0.18, -90, 270)]],
    9: [[np.concatenate([_arc(0.5, 0.36, 0.18, 0.19, 0, 360),
                         _line((0.68, 0.36), (0.6, 0.84))])],
        [np.concatenate([_arc(0.5, 0.36, 0.18, 0.19, 0, 360),
                         _arc(0.38, 0.4, 0.3, 0.44, 0, 80)])]],
}


def _segments(lines):
    """Polylines ``[n, P, 2]`` (a list of them) as segments ``[n, S, 2 (ends), 2 (x, y)]``."""
    return np.concatenate([np.stack([line[:, :-1], line[:, 1:]], axis=2) for line in lines],
                          axis=1)


def _random_affine(rng, count):
    """``count`` random 2 x 2 maps (rotation, shear, scale) and shifts, about the centre."""
    angle = np.radians(rng.uniform(-14, 14, count))
    shear = rng.uniform(-0.25, 0.25, count)
    scale_x = rng.uniform(0.8, 1.1, count)
    scale_y = rng.uniform(0.8, 1.0, count)
    cos, sin = np.cos(angle), np.sin(angle)
    rotation = np.stack([np.stack([cos, -sin], -1), np.stack([sin, cos], -1)], -2)
    shape = np.zeros((count, 2, 2))
    shape[:, 0, 0], shape[:, 0, 1], shape[:, 1, 1] = scale_x, shear * scale_y, scale_y
    shift = rng.uniform(-0.05, 0.05, (count, 2))
    return rotation @ shape, shift


def _render(segments, thickness):
    """Images ``[n, 28, 28]`` in [0, 1] of ``n`` digits, each a set of segments.

    Args:
        segments: ``[n, S, 2, 2]`` segment end points in the unit box.
        thickness: ``[n]`` pen half-widths, in the unit box's units.
    """
    centres = ((np.arange(IMAGE_SIZE) + 0.5) / IMAGE_SIZE).astype(np.float32)
    px = np.tile(centres, IMAGE_SIZE)[None, :, None]     # [1, 784, 1]: x varies along a row
    py = np.repeat(centres, IMAGE_SIZE)[None, :, None]
    segments = segments.astype(np.float32)
    sx, sy = segments[:, None, :, 0, 0], segments[:, None, :, 0, 1]       # [n, 1, S]
    dx, dy = segments[:, None, :, 1, 0] - sx, segments[:, None, :, 1, 1] - sy
    length2 = np.maximum(dx * dx + dy * dy, np.float32(1e-12))
    # Project every pixel onto every segment, clamped to its ends ([n, 784, S]);
    # the distance to the digit is the smallest distance to any segment.
    ox, oy = px - sx, py - sy
    t = np.clip((ox * dx + oy * dy) / length2, 0.0, 1.0)
    ox -= t * dx
    oy -= t * dy
    distance = np.sqrt(np.min(ox * ox + oy * oy, axis=-1))                 # [n, 784]
    pixel = 1.0 / IMAGE_SIZE   # one pixel of anti-aliased edge
    ink = np.clip((thickness[:, None] - distance) / pixel + 0.5, 0.0, 1.0)
    return ink.reshape(-1, IMAGE_SIZE, IMAGE_SIZE)


def _inside_margin(strokes, thickness, margin=2.0 / IMAGE_SIZE):
    """``strokes`` shifted so that their ink stays ``margin`` away from the image's edges.

    MNIST's digits never touch its two outermost rows and columns; a digit
    the random map pushed out is pushed back in.
    """
    reach = thickness[:, None] + 0.5 / IMAGE_SIZE                 # pen and anti-aliased edge
    low = strokes.min(axis=(1, 2)) - reach                        # [n, 2]: x and y
    high = strokes.max(axis=(1, 2)) + reach
    shift = np.maximum(margin - low, 0.0) - np.maximum(high - (1.0 - margin), 0.0)
    return strokes + shift[:, None, None]


def _draw(glyph, count, rng):
    """``count`` random handwritings of one glyph, as ``uint8`` images."""
    # A wobbly hand: every point of the glyph moves a little (points, not
    # segments, so that the strokes stay connected), and every stroke a
    # little more as a whole; then the digit is centred on the box's middle.
    lines = [line[None] - 0.5 + rng.normal(0.0, 0.015, (count,) + line.shape)
             + rng.normal(0.0, 0.015, (count, 1, 2)) for line in glyph]
    linear, shift = _random_affine(rng, count)
    strokes = np.einsum("nij,nsej->nsei", linear, _segments(lines)) + 0.5 + shift[:, None, None]
    thickness = rng.uniform(0.035, 0.075, count)
    ink = _render(_inside_margin(strokes, thickness), thickness)
    return np.round(ink * 255.0).astype(np.uint8)


def render_digits(labels, seed=None, chunk=256):
    """Draws one randomly handwritten image per label.

    Args:
        labels: digits 0-9.
        seed: seeds NumPy's ``default_rng`` (None: different images each call).
        chunk: how many images to render at once (bounds the memory used).

    Returns:
        ``uint8`` images ``[len(labels), 28, 28]``, 0 = background, 255 = ink.
    """
    labels = np.asarray(labels, dtype=np.int64)
    rng = np.random.default_rng(seed)
    images = np.empty((len(labels), IMAGE_SIZE, IMAGE_SIZE), dtype=np.uint8)
    for digit in range(10):
        where = np.flatnonzero(labels == digit)
        styles = rng.integers(len(GLYPHS[digit]), size=len(where))
        for style, glyph in enumerate(GLYPHS[digit]):
            chosen = where[styles == style]
            for begin in range(0, len(chosen), chunk):
                index = chosen[begin:begin + chunk]
                images[index] = _draw(glyph, len(index), rng)
    return images


def load_synthetic_digits(num_train=12000, num_test=2000, seed=0):
    """A training and a test set of synthetic digits, shaped like MNIST's.

    The labels cycle through 0-9 and are then shuffled, so each class has
    (almost) the same number of examples.  Training and test images are drawn
    from different random streams of the same ``seed``.

    Args:
        num_train: training examples.
        num_test: test examples.
        seed: makes the whole data set reproducible.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: ``uint8`` images
        ``[n, 28, 28]`` and ``int64`` labels ``[n]``, as
        :func:`~minitf.datasets.load_mnist` returns them.
    """
    parts = []
    for count, stream in ((num_train, 0), (num_test, 1)):
        rng = np.random.default_rng([seed, stream])
        labels = rng.permutation(np.arange(count) % 10)
        images = render_digits(labels, seed=rng.integers(2 ** 63))
        parts.append((images, labels))
    return tuple(parts)
