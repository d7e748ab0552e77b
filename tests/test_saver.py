"""Checkpoints: ``tf.train.Saver``, the state file, the on-disk format, meta graphs.

The semantics checked here (op names, file names, the state file's text, the
error classes and messages) were confirmed against TensorFlow 1.x
(``tf.compat.v1`` with ref variables); the tests themselves need only minitf.
"""

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import meta_graph_pb2, variable_pb2

import minitf as tf
from minitf.framework.graph_def import import_graph_def
from minitf.ops import io_ops
from minitf.train import checkpoint_format
from minitf.train.checkpoint_state import CheckpointState


def _model(shape=(2,), names=("v", "w"), dtype=tf.float32):
    """Variables v=[1, 2] (or zeros of ``shape``) and w=3 in the default graph, and a Saver."""
    variables = []
    for i, name in enumerate(names):
        if i == 0 and shape == (2,):
            initial = tf.constant([1.0, 2.0], dtype=dtype)
        elif i == 0:
            initial = tf.zeros(shape, dtype=dtype)
        else:
            initial = tf.constant(3, dtype=tf.int32)
        variables.append(tf.Variable(initial, name=name))
    return variables, tf.train.Saver()


def _saved_model(directory, **save_kwargs):
    """Saves the model of :func:`_model` (v=[5, 6], w=3) in a graph of its own."""
    with tf.Graph().as_default():
        (v, w), saver = _model()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(v.assign([5.0, 6.0]))
            return saver.save(sess, os.path.join(str(directory), "model.ckpt"), **save_kwargs)


# ---- save and restore ------------------------------------------------------------------------
def test_saver_builds_tf_ops():
    _, saver = _model()
    ops = {op.name: op for op in tf.get_default_graph().get_operations()
           if op.name.startswith("save/")}
    assert ops["save/Const"].type == "PlaceholderWithDefault"
    save = ops["save/SaveV2"]
    assert save.type == "SaveV2"
    assert [t.name for t in save.inputs] == [
        "save/Const:0", "save/SaveV2/tensor_names:0", "save/SaveV2/shape_and_slices:0",
        "v:0", "w:0"]
    assert ops["save/RestoreV2"].type == "RestoreV2" and len(ops["save/RestoreV2"].outputs) == 2
    assert [t.name for t in ops["save/Assign_1"].inputs] == ["w:0", "save/RestoreV2:1"]
    assert sorted(c.name for c in ops["save/restore_all"].control_inputs) == [
        "save/Assign", "save/Assign_1"]
    other = tf.train.Saver(name="other").saver_def
    assert (other.filename_tensor_name, other.save_tensor_name, other.restore_op_name) == (
        "other/Const:0", "other/control_dependency:0", "other/restore_all")
    assert tf.train.Saver().saver_def.restore_op_name == "save_1/restore_all"
    assert str(saver.saver_def) == textwrap.dedent("""\
        filename_tensor_name: "save/Const:0"
        save_tensor_name: "save/control_dependency:0"
        restore_op_name: "save/restore_all"
        max_to_keep: 5
        keep_checkpoint_every_n_hours: 10000
        version: V2
        """)


def test_save_writes_tf_file_layout_and_restores(tmp_path):
    (v, w), saver = _model()
    prefix = str(tmp_path / "model.ckpt")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert saver.save(sess, prefix) == prefix
        sess.run([v.assign([7.0, 8.0]), w.assign(9)])
        np.testing.assert_array_equal(sess.run(v), [7.0, 8.0])
        saver.restore(sess, prefix)
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
        assert sess.run(w) == 3
    assert sorted(os.listdir(tmp_path)) == [
        "checkpoint", "model.ckpt.data-00000-of-00001", "model.ckpt.index", "model.ckpt.meta"]
    with tf.Session() as sess:  # restoring initializes: no initializer needed
        saver.restore(sess, prefix)
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


def test_global_step_suffix_int_tensor_and_padding(tmp_path):
    (v, w), saver = _model()
    step = tf.Variable(42, name="global_step", trainable=False)
    saver = tf.train.Saver([v, w, step])
    padded = tf.train.Saver([v], pad_step_number=True, name="padded")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert saver.save(sess, str(tmp_path / "m"), global_step=100) == str(tmp_path / "m-100")
        assert saver.save(sess, str(tmp_path / "m"), global_step=step) == str(tmp_path / "m-42")
        # A NumPy integer (step.eval()) is a step number too, as in TF (CS20si's char_rnn).
        assert saver.save(sess, str(tmp_path / "m"), global_step=np.int32(43)) == str(
            tmp_path / "m-43")
        assert padded.save(sess, str(tmp_path / "p"), global_step=7,
                           latest_filename="padded_state") == str(tmp_path / "p-00000007")
    assert os.path.exists(str(tmp_path / "m-42.index"))
    assert tf.train.latest_checkpoint(str(tmp_path), "padded_state") == str(tmp_path / "p-00000007")


def test_state_file_is_tf_text_format(tmp_path):
    _, saver = _model()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in (100, 200):
            saver.save(sess, str(tmp_path / "model.ckpt"), global_step=step)
    d = str(tmp_path)
    assert (tmp_path / "checkpoint").read_text() == (
        'model_checkpoint_path: "%s/model.ckpt-200"\n'
        'all_model_checkpoint_paths: "%s/model.ckpt-100"\n'
        'all_model_checkpoint_paths: "%s/model.ckpt-200"\n' % (d, d, d))
    assert tf.train.latest_checkpoint(d) == d + "/model.ckpt-200"
    state = tf.train.get_checkpoint_state(d)
    assert state.model_checkpoint_path == d + "/model.ckpt-200"
    assert state.all_model_checkpoint_paths == [d + "/model.ckpt-100", d + "/model.ckpt-200"]
    assert tf.train.checkpoint_exists(d + "/model.ckpt-100")
    assert not tf.train.checkpoint_exists(d + "/model.ckpt-300")


def test_relative_paths(tmp_path, monkeypatch):
    _, saver = _model()
    relative = tf.train.Saver(save_relative_paths=True, name="rel")
    monkeypatch.chdir(tmp_path)
    os.mkdir("run")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert saver.save(sess, "run/model", global_step=1) == "run/model-1"
        assert (tmp_path / "run" / "checkpoint").read_text().startswith(
            'model_checkpoint_path: "model-1"\n')
        relative.save(sess, str(tmp_path / "run" / "abs"), global_step=2)
        assert (tmp_path / "run" / "checkpoint").read_text().startswith(
            'model_checkpoint_path: "abs-2"\n')
        assert tf.train.latest_checkpoint("run") == os.path.join("run", "abs-2")
        saver.restore(sess, tf.train.latest_checkpoint("run"))


def test_missing_state_file_and_tf_written_state(tmp_path):
    assert tf.train.latest_checkpoint(str(tmp_path / "nothing")) is None
    assert tf.train.get_checkpoint_state(str(tmp_path)) is None
    text = ('model_checkpoint_path: "a \\"quoted\\" \\303\\251 name"\n'
            'all_model_checkpoint_paths: "a \\"quoted\\" \\303\\251 name"\n'
            "all_model_checkpoint_timestamps: 1700000000.5\n"
            "last_preserved_timestamp: 1699999999.25\n")
    state = CheckpointState.from_text(text)
    assert state.model_checkpoint_path == 'a "quoted" \u00e9 name'
    assert state.all_model_checkpoint_timestamps == [1700000000.5]
    assert CheckpointState.from_text(state.to_text()) == state
    (tmp_path / "checkpoint").write_text("this is not a state file\n")
    assert tf.train.get_checkpoint_state(str(tmp_path)) is None
    assert tf.train.latest_checkpoint(str(tmp_path)) is None


def test_max_to_keep_deletes_old_checkpoints(tmp_path):
    (v, _), _ = _model()
    saver = tf.train.Saver(max_to_keep=2, name="keep2")
    keep_all = tf.train.Saver(max_to_keep=None, name="keep_all")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(1, 5):
            saver.save(sess, str(tmp_path / "m"), global_step=step)
            keep_all.save(sess, str(tmp_path / "all"), global_step=step,
                          latest_filename="all_state")
        assert saver.last_checkpoints == [str(tmp_path / "m-3"), str(tmp_path / "m-4")]
    files = sorted(f for f in os.listdir(tmp_path) if f.startswith("m-"))
    assert files == ["m-3.data-00000-of-00001", "m-3.index", "m-3.meta",
                     "m-4.data-00000-of-00001", "m-4.index", "m-4.meta"]
    assert tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths == [
        str(tmp_path / "m-3"), str(tmp_path / "m-4")]
    assert len([f for f in os.listdir(tmp_path) if f.startswith("all-")]) == 12
    # max_to_keep=None: TF keeps everything and lists only the newest.
    assert tf.train.get_checkpoint_state(str(tmp_path), "all_state").all_model_checkpoint_paths == [
        str(tmp_path / "all-4")]
    assert keep_all.saver_def.max_to_keep == 0  # the SaverDef field is an int: None is 0


def test_keep_checkpoint_every_n_hours_preserves_old_ones(tmp_path):
    _model()
    saver = tf.train.Saver(max_to_keep=1, keep_checkpoint_every_n_hours=1e-7, name="hourly")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(3):
            time.sleep(0.01)
            saver.save(sess, str(tmp_path / "m"), global_step=step)
    assert saver.last_checkpoints == [str(tmp_path / "m-2")]
    assert all(tf.train.checkpoint_exists(str(tmp_path / ("m-%d" % s))) for s in range(3))


def test_recover_last_checkpoints_after_restart(tmp_path):
    _model()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = tf.train.Saver(max_to_keep=2, name="first")
        for step in (1, 2):
            first.save(sess, str(tmp_path / "m"), global_step=step)
        second = tf.train.Saver(max_to_keep=2, name="second")
        second.recover_last_checkpoints(
            tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths)
        second.save(sess, str(tmp_path / "m"), global_step=3)
    assert not tf.train.checkpoint_exists(str(tmp_path / "m-1"))
    assert second.last_checkpoints == [str(tmp_path / "m-2"), str(tmp_path / "m-3")]


# ---- what is saved -------------------------------------------------------------------------
def test_var_list_dict_renames_keys(tmp_path):
    (v, w), _ = _model()
    saver = tf.train.Saver({"layer/kernel": v, "count": w}, name="renaming")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"))
    assert tf.train.list_variables(path) == [("count", []), ("layer/kernel", [2])]
    with tf.Graph().as_default():
        other = tf.Variable(tf.zeros([2]), name="other_name")
        restorer = tf.train.Saver({"layer/kernel": other})
        with tf.Session() as sess:
            restorer.restore(sess, path)
            np.testing.assert_array_equal(sess.run(other), [1.0, 2.0])


def test_var_list_subset_and_default(tmp_path):
    (v, w), default = _model()
    only_v = tf.train.Saver([v], name="only_v")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        default_path = default.save(sess, str(tmp_path / "all"))
        only_path = only_v.save(sess, str(tmp_path / "only"))
    assert [n for n, _ in tf.train.list_variables(default_path)] == ["v", "w"]
    assert [n for n, _ in tf.train.list_variables(only_path)] == ["v"]


def test_var_list_errors():
    (v, w), _ = _model()
    with pytest.raises(TypeError, match="dict or a list"):
        tf.train.Saver(v)
    with pytest.raises(TypeError, match="not a Variable"):
        tf.train.Saver([v, tf.constant(1.0)])
    with pytest.raises(ValueError, match="same name: v"):
        tf.train.Saver([v, v])
    with pytest.raises(ValueError, match="defer"):
        tf.train.Saver([v], defer_build=True)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="No variables to save"):
            tf.train.Saver()
        empty = tf.train.Saver(allow_empty=True)
        with tf.Session() as sess:
            assert empty.save(sess, "/nonexistent/dir/m", write_meta_graph=False) is None
            empty.restore(sess, "/nonexistent/dir/m")


class _DoubledSaveable(tf.train.saver_builder.SaveableObject):
    """Saves twice a variable's value under one key; restores half of it."""

    def __init__(self, var, name):
        spec = tf.train.saver_builder.SaveSpec(var.value() * 2.0, "", name)
        super().__init__(var.op, [spec], name)
        self.var = var

    def restore(self, restored_tensors, restored_shapes):
        return tf.assign(self.var, restored_tensors[0] / 2.0)


def test_saveable_objects_collection_is_saved_by_default(tmp_path):
    hidden = tf.Variable([1.0, 3.0], name="hidden", collections=["my_state"])
    tf.get_default_graph().add_to_collection("saveable_objects",
                                             _DoubledSaveable(hidden, "doubled"))
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(hidden.initializer)
        path = saver.save(sess, str(tmp_path / "m"))
        np.testing.assert_array_equal(tf.train.load_variable(path, "doubled"), [2.0, 6.0])
        sess.run(hidden.assign([0.0, 0.0]))
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(hidden), [1.0, 3.0])


def test_defer_build(tmp_path):
    _model()
    saver = tf.train.Saver(defer_build=True, name="deferred")
    assert saver.saver_def is None
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(RuntimeError, match="build"):
            saver.save(sess, str(tmp_path / "m"))
        saver.build()
        assert saver.save(sess, str(tmp_path / "m")) == str(tmp_path / "m")


@pytest.mark.parametrize("dtype,value", [
    (tf.float16, [1.5, -2.0]), (tf.float64, [[1e-300, 2.0]]), (tf.int64, [2 ** 40, -1]),
    (tf.uint8, [0, 255]), (tf.bool, [True, False, True]), (tf.int32, 7),
    (tf.string, [b"a", b"", "h\u00e9llo".encode("utf-8")]),
])
def test_dtypes_round_trip(tmp_path, dtype, value):
    var = tf.Variable(tf.constant(value, dtype=dtype), name="x")
    saver = tf.train.Saver([var])
    with tf.Session() as sess:
        sess.run(var.initializer)
        path = saver.save(sess, str(tmp_path / "m"))
    with tf.Session() as sess:
        saver.restore(sess, path)
        restored = sess.run(var)
    expected = np.array(value, dtype=object if dtype == tf.string else dtype.as_numpy_dtype)
    np.testing.assert_array_equal(restored, expected)
    assert tf.train.NewCheckpointReader(path).get_variable_to_dtype_map() == {"x": dtype}


def test_reshape_and_restore_sequentially(tmp_path):
    var = tf.Variable(tf.constant([[1.0, 2.0], [3.0, 4.0]]), name="m")
    extra = tf.Variable(5.0, name="extra")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default():
        flat = tf.Variable(tf.zeros([4]), name="m")
        extra = tf.Variable(0.0, name="extra")
        reshaping = tf.train.Saver(reshape=True, restore_sequentially=True)
        assert len([op for op in tf.get_default_graph().get_operations()
                    if op.type == "RestoreV2"]) == 2
        with tf.Session() as sess:
            reshaping.restore(sess, path)
            np.testing.assert_array_equal(sess.run(flat), [1.0, 2.0, 3.0, 4.0])
            assert sess.run(extra) == 5.0


def test_restore_into_fresh_graph_rebuilt_by_same_code(tmp_path):
    path = _saved_model(tmp_path, global_step=3)
    with tf.Graph().as_default():
        (v, w), saver = _model()
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(v), [5.0, 6.0])
            assert sess.run(w) == 3


def test_restore_in_fresh_process(tmp_path):
    _saved_model(tmp_path, global_step=9)
    program = textwrap.dedent("""
        import json, sys
        import minitf as tf
        v = tf.Variable([0.0, 0.0], name="v")
        w = tf.Variable(0, name="w")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            path = tf.train.latest_checkpoint(sys.argv[1])
            saver.restore(sess, path)
            print(json.dumps({"path": path, "v": sess.run(v).tolist(), "w": int(sess.run(w))}))
    """)
    run = subprocess.run([sys.executable, "-c", program, str(tmp_path)], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout.splitlines()[-1]) == {
        "path": str(tmp_path / "model.ckpt-9"), "v": [5.0, 6.0], "w": 3}


def test_checkpoint_reader_and_load_variable(tmp_path):
    path = _saved_model(tmp_path)
    reader = tf.train.NewCheckpointReader(path)
    assert reader.has_tensor("v") and not reader.has_tensor("nope")
    assert reader.get_variable_to_shape_map() == {"v": [2], "w": []}
    np.testing.assert_array_equal(reader.get_tensor("v"), [5.0, 6.0])
    assert "v (float32) [2]" in reader.debug_string()
    np.testing.assert_array_equal(tf.train.load_variable(str(tmp_path), "v:0"), [5.0, 6.0])
    with pytest.raises(tf.errors.NotFoundError, match="Key nope not found in checkpoint"):
        reader.get_tensor("nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        tf.train.list_variables(str(tmp_path / "empty"))


# ---- the ops directly -----------------------------------------------------------------------
def test_save_and_restore_ops_with_slices(tmp_path, sess):
    prefix = str(tmp_path / "raw")
    values = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
    save = io_ops.save_v2(prefix, ["t", "s"], ["", ""], [values, tf.constant(["x", "yz"])])
    sess.run(save)
    whole, rows = io_ops.restore_v2(prefix, ["t", "t"], ["", "4 3 1,2:-"], [tf.float32] * 2)
    assert rows.shape.as_list() == [2, 3]
    np.testing.assert_array_equal(sess.run(rows), np.arange(3, 9).reshape(2, 3))
    np.testing.assert_array_equal(sess.run(whole), np.arange(12).reshape(4, 3))
    strings, = io_ops.restore_v2(prefix, ["s"], [""], [tf.string])
    assert list(sess.run(strings)) == [b"x", b"yz"]
    wrong, = io_ops.restore_v2(prefix, ["t"], ["3 3 -:-"], [tf.float32])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"tensor_name = t; shape in shape_and_slice spec \[3, 3\] does not "
                             r"match the shape stored in checkpoint: \[4, 3\]"):
        sess.run(wrong)


def test_save_ops_survive_graph_def_round_trip(tmp_path):
    (v, w), saver = _model()
    graph_def = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default() as g:
        import_graph_def(type(graph_def).FromString(graph_def.SerializeToString()), name="")
        copy = tf.train.Saver(saver_def=saver.saver_def)
        with tf.Session(graph=g) as sess:
            sess.run(["v/Assign", "w/Assign"])
            path = copy.save(sess, str(tmp_path / "m"))
    assert tf.train.list_variables(path) == [("v", [2]), ("w", [])]


# ---- errors -----------------------------------------------------------------------------------
def test_missing_checkpoint_is_not_found(tmp_path, sess):
    _, saver = _model()
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files for"):
        saver.restore(sess, str(tmp_path / "nothere"))
    # TF1's Saver.restore raises ValueError for the same mistake.
    with pytest.raises(ValueError, match="The passed save_path is not a valid checkpoint"):
        saver.restore(sess, str(tmp_path / "nothere"))
    with pytest.raises(tf.errors.NotFoundError, match="latest_checkpoint"):
        saver.restore(sess, str(tmp_path))
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files for"):
        sess.run(saver.saver_def.restore_op_name,
                 {saver.saver_def.filename_tensor_name: str(tmp_path / "nothere")})
    with pytest.raises(ValueError, match="save_path when it is None"):
        saver.restore(sess, None)


def test_variable_missing_from_checkpoint_names_the_key(tmp_path):
    path = _saved_model(tmp_path)
    with tf.Graph().as_default():
        _, saver = _model(names=("v", "bias"))
        with tf.Session() as sess:
            with pytest.raises(tf.errors.NotFoundError, match="Key bias not found in checkpoint"):
                saver.restore(sess, path)


def test_shape_mismatch_names_the_variable(tmp_path):
    path = _saved_model(tmp_path)
    with tf.Graph().as_default():
        _, saver = _model(shape=(3,))
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                saver.restore(sess, path)
    message = str(info.value)
    assert "Assign requires shapes of both tensors to match. lhs shape= [3] rhs shape= [2]" \
        in message
    assert "restoring variable 'v' from checkpoint key 'v'" in message


def test_dtype_mismatch(tmp_path):
    path = _saved_model(tmp_path)
    with tf.Graph().as_default():
        var = tf.Variable(tf.zeros([2], tf.float64), name="v")
        saver = tf.train.Saver([var])
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="tensor_name = v; expected dtype float64 does not equal "
                                     "original dtype float32"):
                saver.restore(sess, path)


def _restore_fresh(path):
    with tf.Graph().as_default():
        (v, _), saver = _model()
        with tf.Session() as sess:
            saver.restore(sess, path)
            return sess.run(v)


@pytest.mark.parametrize("damage", ["flip_data", "truncate_data", "flip_index", "truncate_index",
                                    "swap_data_of_other_save", "empty_index"])
def test_corruption_is_data_loss(tmp_path, damage):
    path = _saved_model(tmp_path)
    data_path = checkpoint_format.data_filename(path)
    index_path = checkpoint_format.index_filename(path)
    data, index = bytearray(open(data_path, "rb").read()), bytearray(open(index_path, "rb").read())
    if damage == "flip_data":
        data[-5] ^= 0x40
        open(data_path, "wb").write(bytes(data))
    elif damage == "truncate_data":
        open(data_path, "wb").write(bytes(data[:-3]))
    elif damage == "flip_index":
        index[len(index) // 2] ^= 0x01
        open(index_path, "wb").write(bytes(index))
    elif damage == "truncate_index":
        open(index_path, "wb").write(bytes(index[:len(index) // 2]))
    elif damage == "empty_index":
        open(index_path, "wb").write(b"")
    else:
        other = _saved_model(tmp_path / "..", global_step=1)
        os.replace(checkpoint_format.data_filename(other), data_path)
    with pytest.raises(tf.errors.DataLossError):
        _restore_fresh(path)


def test_missing_data_file_is_not_found(tmp_path):
    path = _saved_model(tmp_path)
    os.remove(checkpoint_format.data_filename(path))
    with pytest.raises(tf.errors.NotFoundError, match="data-00000-of-00001; No such file"):
        _restore_fresh(path)
    with pytest.raises(tf.errors.NotFoundError):
        tf.train.load_checkpoint(path)


def test_no_pickle_in_the_checkpoint_or_meta_graph(tmp_path, monkeypatch):
    """Save, restore and import_meta_graph work with pickle disabled, and every
    file is plain text, a protocol buffer or starts with the raw-data magic."""
    import pickle

    def forbidden(*args, **kwargs):
        raise AssertionError("pickle used")

    for name in ("dump", "dumps", "load", "loads", "Pickler", "Unpickler"):
        monkeypatch.setattr(pickle, name, forbidden)
    monkeypatch.setattr(np, "load", forbidden)
    monkeypatch.setattr(np, "save", forbidden)
    path = _saved_model(tmp_path)
    np.testing.assert_array_equal(_restore_fresh(path), [5.0, 6.0])
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(path + ".meta")
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run("v:0"), [5.0, 6.0])
    index = open(checkpoint_format.index_filename(path), "rb").read()
    header, body = index.split(b"\n", 1)
    assert header.startswith(b"minitf-checkpoint-index ")
    assert set(json.loads(body)["tensors"]) == {"v", "w"}
    meta_graph_pb2.MetaGraphDef.FromString(open(path + ".meta", "rb").read())
    data = open(checkpoint_format.data_filename(path), "rb").read()
    assert data.startswith(b"MTFDATA\x00")
    assert len(data) == 8 + 16 + 2 * 4 + 4  # magic, bundle id, v (2 float32), w (int32)
    assert np.array([5.0, 6.0], "<f4").tobytes() in data and np.array(3, "<i4").tobytes() in data


def test_save_creates_a_missing_directory_one_level_deep(tmp_path, sess, monkeypatch):
    # TF's checkpoint writer makes the prefix's directory: saver.save(sess, "./model/m.ckpt")
    # works without ./model (but not without ./a/b/ either).
    (v, _), saver = _model()
    sess.run(tf.global_variables_initializer())
    monkeypatch.chdir(tmp_path)
    assert saver.save(sess, "./model/m.ckpt") == "./model/m.ckpt"
    assert {"checkpoint", "m.ckpt.index", "m.ckpt.meta"} <= set(os.listdir("model"))
    assert tf.train.latest_checkpoint("model") == os.path.join("model", "m.ckpt")
    sess.run(tf.assign(v, [0.0, 0.0]))
    saver.restore(sess, "./model/m.ckpt")
    assert sess.run(v).tolist() == [1.0, 2.0]
    assert saver.save(sess, "model/step", global_step=3) == "model/step-3"
    with pytest.raises(ValueError, match="Parent directory of a/b/m doesn't exist"):
        saver.save(sess, "a/b/m")
    assert not os.path.exists("a")


def test_save_errors(tmp_path, sess):
    (v, _), saver = _model()
    with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value v"):
        saver.save(sess, str(tmp_path / "m"))
    sess.run(tf.global_variables_initializer())
    with pytest.raises(ValueError, match="Parent directory of .* doesn't exist, can't save"):
        saver.save(sess, str(tmp_path / "no" / "such" / "m"))
    with pytest.raises(ValueError, match="must not contain pathname components"):
        saver.save(sess, str(tmp_path / "m"), latest_filename="a/b")
    with pytest.raises(ValueError, match="collides"):
        saver.save(sess, str(tmp_path / "checkpoint"))
    with pytest.raises(TypeError, match="must be a Session"):
        saver.save(None, str(tmp_path / "m"))
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


# ---- meta graphs -------------------------------------------------------------------------------
def _train_graph():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.Variable(tf.constant([[1.0], [2.0]]), name="w")
    step = tf.Variable(0, name="global_step", trainable=False)
    y = tf.matmul(x, w, name="y")
    train_op = tf.group(tf.assign_add(w, tf.ones([2, 1])), tf.assign_add(step, 1), name="train")
    graph = tf.get_default_graph()
    graph.add_to_collection("train_op", train_op)
    graph.add_to_collection("outputs", y)
    graph.add_to_collection("global_step", step)
    graph.add_to_collection("notes", "hello")
    graph.add_to_collection("numbers", 4)
    graph.add_to_collection("unserializable", object())
    return x, w, y, train_op


def test_import_meta_graph_rebuilds_graph_collections_and_saver(tmp_path):
    x, w, y, train_op = _train_graph()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op)
        path = saver.save(sess, str(tmp_path / "model"), global_step=1)
    meta = meta_graph_pb2.MetaGraphDef.FromString((tmp_path / "model-1.meta").read_bytes())
    assert meta.saver_def.restore_op_name == "save/restore_all"
    assert "unserializable" not in meta.collection_def
    assert list(meta.collection_def["train_op"].node_list.value) == ["train"]
    assert list(meta.collection_def["numbers"].int64_list.value) == [4]
    variable_def = variable_pb2.VariableDef.FromString(
        meta.collection_def["trainable_variables"].bytes_list.value[0])
    assert (variable_def.variable_name, variable_def.snapshot_name) == ("w:0", "w/read:0")

    with tf.Graph().as_default() as graph:
        restorer = tf.train.import_meta_graph(path + ".meta")
        assert [v.name for v in tf.global_variables()] == ["w:0", "global_step:0"]
        assert [v.name for v in tf.trainable_variables()] == ["w:0"]
        assert tf.global_variables()[0] is tf.trainable_variables()[0]
        assert graph.get_collection("train_op")[0].name == "train"
        assert graph.get_collection("notes") == [b"hello"]  # a bytes_list, as in TF
        assert graph.get_collection("numbers") == [4]
        assert graph.get_collection("global_step")[0].name == "global_step:0"
        with tf.Session() as sess:
            restorer.restore(sess, path)
            np.testing.assert_array_equal(sess.run(graph.get_tensor_by_name("w:0")),
                                          [[2.0], [3.0]])
            sess.run(graph.get_collection("train_op")[0])
            out = sess.run(graph.get_collection("outputs")[0], {"x:0": [[1.0, 1.0]]})
            np.testing.assert_array_equal(out, [[7.0]])
            assert restorer.save(sess, str(tmp_path / "again")) == str(tmp_path / "again")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())  # the imported initializers work too
            assert sess.run(tf.global_variables()[1]) == 0


def test_import_meta_graph_with_scope_and_export_without_saver(tmp_path):
    _train_graph()
    saver = tf.train.Saver()
    meta_path = str(tmp_path / "g.meta")
    meta = tf.train.export_meta_graph(meta_path, collection_list=["variables"])
    assert not meta.HasField("saver_def") and list(meta.collection_def) == ["variables"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default() as graph:
        tf.Variable(0.0, name="w")  # a name clash the scope avoids
        restorer = tf.train.import_meta_graph(meta_path, import_scope="imported")
        names = sorted(v.name for v in tf.global_variables())
        assert names == ["imported/global_step:0", "imported/w:0", "w:0"]
        # No SaverDef in the file: a new Saver of the imported variables, which
        # are keyed by their (scoped) names; a dict maps them to the checkpoint's.
        assert restorer.saver_def.restore_op_name == "save/restore_all"
        imported = {v.op.name[len("imported/"):]: v for v in tf.global_variables()
                    if v.name.startswith("imported/")}
        with tf.Session() as sess:
            tf.train.Saver(imported).restore(sess, path)
            np.testing.assert_array_equal(sess.run(graph.get_tensor_by_name("imported/w:0")),
                                          [[1.0], [2.0]])
    with tf.Graph().as_default():
        assert tf.train.import_meta_graph(meta_graph_pb2.MetaGraphDef()) is None


def test_import_meta_graph_errors(tmp_path):
    with pytest.raises(OSError, match="does not exist"):
        tf.train.import_meta_graph(str(tmp_path / "missing.meta"))
    (tmp_path / "bad.meta").write_bytes(b"\x08\x01protobuf")
    with pytest.raises(OSError, match="Cannot parse file .*bad.meta"):
        tf.train.import_meta_graph(str(tmp_path / "bad.meta"))


_PIPELINE_IMPORTER = textwrap.dedent("""
    import json, sys
    import minitf as tf
    saver = tf.train.import_meta_graph(sys.argv[1] + ".meta")
    initializer, = tf.get_collection("iterator_init")
    scaled, = tf.get_collection("scaled")
    values = []
    with tf.Session() as sess:
        saver.restore(sess, sys.argv[1])
        sess.run(initializer)
        try:
            while True:
                values.append(sess.run(scaled).tolist())
        except tf.errors.OutOfRangeError:
            pass
    print(json.dumps(values))
""")


def test_meta_graph_carries_dataset_functions_to_a_fresh_process(tmp_path):
    """The map and filter functions travel in the meta graph's library, so the
    pipeline runs where only the .meta file and the checkpoint are known."""
    dataset = (tf.data.Dataset.range(6).map(lambda x: tf.cast(x, tf.float32) * 2.0)
               .filter(lambda x: x > 3.0).batch(2))
    iterator = dataset.make_initializable_iterator()
    scale = tf.Variable(10.0, name="scale")
    tf.add_to_collection("iterator_init", iterator.initializer)
    tf.add_to_collection("scaled", iterator.get_next() * scale)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver().save(sess, str(tmp_path / "pipeline"))
    meta = meta_graph_pb2.MetaGraphDef.FromString(open(path + ".meta", "rb").read())
    library = sorted(f.signature.name for f in meta.graph_def.library.function)
    assert len(library) == 2
    assert library[0].startswith("Dataset_filter_") and library[1].startswith("Dataset_map_")
    run = subprocess.run([sys.executable, "-c", _PIPELINE_IMPORTER, path], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    # range(6) doubled is 0 2 4 6 8 10; > 3 keeps 4 6 8 10; batches of 2, times 10
    assert json.loads(run.stdout.splitlines()[-1]) == [[40.0, 60.0], [80.0, 100.0]]


def test_meta_graph_carries_functions_nested_in_flat_map():
    one = tf.constant(1, tf.int64, name="one")  # captured by the inner map, through flat_map
    dataset = tf.data.Dataset.range(3).flat_map(
        lambda x: tf.data.Dataset.range(x).map(lambda y: y * 10 + one))
    tf.add_to_collection("next", dataset.make_one_shot_iterator().get_next())
    meta = tf.train.export_meta_graph()
    meta = meta_graph_pb2.MetaGraphDef.FromString(meta.SerializeToString())  # what a file keeps
    with tf.Graph().as_default():
        tf.train.import_meta_graph(meta)
        next_element, = tf.get_collection("next")
        values = []
        with tf.Session() as sess:
            with pytest.raises(tf.errors.OutOfRangeError):
                while True:
                    values.append(int(sess.run(next_element)))
    assert values == [1, 1, 11]  # range(0), range(1), range(2), each times 10 plus 1


def test_generator_datasets_cannot_be_imported(tmp_path):
    dataset = tf.data.Dataset.from_generator(lambda: iter([1, 2]), tf.int64)
    tf.add_to_collection("next", dataset.make_one_shot_iterator().get_next())
    meta = tf.train.export_meta_graph()
    assert not meta.graph_def.HasField("library")  # a Python generator is not serializable
    with tf.Graph().as_default():
        tf.train.import_meta_graph(meta)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.NotFoundError, match="from_generator"):
                sess.run(tf.get_collection("next")[0])


def test_saver_in_savers_collection_round_trips(tmp_path):
    _model()
    saver = tf.train.Saver(name="mine")
    tf.get_default_graph().add_to_collection("savers", saver)
    meta = tf.train.export_meta_graph()
    with tf.Graph().as_default() as graph:
        tf.train.import_meta_graph(meta, import_scope="s")
        copy, = graph.get_collection("savers")
        assert copy.saver_def.restore_op_name == "s/mine/restore_all"


def test_meta_graph_as_text_round_trips_and_is_tensorflows_message(tmp_path):
    """A text .meta (export_meta_graph(as_text=True)) imports like a binary one,
    and both parse with TensorBoard's copy of TF's MetaGraphDef."""
    x, w, y, train_op = _train_graph()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "model"))
    text_path = str(tmp_path / "model.meta.txt")
    meta = saver.export_meta_graph(text_path, as_text=True)
    text = open(text_path).read()
    assert 'key: "train_op"' in text and 'op: "MatMul"' in text
    parsed = text_format.Parse(text, meta_graph_pb2.MetaGraphDef())
    assert parsed == meta
    binary = meta_graph_pb2.MetaGraphDef.FromString(open(path + ".meta", "rb").read())
    assert binary.graph_def == meta.graph_def and binary.saver_def == meta.saver_def
    assert "MatMul" in [op.name for op in binary.meta_info_def.stripped_op_list.op]
    with tf.Graph().as_default() as graph:
        restorer = tf.train.import_meta_graph(text_path)
        with tf.Session() as sess:
            restorer.restore(sess, path)
            out = sess.run(graph.get_collection("outputs")[0], {"x:0": [[1.0, 1.0]]})
    np.testing.assert_array_equal(out, [[3.0]])


# ---- crash safety ---------------------------------------------------------------------------
_CHILD = r"""
import os, sys
import minitf as tf

directory = sys.argv[1]
value = tf.placeholder(tf.float32, [], name="value")
step_value = tf.placeholder(tf.int64, [], name="step_value")
variables = [tf.Variable(tf.zeros([{size}]), name="v%d" % i) for i in range({count})]
step = tf.Variable(tf.constant(0, tf.int64), name="step")
update = tf.group(*[v.assign(tf.fill([{size}], value)) for v in variables],
                  step.assign(step_value))
saver = tf.train.Saver(max_to_keep=3)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    latest = tf.train.latest_checkpoint(directory)
    current = 0
    if latest:
        saver.restore(sess, latest)
        current = int(sess.run(step))
        state = tf.train.get_checkpoint_state(directory)
        saver.recover_last_checkpoints(state.all_model_checkpoint_paths)
    print("ready", current, flush=True)
    while True:
        current += 1
        sess.run(update, {{value: float(current), step_value: current}})
        saver.save(sess, os.path.join(directory, "model.ckpt"), global_step=current)
"""


def _check_checkpoint(path, count):
    """Every tensor of the checkpoint ``path`` (``...-<step>``) holds that step."""
    step = int(path.rsplit("-", 1)[1])
    reader = tf.train.NewCheckpointReader(path)
    assert sorted(reader.get_variable_to_shape_map()) == sorted(
        ["step"] + ["v%d" % i for i in range(count)])
    assert reader.get_tensor("step") == step
    for i in range(count):
        values = reader.get_tensor("v%d" % i)
        assert values.min() == values.max() == step, (path, i)
    return step


@pytest.mark.slow
def test_killing_save_never_damages_previous_checkpoints(tmp_path):
    """SIGKILLs a process that saves in a loop at random moments; after every
    kill the latest checkpoint and all listed ones must load and be consistent."""
    size, count = 200_000, 8  # 6.4 MB per checkpoint: each save takes a while
    script = tmp_path / "child.py"
    script.write_text(_CHILD.format(size=size, count=count))
    directory = tmp_path / "ckpt"
    directory.mkdir()
    rng = random.Random(1234)
    last_step, temporary_files = 0, set()
    for attempt in range(10):
        stderr_path = tmp_path / ("child%d.err" % attempt)
        with open(stderr_path, "w") as stderr:
            child = subprocess.Popen([sys.executable, str(script), str(directory)],
                                     stdout=subprocess.PIPE, stderr=stderr, text=True)
        try:
            line = child.stdout.readline()
            assert line.startswith("ready"), stderr_path.read_text()
            assert int(line.split()[1]) == last_step  # resumed from the latest checkpoint
            deadline = time.monotonic() + 60
            while attempt == 0 and tf.train.latest_checkpoint(str(directory)) is None:
                assert time.monotonic() < deadline and child.poll() is None, \
                    stderr_path.read_text()
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 0.4))
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
            child.stdout.close()
        temporary_files.update(f for f in os.listdir(directory) if f.endswith(".tmp"))
        latest = tf.train.latest_checkpoint(str(directory))
        assert latest is not None, "no complete checkpoint after %d kills" % (attempt + 1)
        state = tf.train.get_checkpoint_state(str(directory))
        assert state.all_model_checkpoint_paths[-1] == latest
        # A kill between deleting the oldest checkpoint and rewriting the state
        # file leaves the old file listing it: every listed one that exists loads.
        steps = [_check_checkpoint(p, count) for p in state.all_model_checkpoint_paths
                 if tf.train.checkpoint_exists(p)]
        assert steps == sorted(steps) and len(steps) <= 3
        assert steps[-1] >= last_step
        last_step = steps[-1]
        assert os.path.exists(latest + ".meta")
    # The newest checkpoint also restores through a Saver in this process.
    with tf.Graph().as_default():
        variables = [tf.Variable(tf.zeros([size]), name="v%d" % i) for i in range(count)]
        step = tf.Variable(tf.constant(0, tf.int64), name="step")
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, tf.train.latest_checkpoint(str(directory)))
            assert sess.run(step) == last_step
            assert sess.run(variables[-1])[0] == last_step
    print("10 kills; %d temporary files left behind by kills during a write; last step %d"
          % (len(temporary_files), last_step))


# ---- init_from_checkpoint ----------------------------------------------------------------------
def _pretrained(directory):
    """A checkpoint with old/w = [1, 2], old/b = 3 and plain = [7, 8]."""
    with tf.Graph().as_default():
        with tf.variable_scope("old"):
            tf.get_variable("w", initializer=tf.constant([1.0, 2.0]))
            tf.get_variable("b", initializer=tf.constant(3.0))
        tf.Variable([7, 8], name="plain")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return tf.train.Saver().save(sess, str(directory / "pretrained"))


def test_init_from_checkpoint_one_to_one_by_name_and_by_variable(tmp_path):
    _pretrained(tmp_path)
    with tf.variable_scope("new"):
        w = tf.get_variable("w", [2])
        untouched = tf.get_variable("c", [3], initializer=tf.ones_initializer())
    p = tf.Variable([0, 0], name="p")
    tf.train.init_from_checkpoint(str(tmp_path), {"old/w": "new/w", "plain": p})
    assert w.initializer.type == "Assign" and w.initial_value.op.type == "RestoreV2"
    assert w.initial_value.op.name == "checkpoint_initializer"
    assert w.initial_value.shape.as_list() == [2]
    with tf.Session() as sess:
        assert sess.run(w.initial_value).tolist() == [1.0, 2.0]  # nothing read before a run
        sess.run(tf.global_variables_initializer())
        assert sess.run(w).tolist() == [1.0, 2.0] and sess.run(p).tolist() == [7, 8]
        assert sess.run(untouched).tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("mapping, scope", [({"old/": "new/"}, "new"), ({"/": "/"}, "old"),
                                            ({"old/": "/"}, None)])
def test_init_from_checkpoint_scope_to_scope(tmp_path, mapping, scope):
    _pretrained(tmp_path)
    with tf.variable_scope(scope or "", reuse=tf.AUTO_REUSE):
        w, b = tf.get_variable("w", [2]), tf.get_variable("b", [])
    tf.train.init_from_checkpoint(str(tmp_path / "pretrained"), mapping)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(w).tolist() == [1.0, 2.0] and sess.run(b) == 3.0


def test_init_from_checkpoint_errors(tmp_path):
    _pretrained(tmp_path)
    with tf.variable_scope("new"):
        tf.get_variable("w", [2])
        tf.get_variable("extra", [2])
    with pytest.raises(ValueError, match="Tensor missing is not found in"):
        tf.train.init_from_checkpoint(str(tmp_path), {"missing": "new/w"})
    with pytest.raises(ValueError, match=r"Shape of variable new/w:0 \(\(2,\)\) doesn't match "
                                         r"with shape of tensor old/b"):
        tf.train.init_from_checkpoint(str(tmp_path), {"old/b": "new/w"})
    with pytest.raises(ValueError, match=r"Tensor old/extra \(new/extra in old/\) is not found"):
        tf.train.init_from_checkpoint(str(tmp_path), {"old/": "new/"})
    with pytest.raises(ValueError, match="Should be 'scope/': 'other_scope/'"):
        tf.train.init_from_checkpoint(str(tmp_path), {"old": "new/"})
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        tf.train.init_from_checkpoint(str(tmp_path / "empty"), {"old/": "new/"})
