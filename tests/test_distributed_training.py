"""Distributed training as TF1 does it: SyncReplicasOptimizer, backup workers, faults.

The first half checks ``tf.train.SyncReplicasOptimizer`` in one process (its
ops, where they are placed, the mean it applies, stale gradients dropped, its
errors).  The second half runs real clusters on loopback: a ps task and worker
tasks in processes of their own, every worker running
``tests/distributed_trainer.py`` with its ``TF_CONFIG``, as a launcher would.
Tasks are killed for real (SIGKILL) and restarted; the tests read the
trainers' output lines to know where training is.  Every process a test
starts is killed and reaped at its end.
"""

import json
import os
import re
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

pytest.importorskip("grpc", reason="the distributed runtime needs grpcio (minitf[distributed])")

import minitf as tf  # noqa: E402
from tests.cluster_fixtures import (REPO_ROOT, TaskProcess, loopback_cluster,  # noqa: E402
                                    unlink_segments_of)

pytestmark = [pytest.mark.timeout(240),
              # The chief's queue runner is cancelled after its session ends (see _chief_session).
              pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")]

TRAINER = os.path.join(REPO_ROOT, "tests", "distributed_trainer.py")


# ---- SyncReplicasOptimizer in one process ---------------------------------------------------------
def _sync_model(replicas_to_aggregate, total_num_replicas, learning_rate=1.0):
    """``loss = sum(w * g)`` with ``g`` fed: the gradient of ``w`` is what is fed."""
    global_step = tf.train.get_or_create_global_step()
    w = tf.Variable([0.0, 0.0], name="w")
    g = tf.placeholder(tf.float32, [2])
    optimizer = tf.train.SyncReplicasOptimizer(
        tf.train.GradientDescentOptimizer(learning_rate), replicas_to_aggregate,
        total_num_replicas)
    train_op = optimizer.minimize(tf.reduce_sum(w * g), global_step=global_step)
    return optimizer, train_op, w, g, global_step


def _chief_session(optimizer):
    """The chief's MonitoredTrainingSession.  At its end the chief's queue runner
    waits in ``take_grad`` for gradients no replica sends any more: the session
    waits ``stop_grace_period_secs`` for it, then closes, which cancels it (TF
    behaves the same, its thread reporting the CancelledError)."""
    return tf.train.MonitoredTrainingSession(hooks=[optimizer.make_session_run_hook(True)],
                                             stop_grace_period_secs=0.5)


def _wait_for(condition, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def _run_replicas(sess, train_op, g, gradients):
    """Each gradient fed by a thread of its own, as replicas do; waits for all."""
    threads = [threading.Thread(target=sess.run, args=(train_op, {g: grad}))
               for grad in gradients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10.0)
        assert not thread.is_alive()


def test_the_chief_applies_the_mean_of_the_replicas_gradients():
    optimizer, train_op, w, g, global_step = _sync_model(2, 2, learning_rate=0.5)
    with _chief_session(optimizer) as sess:
        _run_replicas(sess, train_op, g, [[1.0, 2.0], [3.0, 6.0]])
        _wait_for(lambda: sess.run(global_step) == 1)
        # One update with the mean gradient (2, 4), not two with each.
        np.testing.assert_allclose(sess.run(w), [-1.0, -2.0])


def test_a_step_completes_without_the_backup_worker_and_its_late_gradient_is_dropped():
    optimizer, train_op, w, g, global_step = _sync_model(2, 3)
    accumulator = optimizer._accumulator_list[0][0]
    # The third replica computed its gradient at step 0 (and is late).
    rewind = optimizer._local_step.assign(0)
    late = accumulator.apply_grad([100.0, 100.0], local_step=optimizer._local_step)
    accumulated = accumulator.num_accumulated()
    with _chief_session(optimizer) as sess:
        _run_replicas(sess, train_op, g, [[1.0, 1.0], [3.0, 3.0]])
        _wait_for(lambda: sess.run(global_step) == 1)  # two of three replicas were enough
        np.testing.assert_allclose(sess.run(w), [-2.0, -2.0])
        sess.run(rewind)
        sess.run(late)  # stale now: dropped
        assert sess.run(accumulated) == 0
        np.testing.assert_allclose(sess.run(w), [-2.0, -2.0])


def test_tokens_carry_the_new_global_step_to_the_replicas():
    optimizer, train_op, _, g, global_step = _sync_model(1, 1)
    local_step = optimizer._local_step
    with _chief_session(optimizer) as sess:
        sess.run(train_op, {g: [1.0, 1.0]})
        _wait_for(lambda: sess.run(global_step) == 1)
        # Its token was one of the initial ones, which hold the initial global step ...
        assert sess.run(local_step) == 0
        # ... so its next gradient is stale (dropped) but the token it then
        # takes, handed out after step 1, holds 1: the one after that counts.
        sess.run(train_op, {g: [1.0, 1.0]})
        assert sess.run([global_step, local_step]) == [1, 1]
        sess.run(train_op, {g: [1.0, 1.0]})
        _wait_for(lambda: sess.run(global_step) == 2)
        assert sess.run(local_step) == 2


def test_placement_under_replica_device_setter():
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, worker_device="/job:worker/task:1")):
        optimizer, train_op, w, _, global_step = _sync_model(2, 3)
    assert global_step.device == "/job:ps/task:0" and w.device == "/job:ps/task:1"
    devices = {accumulator.accumulator_ref.op.name: device
               for accumulator, device in optimizer._accumulator_list}
    assert list(devices.values()) == ["/job:ps/task:1"]  # beside w
    for accumulator, _ in optimizer._accumulator_list:
        assert accumulator.accumulator_ref.device == "/job:ps/task:1"
    # The local step stays on the worker; the token queue sits with the global step.
    assert optimizer._local_step.device == "/job:worker/task:1"
    assert optimizer._sync_token_queue.queue_ref.device == "/job:ps/task:0"
    assert train_op.device == "/job:ps/task:0"  # assigns the token, as TF places it
    assert optimizer._local_step in tf.local_variables()
    assert optimizer._local_step not in tf.global_variables()


def test_the_init_tokens_and_their_errors():
    optimizer = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2, 3)
    with pytest.raises(ValueError, match="after apply_gradients"):
        optimizer.get_init_tokens_op()
    with pytest.raises(ValueError, match="after apply_gradients"):
        optimizer.get_chief_queue_runner()
    hook = optimizer.make_session_run_hook(is_chief=True)
    with pytest.raises(ValueError, match="apply_gradient should be called"):
        hook.begin()
    w = tf.Variable(1.0)
    with pytest.raises(ValueError, match="Global step is required"):
        optimizer.apply_gradients([(tf.constant(1.0), w)])
    with pytest.raises(ValueError, match="at least one variable"):
        optimizer.apply_gradients([], global_step=tf.train.get_or_create_global_step())
    optimizer.minimize(w * 2.0, global_step=tf.train.get_or_create_global_step())
    assert optimizer.get_init_tokens_op(0).type == "NoOp"
    assert optimizer.get_init_tokens_op().type == "QueueEnqueueManyV2"
    two = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 3, 1)
    two.minimize(w * 3.0, global_step=tf.train.get_or_create_global_step())
    with pytest.raises(ValueError, match="Too few tokens to finish the first step: 1 "
                                         r"\(given\) vs 2 \(needed\)"):
        two.get_init_tokens_op(1)


def test_slots_are_the_wrapped_optimizers():
    step = tf.train.get_or_create_global_step()
    w = tf.Variable([1.0, 2.0])
    momentum = tf.train.MomentumOptimizer(0.1, 0.9)
    optimizer = tf.train.SyncReplicasOptimizer(momentum, 1)
    optimizer.minimize(tf.reduce_sum(w), global_step=step)
    assert optimizer.get_slot_names() == ["momentum"]
    assert optimizer.get_slot(w, "momentum") is momentum.get_slot(w, "momentum")
    assert optimizer.variables() == momentum.variables()


# ---- clusters of processes -------------------------------------------------------------------------
class TrainingCluster:
    """A ps task (the launcher) and worker tasks running ``distributed_trainer.py``.

    Args:
        workers: how many worker tasks.
        checkpoint_dir: the trainers' ``--checkpoint-dir``.
        args: more trainer arguments, for every worker.
    """

    def __init__(self, workers, checkpoint_dir, args=(), worker_args=None):
        self.cluster = loopback_cluster(ps=1, worker=workers)
        self.args = ["--checkpoint-dir", str(checkpoint_dir)] + list(args)
        self.lines = []  # (time, worker, line), every worker's output in order
        self._lock = threading.Lock()
        self.ps = TaskProcess(self.cluster, "ps", 0)
        self.workers = {}
        try:
            for index in range(workers):
                self.start_worker(index, (worker_args or {}).get(index, ()))
        except BaseException:
            self.close()
            raise

    def start_worker(self, index, extra_args=()):
        env = dict(os.environ, TF_CONFIG=json.dumps(
            {"cluster": self.cluster, "task": {"type": "worker", "index": index}}))
        process = subprocess.Popen([sys.executable, TRAINER] + self.args + list(extra_args),
                                   env=env, cwd=REPO_ROOT, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.workers[index] = process
        threading.Thread(target=self._read, args=(index, process), daemon=True).start()

    def _read(self, index, process):
        for raw in process.stdout:
            with self._lock:
                self.lines.append((time.monotonic(), index, raw.decode(errors="replace").strip()))

    def kill_worker(self, index):
        process = self.workers[index]
        process.kill()
        process.wait(10.0)
        unlink_segments_of(process.pid)  # what its server lent, it cannot unlink any more

    def steps(self, worker=None, since=0.0):
        """The global steps the trainers reported (of ``worker``), after ``since``."""
        with self._lock:
            lines = list(self.lines)
        found = []
        for when, index, line in lines:
            match = re.search(r"STEP task=(\d+) global=(\d+)", line)
            if match and when >= since and worker in (None, index):
                found.append(int(match.group(2)))
        return found

    def saved(self):
        with self._lock:
            return [int(m.group(1)) for _, index, line in self.lines
                    for m in [re.search(r"SAVED step=(\d+)", line)] if m]

    def wait_for(self, condition, seconds, what):
        deadline = time.monotonic() + seconds
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError("timed out waiting for %s; output:\n%s" % (what, self.log()))
            time.sleep(0.05)

    def done(self, index):
        with self._lock:
            return any(i == index and line.startswith("DONE task=%d" % index)
                       for _, i, line in self.lines)

    def log(self):
        with self._lock:
            return "\n".join("[worker:%d] %s" % (i, line) for _, i, line in self.lines[-60:])

    def close(self):
        for process in self.workers.values():
            if process.poll() is None:
                process.kill()
            process.wait(10.0)
            process.stdout.close()
            unlink_segments_of(process.pid)
        self.ps.kill()


@pytest.fixture
def clusters():
    """Makes :class:`TrainingCluster`\\ s; kills all of their processes at the end."""
    made = []

    def make(*args, **kwargs):
        made.append(TrainingCluster(*args, **kwargs))
        return made[-1]
    yield make
    for cluster in made:
        cluster.close()


@pytest.mark.slow
def test_async_training_goes_on_without_a_killed_worker_which_then_rejoins(clusters, tmp_path):
    cluster = clusters(2, tmp_path, ["--last-step", "100000", "--step-delay", "0.02"])
    cluster.wait_for(lambda: len(cluster.steps(worker=1)) >= 5, 60, "worker 1 to train")
    cluster.kill_worker(1)
    killed = time.monotonic()
    cluster.wait_for(lambda: len(cluster.steps(worker=0, since=killed)) >= 20, 30,
                     "the chief to go on alone")
    restarted = time.monotonic()
    cluster.start_worker(1)
    cluster.wait_for(lambda: len(cluster.steps(worker=1, since=restarted)) >= 5, 60,
                     "the restarted worker to rejoin")
    # Both update the same global step on the ps: it only grows.
    assert max(cluster.steps(worker=1, since=restarted)) > max(cluster.steps(since=killed)[:20])


@pytest.mark.slow
def test_sync_steps_complete_without_a_killed_backup_worker(clusters, tmp_path):
    cluster = clusters(3, tmp_path, ["--sync", "--replicas-to-aggregate", "2",
                                     "--last-step", "100000", "--step-delay", "0.02"])
    cluster.wait_for(lambda: len(cluster.steps(worker=2)) >= 5, 60, "worker 2 to train")
    cluster.kill_worker(2)
    killed = time.monotonic()
    # Every global step needs two gradients: workers 0 and 1 still give them.
    cluster.wait_for(lambda: len(set(cluster.steps(worker=0, since=killed))) >= 10, 30,
                     "synchronous steps without worker 2")
    restarted = time.monotonic()
    cluster.start_worker(2)
    cluster.wait_for(lambda: len(cluster.steps(worker=2, since=restarted)) >= 5, 60,
                     "the restarted worker to rejoin")


@pytest.mark.slow
def test_a_straggler_does_not_slow_the_synchronous_steps(clusters, tmp_path):
    # A third replica sleeps 10 s before each of its steps.  Had every step
    # waited for it, 10 steps would take 100 s; with 2 of 3 gradients
    # aggregated, they never wait for it.
    cluster = clusters(3, tmp_path, ["--sync", "--replicas-to-aggregate", "2",
                                     "--last-step", "10"],
                       worker_args={2: ["--step-delay", "10.0"]})
    cluster.wait_for(lambda: cluster.steps(worker=0), 60, "the first step")
    cluster.wait_for(lambda: cluster.done(0), 60, "the chief to finish 10 steps")
    assert len(cluster.steps(worker=2)) <= 7, cluster.log()


@pytest.mark.slow
def test_training_recovers_from_a_killed_ps_by_its_last_checkpoint(clusters, tmp_path):
    cluster = clusters(2, tmp_path, ["--last-step", "400", "--step-delay", "0.02",
                                     "--save-steps", "20", "--step-timeout", "5"])
    cluster.wait_for(lambda: len(cluster.saved()) >= 3, 60, "two checkpoints after the first")
    cluster.ps.kill()
    killed = time.monotonic()
    last_saved = max(cluster.saved())
    time.sleep(2.0)
    assert not cluster.steps(since=killed + 1.0), "steps ran while the ps was down"
    cluster.ps.start()
    back = time.monotonic()
    cluster.wait_for(lambda: len(cluster.steps(worker=0, since=back)) >= 10, 60,
                     "the chief to restore and go on")
    # It restored the last checkpoint: no step went back before it.
    assert min(cluster.steps(worker=0, since=back)) >= last_saved
    cluster.wait_for(lambda: cluster.done(0), 120, "the chief to finish")
    _assert_every_checkpoint_restores(tmp_path)


@pytest.mark.slow
def test_a_chief_killed_while_saving_leaves_the_previous_checkpoint(clusters, tmp_path):
    cluster = clusters(1, tmp_path, ["--last-step", "100000", "--save-steps", "5",
                                     "--step-delay", "0.02", "--ballast-mb", "96"])
    cluster.wait_for(lambda: len(cluster.saved()) >= 2, 90, "two checkpoints")
    saved_before = cluster.saved()
    cluster.wait_for(lambda: _saving_after(cluster, max(saved_before)), 60, "the next save")
    time.sleep(0.05)  # in the middle of writing 96 MiB
    cluster.kill_worker(0)
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state is not None
    _assert_every_checkpoint_restores(tmp_path)
    # A new chief restores the newest complete checkpoint and goes on from there.
    restarted = time.monotonic()
    cluster.start_worker(0)
    cluster.wait_for(lambda: len(cluster.steps(worker=0, since=restarted)) >= 3, 90,
                     "the new chief to go on")
    newest = int(state.model_checkpoint_path.rsplit("-", 1)[1])
    assert min(cluster.steps(worker=0, since=restarted)) >= newest


def _saving_after(cluster, step):
    with cluster._lock:
        return any(re.match(r"SAVING step=(\d+)", line) and
                   int(line.split("=")[1]) > step for _, _, line in cluster.lines)


def _assert_every_checkpoint_restores(checkpoint_dir):
    """Each checkpoint the state file lists reads back whole, global step included."""
    state = tf.train.get_checkpoint_state(str(checkpoint_dir))
    for path in state.all_model_checkpoint_paths:
        reader = tf.train.NewCheckpointReader(path)
        # The saver hook names the file by the step it read just before saving;
        # another (async) worker may have taken a step in between, as in TF.
        assert reader.get_tensor("global_step") >= int(path.rsplit("-", 1)[1])
        for name in reader.get_variable_to_shape_map():
            reader.get_tensor(name)
