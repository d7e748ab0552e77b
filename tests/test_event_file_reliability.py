"""Event files as untrusted input, and their CRC through the compiled package.

* a record whose length field is huge, or whose payload is not an ``Event``,
  is a ``DataLossError`` naming the file (nothing allocated beyond the file);
* ``FileWriter`` creates its file exclusively: a symbolic link planted under
  its name in a shared log directory is neither followed nor appended to;
* CRC-32C is computed by ``google-crc32c``; the pure-Python loop, kept as the
  fallback, agrees with it.
"""

import os
import random
import socket
import struct

import pytest

import minitf as tf
from minitf.summary import event_file


def _records(*payloads):
    return b"".join(event_file.encode_record(p) for p in payloads)


def _event(step):
    return tf.summary.Event(step=step, wall_time=1.0).SerializeToString()


def test_a_huge_length_field_is_data_loss_without_allocating(tmp_path):
    path = tmp_path / "events.out.tfevents.1.host"
    length = struct.pack("<Q", 2 ** 62)  # with a valid CRC: only the file size refuses it
    path.write_bytes(_records(_event(1)) + length
                     + struct.pack("<I", event_file.masked_crc32c(length)) + b"\x00" * 64)
    events = tf.train.summary_iterator(str(path))
    assert next(events).step == 1
    with pytest.raises(tf.errors.DataLossError, match="runs past the end of the file") as info:
        next(events)
    assert str(path) in str(info.value)


def test_a_payload_that_is_not_an_event_is_data_loss(tmp_path):
    path = tmp_path / "events.out.tfevents.1.host"
    # Field 1 (wall_time) with the wrong wire type, then a length-delimited
    # field claiming 127 bytes where there are 2: no protobuf parser accepts it.
    path.write_bytes(_records(_event(1), b"\x0a\x7f\x01\x02"))
    events = tf.train.summary_iterator(str(path))
    assert next(events).step == 1
    with pytest.raises(tf.errors.DataLossError, match="record 1 is not a valid Event") as info:
        next(events)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("cut", [3, 12, 20])
def test_truncated_and_corrupted_records_are_data_loss(tmp_path, cut):
    path = tmp_path / "events"
    content = _records(_event(1), _event(2))
    path.write_bytes(content[:-cut])
    with pytest.raises(tf.errors.DataLossError, match="events"):
        list(tf.train.summary_iterator(str(path)))
    damaged = bytearray(content)
    damaged[-cut] ^= 0x40
    path.write_bytes(bytes(damaged))
    with pytest.raises(tf.errors.DataLossError, match="corrupted record"):
        list(tf.train.summary_iterator(str(path)))


def test_random_damage_is_data_loss_or_the_original_events(tmp_path):
    path = tmp_path / "events"
    content = _records(*[_event(step) for step in range(5)])
    rng = random.Random(5)
    for _ in range(200):
        damaged = bytearray(content)
        damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        path.write_bytes(bytes(damaged))
        try:
            steps = [e.step for e in tf.train.summary_iterator(str(path))]
        except tf.errors.DataLossError:
            continue
        assert steps == list(range(5))  # the byte was set to its own value


# ---- creating the file --------------------------------------------------------------------------
@pytest.fixture
def frozen_time(monkeypatch):
    monkeypatch.setattr(event_file.time, "time", lambda: 1700000000.25)
    return "events.out.tfevents.1700000000.%s" % socket.gethostname()


def test_file_writer_does_not_follow_a_planted_symlink(tmp_path, frozen_time):
    logdir = tmp_path / "shared_logs"
    logdir.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    os.symlink(victim, logdir / frozen_time)
    writer = tf.summary.FileWriter(str(logdir))
    writer.add_event(tf.summary.Event(step=3, wall_time=2.0))
    writer.close()
    assert victim.read_text() == "precious"
    path = writer._file.path
    assert path == str(logdir / (frozen_time + ".1"))
    assert not os.path.islink(path)
    assert [e.step for e in tf.train.summary_iterator(path)][-1] == 3


def test_writers_in_the_same_second_get_files_of_their_own(tmp_path, frozen_time):
    first = tf.summary.FileWriter(str(tmp_path), filename_suffix=".eval")
    first.reopen()
    first.close()
    first.reopen()  # a new file, not an append to the closed one
    second = tf.summary.FileWriter(str(tmp_path), filename_suffix=".eval")
    for writer in (first, second):
        writer.close()
    assert sorted(os.listdir(tmp_path)) == [frozen_time + suffix for suffix in
                                            (".1.eval", ".2.eval", ".eval")]
    for name in os.listdir(tmp_path):
        assert len(list(tf.train.summary_iterator(str(tmp_path / name)))) == 1


# ---- the checksum -------------------------------------------------------------------------------
def test_crc32c_uses_the_compiled_package():
    assert event_file.CRC32C_IMPLEMENTATION == "google-crc32c"
    assert event_file.crc32c(b"123456789") == 0xE3069283


def test_python_fallback_agrees_with_the_compiled_crc():
    rng = random.Random(0)
    for size in (0, 1, 7, 64, 1000, 4099):
        data = bytes(rng.randrange(256) for _ in range(size))
        assert event_file.python_crc32c(data) == event_file.crc32c(data)
        assert event_file.python_crc32c(memoryview(data)) == event_file.crc32c(memoryview(data))
    assert event_file.python_crc32c(b"123456789") == 0xE3069283


def test_crc_falls_back_to_python_without_the_compiled_module(monkeypatch):
    monkeypatch.setattr(event_file, "CRC32C_IMPLEMENTATION", "python")
    monkeypatch.setattr(event_file, "_compiled_crc32c", None)  # must not be called
    assert event_file.crc32c(b"123456789") == 0xE3069283
    assert event_file.masked_crc32c(b"123456789") == 0xC78AB0E5
