"""The same-host shared-memory path of ``RecvTensor`` and ``RunGraph`` fetches.

What the issue asks: "Same-host tasks may use the existing shared-memory
path".  Checked here: a large tensor crosses between two tasks of one host
as a lent segment (and between processes), its segment is handed back and
reused, names are validated, ``MINITF_SHM=0`` turns the path off, and no
segment is left in ``/dev/shm`` once the servers stop.
"""

import os

import numpy as np
import pytest

pytest.importorskip("grpc", reason="the distributed runtime needs grpcio")
pytest.importorskip("tensorboard.compat.proto.cluster_pb2",
                    reason="the distributed runtime needs TF's protos (minitf[distributed])")

import minitf as tf  # noqa: E402
from minitf.distributed import shared_memory  # noqa: E402
from minitf.distributed.worker_rpc import GrpcWorkerClient  # noqa: E402
from tests.cluster_fixtures import TaskProcesses, in_process_cluster, loopback_cluster  # noqa: E402

pytestmark = [pytest.mark.timeout(180),
              pytest.mark.skipif(not shared_memory.enabled(), reason="no /dev/shm here")]

ELEMENTS = 1 << 20  # 4 MiB of float32: more than the 64 KiB lent in shared memory


def _segments():
    return {name for name in os.listdir("/dev/shm") if name.startswith(shared_memory.PREFIX)}


def _lent_calls(monkeypatch):
    """Records the number of tensors each worker reply lent in shared memory."""
    lent = []
    arrays = shared_memory.Borrower.arrays

    def recording(borrower, header, tensors):
        lent.append(len(header.get("shm_tensors") or []))
        return arrays(borrower, header, tensors)
    monkeypatch.setattr(shared_memory.Borrower, "arrays", recording)
    return lent


def _ps_variable_read_on_worker(target, steps=3):
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(tf.range(ELEMENTS, dtype=tf.float32))
        with tf.device("/job:worker/task:0"):
            total = tf.reduce_max(v * 1.0)
        with tf.Session(target) as sess:
            sess.run(v.initializer)
            for _ in range(steps):
                assert sess.run(total) == ELEMENTS - 1


def test_a_large_tensor_crosses_in_shared_memory_and_nothing_is_left(monkeypatch):
    before = _segments()
    lent = _lent_calls(monkeypatch)
    with in_process_cluster(ps=1, worker=1) as servers:
        _ps_variable_read_on_worker(servers[("worker", 0)].target, steps=5)
        lender = servers[("ps", 0)]._servicer.lender
        # Segments come back and are reused: far fewer than one per step.
        assert len(lender._pool._maps) <= 2
        assert _segments() - before
    assert 1 in lent
    assert _segments() == before


def test_tensors_over_64_kib_are_lent_smaller_ones_sent():
    lender, borrower = shared_memory.Lender(), shared_memory.Borrower()
    try:
        small = np.arange(16 << 10, dtype=np.float32)  # 64 KiB: in the message
        large = np.arange((16 << 10) + 1, dtype=np.float32)  # 64 KiB + 4 bytes: lent
        header, tensors = lender.reply(borrower.request({}), {}, [small, large])
        assert [position for position, _ in header["shm_tensors"]] == [1]
        received = borrower.arrays(header, tensors)
        np.testing.assert_array_equal(received[0], small)
        np.testing.assert_array_equal(received[1], large)
    finally:
        lender.close()


def test_across_processes_and_the_ps_leaves_nothing_behind(monkeypatch):
    before = _segments()
    lent = _lent_calls(monkeypatch)
    cluster = loopback_cluster(ps=1, worker=1)
    processes = TaskProcesses()
    try:
        ps = processes.start(cluster, "ps", 0)
        server = tf.train.Server(cluster, "worker", 0)
        try:
            _ps_variable_read_on_worker(server.target)
        finally:
            server.stop()
        assert ps.terminate() == 0
    finally:
        processes.close()
    assert 1 in lent
    assert _segments() == before


def test_minitf_shm_0_sends_bytes(monkeypatch):
    monkeypatch.setenv("MINITF_SHM", "0")
    before = _segments()
    lent = _lent_calls(monkeypatch)
    with in_process_cluster(ps=1, worker=1) as servers:
        _ps_variable_read_on_worker(servers[("worker", 0)].target, steps=1)
        assert _segments() == before
    assert lent and not any(lent)


def test_a_caller_of_another_host_gets_bytes():
    lender = shared_memory.Lender()
    try:
        header, tensors = lender.reply({"shm": {"host": "elsewhere", "fs": [1, 2]}}, {},
                                       [np.ones(ELEMENTS, np.float32)])
        assert "shm_tensors" not in header and len(tensors) == 1
    finally:
        lender.close()


@pytest.mark.parametrize("names", [["../etc/passwd"], ["minitf-grpc-x/../../a"],
                                   ["someone-else-1"], "minitf-grpc", [3]])
def test_released_names_are_validated(names):
    lender = shared_memory.Lender()
    try:
        with pytest.raises(tf.errors.InvalidArgumentError, match="segment names"):
            lender.reply({"shm_released": names}, {}, [])
    finally:
        lender.close()


@pytest.mark.parametrize("descriptor", [
    {"shm": "../x", "owner": "..", "dtype": "<f4", "shape": [1]},
    {"shm": "minitf-grpc-a-1-0", "owner": "other", "dtype": "<f4", "shape": [1]},
    {"shm": "minitf-grpc-nothere-1-0", "owner": "minitf-grpc-nothere-1", "dtype": "<f4",
     "shape": [1]},
    {"shm": "minitf-grpc-a-1-0", "owner": "minitf-grpc-a-1", "dtype": "|O", "shape": [1]},
])
def test_lent_descriptors_are_validated(descriptor):
    borrower = shared_memory.Borrower()
    with pytest.raises(tf.errors.InvalidArgumentError, match="shared-memory"):
        borrower.arrays({"shm_tensors": [[0, descriptor]]}, [])


def test_a_descriptor_larger_than_its_segment_is_refused():
    lender = shared_memory.Lender()
    try:
        header, _ = lender.reply({"shm": shared_memory._identity()}, {},
                                 [np.ones(ELEMENTS, np.float32)])
        descriptor = header["shm_tensors"][0][1]
        descriptor["shape"] = [ELEMENTS * 4]
        with pytest.raises(tf.errors.InvalidArgumentError, match="shared-memory"):
            shared_memory.Borrower().arrays(header, [])
    finally:
        lender.close()


def test_the_client_hands_released_segments_back():
    lender = shared_memory.Lender()
    try:
        borrower = shared_memory.Borrower()
        header, tensors = lender.reply({"shm": shared_memory._identity()}, {},
                                       [np.ones(ELEMENTS, np.float32)])
        (array,) = borrower.arrays(header, tensors)
        assert array.sum() == ELEMENTS
        del array
        request = borrower.request({})
        assert len(request["shm_released"]) == 1
        lender.reply(request, {}, [])
        assert sum(len(v) for v in lender._pool._free.values()) == 1
    finally:
        lender.close()


def test_grpc_worker_client_without_shared_memory(monkeypatch):
    monkeypatch.setenv("MINITF_SHM", "0")
    client = GrpcWorkerClient("127.0.0.1:1", "/job:x/replica:0/task:0")
    try:
        assert "shm" not in client._borrower.request({})
    finally:
        client.close()
