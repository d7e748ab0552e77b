"""Checkpoints under crashes and damage: what ``docs/reliability.rst`` promises.

* SIGKILL at any moment of ``saver.save(sess, prefix)`` — also when saving
  again to the same prefix — leaves a checkpoint that restores, the previous
  one or the new one (a real kill loop, 100 kills);
* the next save removes the temporary files killed saves left, and
  ``max_to_keep`` bounds the checkpoints on disk across crashes and restarts;
* a damaged index or data file, whatever the field, is a ``DataLossError``
  naming the file (a fuzz over every field of the index);
* ``max_to_keep`` deletes only files in the checkpoint directory, whatever
  the ``checkpoint`` state file lists.
"""

import json
import os
import random
import re
import subprocess
import sys
import zlib

import numpy as np
import pytest

import minitf as tf
from minitf.train import checkpoint_format, checkpoint_state

# ---- the kill loop ----------------------------------------------------------------------------
# One process builds the graph and a Session once, then forks a child per
# kill: the child saves in a loop until the parent SIGKILLs it at a random
# moment; the parent then opens the checkpoint as RestoreV2 does.  Forking
# keeps 100 kills within seconds (no interpreter start per kill).
_KILL_LOOP = r"""
import json, os, random, signal, sys, threading, time
import minitf as tf
from minitf.train import checkpoint_format

directory, mode, kills, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
SIZE, COUNT, MAX_TO_KEEP = 300_000, 4, 3
prefix = os.path.join(directory, "model.ckpt")
value = tf.placeholder(tf.float32, [], name="value")
variables = [tf.Variable(tf.zeros([SIZE]), name="v%d" % i) for i in range(COUNT)]
update = tf.group(*[v.assign(tf.fill([SIZE], value)) for v in variables])
sess = tf.Session()
sess.run(tf.global_variables_initializer())
assert threading.active_count() == 1, "fork needs a single-threaded parent"


def save_forever(first):
    # A restarted training script: a new Saver, resuming after the latest step.
    saver = tf.train.Saver(max_to_keep=MAX_TO_KEEP)
    current = first
    latest = tf.train.latest_checkpoint(directory)
    if mode == "series" and latest:
        current = int(latest.rsplit("-", 1)[1]) + 1
    while True:
        sess.run(update, {value: float(current)})
        if mode == "same_prefix":
            saver.save(sess, prefix)
        else:
            saver.save(sess, prefix, global_step=current)
        current += 1


def checked_value(path):
    # Every tensor of the checkpoint must hold the same value, as one save wrote them.
    reader = checkpoint_format.BundleReader(path)
    assert reader.keys() == ["v%d" % i for i in range(COUNT)], reader.keys()
    values = {float(v) for i in range(COUNT) for v in set(reader.read("v%d" % i).tolist())}
    assert len(values) == 1, values
    return values.pop()


def run_child(first, seconds):
    pid = os.fork()
    if pid == 0:
        try:
            save_forever(first)
        finally:
            os._exit(1)
    time.sleep(seconds)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


rng = random.Random(seed)
report = {"failures": [], "mid_write": 0, "max_checkpoints": 0, "values": []}
run_child(0, 0.3)  # a first checkpoint to protect
latest = prefix if mode == "same_prefix" else tf.train.latest_checkpoint(directory)
report["values"].append(checked_value(latest))
for kill in range(1, kills + 1):
    run_child(kill * 1000, rng.uniform(0.0, 0.05))
    names = os.listdir(directory)
    if any(n.endswith(checkpoint_format.TEMP_SUFFIX) for n in names) or \
            checkpoint_format.previous_data_files(prefix):
        report["mid_write"] += 1
    try:
        latest = prefix if mode == "same_prefix" else tf.train.latest_checkpoint(directory)
        report["values"].append(checked_value(latest))
    except Exception as e:  # noqa: BLE001 - reported to the test
        report["failures"].append("kill %d: %s: %s" % (kill, type(e).__name__, e))
    report["max_checkpoints"] = max(report["max_checkpoints"],
                                    sum(n.endswith(".index") for n in names))
json.dump(report, sys.stdout)
"""


def _kill_loop(tmp_path, mode, kills, seed):
    script = tmp_path / "kill_loop.py"
    script.write_text(_KILL_LOOP)
    directory = tmp_path / "ckpt"
    directory.mkdir()
    done = subprocess.run([sys.executable, str(script), str(directory), mode, str(kills),
                           str(seed)], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), directory


@pytest.mark.slow
def test_sigkill_during_resave_to_the_same_prefix_always_leaves_a_checkpoint(tmp_path):
    report, directory = _kill_loop(tmp_path, "same_prefix", kills=100, seed=7)
    assert report["failures"] == []
    # The kills really hit saves in progress, not only the gaps between them.
    assert report["mid_write"] >= 10, report["mid_write"]
    # Previous or new: never a value older than what the previous kill left.
    values = report["values"]  # after the first child, then after each kill
    for kill, (before, after) in enumerate(zip(values, values[1:]), 1):
        assert after == before or after >= kill * 1000, (kill, before, after)
    # The next, uninterrupted save leaves no temporary files or second names.
    with tf.Graph().as_default():
        v = tf.Variable(tf.zeros([3]), name="v0")
        with tf.Session() as sess:
            sess.run(v.initializer)
            tf.train.Saver([v]).save(sess, str(directory / "model.ckpt"))
    assert sorted(os.listdir(directory)) == [
        "checkpoint", "model.ckpt.data-00000-of-00001", "model.ckpt.index", "model.ckpt.meta"]


@pytest.mark.slow
def test_max_to_keep_bounds_checkpoints_across_crashes_and_restarts(tmp_path):
    report, directory = _kill_loop(tmp_path, "series", kills=40, seed=11)
    assert report["failures"] == []
    # At most the kept ones plus the one a killed save was writing.
    assert report["max_checkpoints"] <= 3 + 1, report["max_checkpoints"]
    names = os.listdir(directory)
    prefixes = {re.match(r"model\.ckpt-\d+", n).group() for n in names if n.startswith("model")}
    assert len(prefixes) <= 4, sorted(names)
    state = tf.train.get_checkpoint_state(str(directory))
    assert len(state.all_model_checkpoint_paths) <= 3


# ---- re-saving to the same prefix, step by step -----------------------------------------------
def _save(prefix, value):
    checkpoint_format.write_bundle(prefix, {"v": np.full([4], value, np.float32)})


def test_an_interrupted_resave_leaves_the_previous_checkpoint_readable(tmp_path, monkeypatch):
    """The state a kill between the data file's rename and the index's leaves."""
    prefix = str(tmp_path / "m")
    _save(prefix, 1.0)
    replaced = []
    real_write = checkpoint_format.write_atomically

    def write_data_then_die(path, chunks):
        real_write(path, chunks)
        replaced.append(path)
        if path.endswith(checkpoint_format.INDEX_SUFFIX):
            return
        raise KeyboardInterrupt("killed after the data file, before the index")

    monkeypatch.setattr(checkpoint_format, "write_atomically", write_data_then_die)
    with pytest.raises(KeyboardInterrupt):
        _save(prefix, 2.0)
    monkeypatch.undo()
    assert replaced == [checkpoint_format.data_filename(prefix)]
    # The index is the old one, the data file the new one: the old data was kept.
    kept = checkpoint_format.previous_data_files(prefix)
    assert len(kept) == 1
    np.testing.assert_array_equal(checkpoint_format.BundleReader(prefix).read("v"), [1.0] * 4)
    # The next save to the prefix completes and removes the second name.
    _save(prefix, 3.0)
    np.testing.assert_array_equal(checkpoint_format.BundleReader(prefix).read("v"), [3.0] * 4)
    assert checkpoint_format.previous_data_files(prefix) == []


def test_remove_checkpoint_also_removes_kept_data_files(tmp_path):
    prefix = str(tmp_path / "m")
    _save(prefix, 1.0)
    data = checkpoint_format.data_filename(prefix)
    os.link(data, checkpoint_format.previous_data_filename(data, "ab" * 16))
    checkpoint_state.remove_checkpoint(prefix)
    assert os.listdir(tmp_path) == []


# ---- stale temporary files --------------------------------------------------------------------
def _temporary(directory, name):
    path = directory / (".%s.k1ll3d00%s" % (name, checkpoint_format.TEMP_SUFFIX))
    path.write_bytes(b"half a checkpoint")
    return path


def test_next_save_removes_temporary_files_of_killed_saves(tmp_path):
    stale = [_temporary(tmp_path, "model.ckpt-7.data-00000-of-00001"),
             _temporary(tmp_path, "model.ckpt-7.index"), _temporary(tmp_path, "checkpoint")]
    unrelated = tmp_path / ".notes.tmp"
    unrelated.write_text("a user's file")
    _save(str(tmp_path / "model.ckpt-8"), 1.0)
    assert not any(path.exists() for path in stale)
    assert unrelated.exists()


def test_temporary_files_of_a_write_under_way_are_kept(tmp_path):
    """A write in progress holds the directory's lock shared: its files stay."""
    in_progress = _temporary(tmp_path, "other.index")
    with checkpoint_format._directory_lock(str(tmp_path), exclusive=False) as locked:
        assert locked
        assert checkpoint_format.remove_stale_temporary_files(str(tmp_path)) == []
        _save(str(tmp_path / "m"), 1.0)
        assert in_progress.exists()
    assert checkpoint_format.remove_stale_temporary_files(str(tmp_path)) == [in_progress.name]


# ---- deletion stays in the checkpoint directory -----------------------------------------------
def _saver_and_session():
    v = tf.Variable([1.0, 2.0], name="v")
    sess = tf.Session()
    sess.run(v.initializer)
    return tf.train.Saver([v], max_to_keep=1), sess


def test_max_to_keep_never_deletes_outside_the_directory(tmp_path):
    outside = tmp_path / "precious"
    outside.mkdir()
    _save(str(outside / "model"), 5.0)
    victims = sorted(os.listdir(outside))
    ckpt_dir = tmp_path / "ckpt"
    ckpt_dir.mkdir()
    # A hostile or damaged state file listing checkpoints elsewhere.
    (ckpt_dir / "checkpoint").write_text(
        'model_checkpoint_path: "../precious/model"\n'
        'all_model_checkpoint_paths: "../precious/model"\n'
        'all_model_checkpoint_paths: "%s"\n' % (outside / "model"))
    with tf.Graph().as_default():
        saver, sess = _saver_and_session()
        with sess:
            # Taken over explicitly (as SessionManager does) or at the first save.
            saver.recover_last_checkpoints([str(outside / "model")])
            for step in range(3):
                saver.save(sess, str(ckpt_dir / "m"), global_step=step)
    assert sorted(os.listdir(outside)) == victims
    assert sorted(f for f in os.listdir(ckpt_dir) if f.endswith(".index")) == ["m-2.index"]


def test_first_save_takes_over_the_state_file_so_max_to_keep_bounds_restarts(tmp_path):
    for restart in range(3):  # three runs of a training script, each a new Saver
        with tf.Graph().as_default():
            saver, sess = _saver_and_session()
            with sess:
                for step in range(2):
                    saver.save(sess, str(tmp_path / "m"), global_step=10 * restart + step)
    assert sorted(f for f in os.listdir(tmp_path) if f.endswith(".index")) == ["m-21.index"]
    assert tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths == [
        str(tmp_path / "m-21")]


# ---- damaged files: DataLossError naming the file ---------------------------------------------
def _index_parts(prefix):
    content = open(checkpoint_format.index_filename(prefix), "rb").read()
    header, _, body = content.partition(b"\n")
    return header, json.loads(body)


def _write_index(prefix, index):
    """Writes ``index`` (any JSON, or raw bytes) with a *valid* checksum, so
    that the reader must judge the content itself."""
    body = index if isinstance(index, bytes) else json.dumps(index).encode()
    header = "%s %d crc32=%08x\n" % (checkpoint_format.INDEX_MAGIC,
                                     checkpoint_format.FORMAT_VERSION, zlib.crc32(body))
    with open(checkpoint_format.index_filename(prefix), "wb") as f:
        f.write(header.encode() + body)


def _read_everything(prefix):
    reader = checkpoint_format.BundleReader(prefix)
    for name in reader.keys():
        reader.dtype(name), reader.shape(name), reader.read(name)


def _assert_data_loss(prefix):
    with pytest.raises(tf.errors.DataLossError) as info:
        _read_everything(prefix)
    assert _names_the_file(info.value, prefix), info.value


def _names_the_file(error, prefix):
    name = os.path.basename(prefix)
    return name + ".index" in str(error) or name + ".data" in str(error)


@pytest.fixture
def saved(tmp_path):
    """A checkpoint with a float, an int and a string tensor."""
    prefix = str(tmp_path / "m")
    checkpoint_format.write_bundle(prefix, {
        "f": np.arange(6, dtype=np.float32).reshape(2, 3), "i": np.array([7, 8], np.int64),
        "s": np.array([b"ab", b"", b"xyz"], dtype=object)})
    _read_everything(prefix)
    return prefix


_BAD_VALUES = [None, True, -1, -(2 ** 63), 2 ** 64, 1.5, "7", [], [1], {}, {"a": 1},
               float("1e308")]


@pytest.mark.parametrize("field", ["dtype", "shape", "shard", "offset", "length", "crc32"])
def test_every_bad_value_of_every_tensor_field_is_data_loss(saved, field):
    _, index = _index_parts(saved)
    values = _BAD_VALUES + {"dtype": ["float33", "string_ref", "resource", "float"],
                            "shape": [[-1, 3], [2, 3.0], [2 ** 40, 2 ** 40], [1] * 300, [5],
                                      [3, 2, 1, 0]],
                            "offset": [0, 10 ** 12], "length": [0, 10 ** 12]}.get(field, [])
    for name in ("f", "i", "s"):
        for bad in values:
            damaged = json.loads(json.dumps(index))
            damaged["tensors"][name][field] = bad
            _write_index(saved, damaged)
            try:
                _read_everything(saved)
            except tf.errors.DataLossError as e:
                assert _names_the_file(e, saved), e
            else:
                pytest.fail("%s[%r] = %r was accepted" % (name, field, bad))
        del damaged["tensors"][name][field]
        _write_index(saved, damaged)
        _assert_data_loss(saved)


@pytest.mark.parametrize("damage", [
    lambda index: [index],
    lambda index: "a string",
    lambda index: dict(index, bundle_id=123),
    lambda index: dict(index, bundle_id="zz" * 16),
    lambda index: dict(index, num_shards=2),
    lambda index: dict(index, num_shards=0, shard_sizes=[]),
    lambda index: dict(index, shard_sizes=[10]),
    lambda index: dict(index, shard_sizes=[index["shard_sizes"][0] + 1]),
    lambda index: dict(index, shard_sizes="big"),
    lambda index: dict(index, tensors=[]),
    lambda index: dict(index, tensors={"f": "entry"}),
    lambda index: {k: v for k, v in index.items() if k != "tensors"},
])
def test_bad_index_structure_is_data_loss(saved, damage):
    _, index = _index_parts(saved)
    _write_index(saved, damage(index))
    _assert_data_loss(saved)


@pytest.mark.parametrize("body", [
    b"[" * 200_000 + b"]" * 200_000,          # nested beyond Python's recursion limit
    b'{"a": ' * 100_000 + b"1" + b"}" * 100_000,
    b"\xff\xfe not utf-8", b"{not json", b"",
])
def test_malformed_or_deeply_nested_json_is_data_loss(saved, body):
    _write_index(saved, body)
    _assert_data_loss(saved)


def test_fuzzed_bytes_of_index_and_data_are_data_loss(saved):
    """Random byte flips anywhere: never another exception, never a wrong value."""
    rng = random.Random(3)
    expected = {name: checkpoint_format.BundleReader(saved).read(name) for name in "fis"}
    for path in (checkpoint_format.index_filename(saved),
                 checkpoint_format.data_filename(saved)):
        original = open(path, "rb").read()
        for _ in range(150):
            damaged = bytearray(original)
            for _ in range(rng.randint(1, 4)):
                damaged[rng.randrange(len(damaged))] ^= 1 << rng.randrange(8)
            with open(path, "wb") as f:
                f.write(bytes(damaged[:rng.choice([len(damaged), rng.randrange(len(damaged))])]))
            try:
                reader = checkpoint_format.BundleReader(saved)
                for name in "fis":
                    np.testing.assert_array_equal(reader.read(name), expected[name])
            except tf.errors.DataLossError as e:
                assert _names_the_file(e, saved), e
        with open(path, "wb") as f:
            f.write(original)


def test_a_huge_declared_size_is_refused_before_anything_is_allocated(saved):
    """A shape of 2**60 elements whose length is consistent with it: the data
    file's size refuses it — no MemoryError."""
    _, index = _index_parts(saved)
    index["tensors"]["f"].update(shape=[2 ** 30, 2 ** 30], length=2 ** 62)
    _write_index(saved, index)
    with pytest.raises(tf.errors.DataLossError, match="outside its data file"):
        checkpoint_format.BundleReader(saved)


def test_damaged_checkpoint_through_saver_restore_is_data_loss(saved):
    _, index = _index_parts(saved)
    index["tensors"]["f"]["shape"] = [3, "2"]
    _write_index(saved, index)
    with tf.Graph().as_default():
        f = tf.Variable(tf.zeros([2, 3]), name="f")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.DataLossError, match="m.index"):
                tf.train.Saver([f]).restore(sess, saved)
