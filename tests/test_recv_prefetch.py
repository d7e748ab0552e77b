"""A worker pulls every remote tensor of a step at once (TF's asynchronous ``_Recv``).

A partition's ops run one after another, but its ``_Recv`` s from other
processes must not wait for each other: the worker asks for all of them when
the step starts, so their round trips overlap.  These tests give a
``WorkerService`` a fake peer that records the ``recv_tensor`` calls it gets
and answers only when the test lets it.
"""

import threading

import numpy as np
import pytest

import minitf as tf
from minitf.registry import get_registry
from minitf.runtime.rendezvous import rendezvous_key
from minitf.runtime.worker import service as service_lib
from minitf.runtime.worker.service import WorkerService

pytestmark = pytest.mark.timeout(60)

HERE = "/job:worker/replica:0/task:0/device:CPU:0"
THERE = "/job:ps/replica:0/task:0/device:CPU:0"


class _HeldPeer:
    """A remote task whose ``recv_tensor`` waits until :meth:`answer_all`."""

    def __init__(self):
        self.asked = []
        self.all_asked = threading.Event()
        self._answer = threading.Event()
        self._lock = threading.Lock()
        self.expected = None

    def recv_tensor(self, step_id, key, timeout=None):
        with self._lock:
            self.asked.append(key)
            if len(self.asked) == self.expected:
                self.all_asked.set()
        assert self._answer.wait(10.0)
        return np.float32(len(key) % 7)

    def answer_all(self):
        self._answer.set()


def _partition(count):
    """A partition summing ``count`` tensors received from THERE; returns (graph, sum, keys)."""
    graph = tf.Graph()
    with graph.as_default(), graph.device(HERE):
        received = [graph.create_op("_Recv", [], name="_recv_t%d/" % i, attrs={
            "tensor_name": "t%d:0" % i, "send_device": THERE, "send_device_incarnation": 1,
            "recv_device": HERE, "tensor_type": tf.float32, "shape": tf.TensorShape([])})
            for i in range(count)]
        total = tf.add_n([r.outputs[0] for r in received], name="total")
    return graph, total, [rendezvous_key(r) for r in received]


class _Step:
    """A WorkerService with ``count`` remote Recvs registered, its step run in a thread."""

    def __init__(self, count, step_id):
        self.peer = _HeldPeer()
        graph, total, self.keys = _partition(count)
        self.peer.expected = count
        cpu = get_registry().device_factory("CPU").create(0, name=HERE)
        self.worker = WorkerService([cpu], get_registry(), peer_for=lambda device: self.peer)
        handle = self.worker.register_graph(graph, HERE)
        self.step_id = step_id
        self.result = []
        self.thread = threading.Thread(target=lambda: self.result.append(
            self.worker.run_graph(handle, step_id, {}, [total.name])))
        self.thread.start()

    def close(self):
        self.peer.answer_all()
        self.thread.join(10.0)
        self.worker.cleanup_step(self.step_id)
        self.worker.close()


def test_every_remote_tensor_of_a_step_is_asked_for_at_once():
    step = _Step(4, step_id=7)
    try:
        # All four requests are out although the first _Recv has its answer not yet.
        assert step.peer.all_asked.wait(10.0), step.peer.asked
        assert sorted(step.peer.asked) == sorted(step.keys)
        step.peer.answer_all()
        step.thread.join(10.0)
        expected = sum(np.float32(len(k) % 7) for k in step.keys)
        assert step.result == [[expected]]
        assert len(step.peer.asked) == len(step.keys)  # each asked for once
    finally:
        step.close()


def test_a_recv_whose_pull_is_still_queued_pulls_by_itself(monkeypatch):
    # With one pull thread busy on the first tensor, the others wait in its
    # queue; the _Recvs that need them must not wait behind it.
    monkeypatch.setattr(service_lib, "_PULL_THREADS", 1)
    step = _Step(3, step_id=8)
    try:
        threading.Timer(0.5, step.peer.answer_all).start()
        step.thread.join(10.0)
        assert not step.thread.is_alive() and len(step.result) == 1
        assert sorted(set(step.peer.asked)) == sorted(step.keys)
    finally:
        step.close()


# ---- a peer that hands over several tensors per call (a task over gRPC: RecvTensors) ------------
class _StreamingPeer:
    """A remote task with ``recv_tensors``: each call yields the tensors released so far."""

    def __init__(self):
        self.calls = []  # the keys of each recv_tensors call
        self.single_calls = []
        self._released = threading.Semaphore(0)

    def recv_tensors(self, step_id, keys, timeout=None):
        self.calls.append(list(keys))
        for key in keys:
            assert self._released.acquire(timeout=10.0)
            yield key, np.float32(len(key) % 7)

    def recv_tensor(self, step_id, key, timeout=None):
        self.single_calls.append(key)
        return np.float32(len(key) % 7)

    def release(self, count):
        for _ in range(count):
            self._released.release()


def _run_in_thread(worker, handle, step_id, fetch):
    result = []
    thread = threading.Thread(target=lambda: result.append(
        worker.run_graph(handle, step_id, {}, [fetch])), daemon=True)
    thread.start()
    return thread, result


def test_a_peer_that_streams_is_asked_once_for_all_of_a_steps_tensors():
    peer = _StreamingPeer()
    graph, total, keys = _partition(4)
    cpu = get_registry().device_factory("CPU").create(0, name=HERE)
    worker = WorkerService([cpu], get_registry(), peer_for=lambda device: peer)
    try:
        handle = worker.register_graph(graph, HERE)
        thread, result = _run_in_thread(worker, handle, 3, total.name)
        peer.release(4)
        thread.join(10.0)
        assert result == [[sum(np.float32(len(k) % 7) for k in keys)]]
        assert len(peer.calls) == 1 and sorted(peer.calls[0]) == sorted(keys)
        assert peer.single_calls == []
    finally:
        worker.cleanup_step(3)
        worker.close()


def test_a_stream_the_busy_pool_cannot_start_moves_to_its_own_thread(monkeypatch):
    # One pull thread, held by the first step's stream: the second step's
    # stream would wait behind it forever; its Recv starts it elsewhere.
    monkeypatch.setattr(service_lib, "_PULL_THREADS", 1)
    monkeypatch.setattr(service_lib, "_POOL_START_SECONDS", 0.05)
    held, free = _StreamingPeer(), _StreamingPeer()
    graph_a, total_a, _ = _partition(2)
    graph_b = tf.Graph()
    with graph_b.as_default(), graph_b.device(HERE):
        recvs = [graph_b.create_op("_Recv", [], name="_recv_u%d/" % i, attrs={
            "tensor_name": "u%d:0" % i, "send_device": "/job:other/replica:0/task:0/device:CPU:0",
            "send_device_incarnation": 1, "recv_device": HERE, "tensor_type": tf.float32,
            "shape": tf.TensorShape([])}) for i in range(2)]
        total_b = tf.add_n([r.outputs[0] for r in recvs])
    cpu = get_registry().device_factory("CPU").create(0, name=HERE)
    worker = WorkerService([cpu], get_registry(),
                           peer_for=lambda device: free if "other" in device else held)
    try:
        thread_a, _ = _run_in_thread(worker, worker.register_graph(graph_a, HERE), 1, total_a.name)
        thread_b, result_b = _run_in_thread(worker, worker.register_graph(graph_b, HERE), 2,
                                            total_b.name)
        free.release(2)
        thread_b.join(10.0)
        assert len(result_b) == 1 and thread_a.is_alive()  # b done while a still waits
        held.release(2)
        thread_a.join(10.0)
        assert not thread_a.is_alive()
    finally:
        held.release(2)
        for step_id in (1, 2):
            worker.cleanup_step(step_id)
        worker.close()


# ---- the rendezvous side: whichever of several keys are ready ------------------------------------
def test_recv_some_returns_the_keys_sent_so_far_once_one_is():
    from minitf.runtime.rendezvous import Rendezvous
    rendezvous = Rendezvous()
    rendezvous.send("a", 1)
    rendezvous.send("c", 3)
    assert rendezvous.recv_some(["a", "b", "c"]) == {"a": 1, "c": 3}
    threading.Timer(0.2, rendezvous.send, ("b", 2)).start()
    assert rendezvous.recv_some(["b"], timeout=10.0) == {"b": 2}  # waited for it
    with pytest.raises(tf.errors.DeadlineExceededError):
        rendezvous.recv_some(["d"], timeout=0.05)
    rendezvous.start_abort(tf.errors.CancelledError(None, None, "step failed"))
    with pytest.raises(tf.errors.CancelledError):
        rendezvous.recv_some(["d"])
