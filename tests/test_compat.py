"""``tf.compat``: ``tf.compat.v1`` is the package itself; bytes/text helpers as TF's."""

import pytest

import minitf as tf


def test_v1_is_the_minitf_package():
    assert tf.compat.v1 is tf
    assert tf.compat.v1.train.Saver is tf.train.Saver
    assert tf.compat.v1.layers.dense is tf.layers.dense
    with pytest.raises(AttributeError, match="v3"):
        tf.compat.v3  # noqa: B018 - the lookup raises


def test_bytes_and_text_conversions():
    assert tf.compat.as_bytes("na\u00efve") == b"na\xc3\xafve"
    assert tf.compat.as_bytes(bytearray(b"ab")) == b"ab"
    assert tf.compat.as_text(b"na\xc3\xafve") == "na\u00efve"
    assert tf.compat.as_str(b"x") == "x" and tf.compat.as_str_any(3) == "3"
    assert tf.compat.as_str_any(b"y") == "y"
    with pytest.raises(TypeError, match="Expected binary or unicode string"):
        tf.compat.as_bytes(3)
    with pytest.raises(TypeError):
        tf.compat.as_text(3)
