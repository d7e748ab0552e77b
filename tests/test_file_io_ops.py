"""``tf.read_file`` / ``tf.write_file``: whole files as scalar string tensors."""

import os

import numpy as np
import pytest

import minitf as tf


def test_write_then_read_round_trips_bytes(tmp_path, sess):
    path = str(tmp_path / "new" / "dir" / "blob.bin")  # missing directories are created
    payload = bytes(range(256)) * 3  # not UTF-8
    write = tf.write_file(path, payload)
    assert isinstance(write, tf.Operation) and write.type == "WriteFile"
    assert sess.run(write) is None
    read = tf.read_file(path)
    assert read.dtype == tf.string and read.shape == [] and read.op.name == "ReadFile"
    assert sess.run(read) == payload
    with open(path, "rb") as f:
        assert f.read() == payload


def test_read_file_runs_every_time(tmp_path, sess):
    """A stateful op: a changed file is read again, never folded into a constant."""
    path = tmp_path / "x.txt"
    path.write_bytes(b"one")
    read = tf.read_file(str(path))
    assert sess.run(read) == b"one"
    sess.run(tf.write_file(str(path), "two"))  # replaces the file
    assert sess.run(read) == b"two"
    assert not [name for name in os.listdir(tmp_path) if name != "x.txt"]  # no temporary left


def test_filenames_can_be_fed_and_mapped_over(tmp_path, sess):
    for name in ("a", "b"):
        (tmp_path / name).write_bytes(name.encode() * 2)
    filename = tf.placeholder(tf.string, [])
    contents = tf.io.read_file(filename)
    assert sess.run(contents, {filename: str(tmp_path / "b")}) == b"bb"
    dataset = tf.data.Dataset.from_tensor_slices([str(tmp_path / n) for n in ("a", "b")])
    element = dataset.map(tf.read_file).make_one_shot_iterator().get_next()
    assert [sess.run(element), sess.run(element)] == [b"aa", b"bb"]


def test_missing_file_is_a_run_time_not_found_error(tmp_path, sess):
    read = tf.read_file(str(tmp_path / "nope.txt"))  # building the op checks nothing
    with pytest.raises(tf.errors.NotFoundError, match="nope.txt; No such file or directory"):
        sess.run(read)
    with pytest.raises(tf.errors.FailedPreconditionError, match="Is a directory"):
        sess.run(tf.read_file(str(tmp_path)))
    target = tmp_path / "file"
    target.write_bytes(b"")
    with pytest.raises(tf.errors.FailedPreconditionError):
        sess.run(tf.write_file(str(target / "below"), "x"))  # a file is not a directory


def test_construction_errors():
    with pytest.raises(ValueError, match="rank 0"):
        tf.read_file(["a", "b"])
    with pytest.raises(TypeError):
        tf.read_file(np.int32(3))
    with pytest.raises(ValueError, match="rank 0"):
        tf.write_file("a", ["x", "y"])
    assert tf.io.write_file is tf.write_file
