"""``tf.compat``: the versioned API names and the bytes/text helpers of TF1.

TensorFlow 1.13+ programs often spell the graph-mode API through
``tf.compat.v1`` (``tf.compat.v1.placeholder``,
``tf.compat.v1.data.make_one_shot_iterator``) so that they run unchanged on
TensorFlow 2.  minitf *is* the v1 API, so ``tf.compat.v1`` is simply the
``minitf`` package itself; it is looked up on first use (PEP 562 module
``__getattr__``) because this module is imported while ``minitf`` is still
being initialised.

Example:
    >>> import minitf as tf
    >>> tf.compat.v1 is tf
    True
    >>> tf.compat.as_bytes("naïve"), tf.compat.as_text(b"ok")
    (b'na\\xc3\\xafve', 'ok')
"""

import sys

__all__ = ["as_bytes", "as_str", "as_str_any", "as_text", "disable_eager_execution",
           "disable_v2_behavior", "enable_eager_execution", "executing_eagerly", "v1"]


def as_bytes(bytes_or_text, encoding="utf-8"):
    """Returns ``bytes_or_text`` as ``bytes``, encoding text (``tf.compat.as_bytes``).

    Raises:
        TypeError: if the value is neither ``bytes``, ``bytearray`` nor ``str``.
    """
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError("Expected binary or unicode string, got %r" % (bytes_or_text,))


def as_text(bytes_or_text, encoding="utf-8"):
    """Returns ``bytes_or_text`` as ``str``, decoding bytes (``tf.compat.as_text``).

    Raises:
        TypeError: if the value is neither ``bytes`` nor ``str``.
    """
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError("Expected binary or unicode string, got %r" % (bytes_or_text,))


as_str = as_text  # TF's alias: Python 3's str is text


def as_str_any(value):
    """``str(value)``, but bytes are decoded rather than shown as ``b'...'``
    (``tf.compat.as_str_any``)."""
    if isinstance(value, bytes):
        return as_str(value)
    return str(value)


# ---- TF2's switches, as TF1 programs ported to TF2 call them ----------------------------------
def executing_eagerly():
    """False: minitf always builds a graph and runs it in a session (``tf.executing_eagerly``)."""
    return False


def disable_eager_execution():
    """Does nothing: minitf has graph mode only (``tf.compat.v1.disable_eager_execution``)."""


def disable_v2_behavior():
    """Does nothing: minitf *is* the v1 behaviour (``tf.compat.v1.disable_v2_behavior``)."""


def enable_eager_execution(config=None, device_policy=None, execution_mode=None):
    """Raises: minitf has no eager mode (build a graph and run it in a ``tf.Session``).

    Raises:
        NotImplementedError: always.
    """
    raise NotImplementedError("minitf has no eager execution: build the graph, then run it in a "
                              "tf.Session (see docs/differences.rst)")


def __getattr__(name):
    """``tf.compat.v1``: the ``minitf`` package, found once it is imported."""
    if name == "v1":
        return sys.modules["minitf"]
    raise AttributeError("module 'minitf.compat' has no attribute %r" % name)
