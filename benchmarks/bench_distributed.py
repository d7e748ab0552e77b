"""What does a step cost through a cluster's master, and how fast does ``RecvTensor`` move a tensor?

Two measurements of the distributed runtime (``minitf/distributed/``), each
against a baseline taken in the same run:

(a) **per-step overhead**: a tiny graph (a fed ``float32`` scalar, ``+ 1``)
    run with ``Session.run`` through

    * a local session (``tf.Session()``): the baseline;
    * ``Session("grpc://...")`` to a one-task server in this process (its
      master is called directly, TF's LocalMaster; it runs the step on its
      own task without an RPC);
    * the same with the server in another OS process (one ``RunStep``);
    * a server in this process with the ``+ 1`` pinned to a ps task in
      another process (one ``RunGraph``, then ``CleanupGraph``): how TF
      programs run, client and master in a worker's process;
    * a two-task cluster in two other processes: the master on task 0, the
      ``+ 1`` pinned to task 1 (``RunStep``, then ``RunGraph`` with the feed,
      then ``CleanupGraph``);
    * and, as the floor of any remote step, a bare grpcio call with a tiny
      reply to a server in another process (no minitf at all).

    In microseconds per run, best of ``--repeat`` calibrated loops of at least
    ``--min-time`` seconds (timeit-style).  The issue's goal is "no more than
    TF 2.21's own grpc session"; TF is not a dependency, so the script prints
    minitf's numbers and the ratio to the local session, and the TF figure
    comes from a scratch venv (see benchmarks/README.md).

(b) **RecvTensor bandwidth** between two tasks in two OS processes: a
    float32 variable of ``--sizes`` MiB (default 64 and 1024) on
    ``/job:ps/task:0`` (a process started with ``python -m
    minitf.distributed.launch``) read by a one-element ``tf.slice`` on
    ``/job:worker/task:0`` (this process's server, whose master plans the
    step): the whole variable crosses with one ``RecvTensor``.  The same
    graph with a 16-float variable gives the step's fixed cost; the
    *transfer* is the difference.  Against an in-process ``np.copyto`` of the
    same size (memcpy), and against a bare grpcio call answering the same
    number of bytes from another process (the transport's own ceiling, without
    minitf's messages, rendezvous and step), best of a few steps after a
    warm-up.  Each size is measured twice: with ``MINITF_SHM=0`` (every
    byte crosses gRPC, in 4 MiB chunks) and on the same-host shared-memory
    path (the ps task lends the variable in a ``/dev/shm`` segment; see
    ``minitf/distributed/shared_memory.py``).  Goals: at least 2 GB/s over
    loopback gRPC, and at least 50 % of memcpy on the shared-memory path.

(c) **training through a cluster**: the course MLP (784-512-512-10) in one
    process and through a ps and 1, 2, 4 workers, async and sync, in
    examples/s, and the per-step overhead the cluster adds (goal: at most
    2 ms); see ``bench_distributed_training.py``.

Run it from the repository root::

    .venv/bin/python benchmarks/bench_distributed.py
    .venv/bin/python benchmarks/bench_distributed.py --sizes 64 --repeat 3

The exit status is 0 even when a goal is missed (this is a measurement, not a
test).  ``OPENBLAS_CORETYPE`` is handled as in ``bench_send_recv.py``.
"""

import argparse
import json
import os
import platform
import select
import socket
import subprocess
import sys
import time

from bench_send_recv import (best_of_steps, best_time_per_call, handle_openblas_coretype,
                             memcpy_seconds)
from bench_send_recv import _print_table as print_table

GRPC_GOAL_GBPS = 2.0        # RecvTensor over loopback gRPC
SHARED_MEMORY_GOAL = 0.5    # fraction of memcpy on a same-host shared-memory path
SMALL_ELEMENTS = 16
READY_TIMEOUT_S = 60.0
ONE_CPU = {"CPU": 1, "GPU": 0}  # every task and session: one CPU device, no GPU


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 1024],
                        help="sizes in MiB of the tensors moved in (b) (default: 64 1024)")
    parser.add_argument("--steps", type=int, default=10,
                        help="timed steps per size in (b), fewer for sizes over 256 MiB "
                             "(default: 10)")
    parser.add_argument("--repeat", type=int, default=7,
                        help="timed repeats in (a); the best is reported (default: 7)")
    parser.add_argument("--min-time", type=float, default=0.2,
                        help="seconds each repeat of (a) lasts at least (default: 0.2)")
    parser.add_argument("--skip-overhead", action="store_true", help="skip (a)")
    parser.add_argument("--skip-bandwidth", action="store_true", help="skip (b)")
    parser.add_argument("--skip-training", action="store_true",
                        help="skip (c), the MLP trained through a cluster "
                             "(bench_distributed_training.py)")
    parser.add_argument("--training-workers", type=int, nargs="+", default=[1, 2, 4],
                        help="cluster sizes of (c) (default: 1 2 4)")
    parser.add_argument("--training-seconds", type=float, default=8.0,
                        help="timed seconds per run of (c) (default: 8)")
    parser.add_argument("--keep-openblas-coretype", action="store_true",
                        help="do not remove OPENBLAS_CORETYPE from the environment")
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="OPENBLAS_NUM_THREADS of every process, see "
                             "bench_distributed_training.py (0: OpenBLAS's default)")
    return parser.parse_args(argv)


# ---- tasks in other processes ----------------------------------------------------------
def free_address():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return "127.0.0.1:%d" % s.getsockname()[1]


class ServingProcess:
    """A process that serves until stopped, once it printed ``READY <target>``.

    Its standard input is a pipe from this process: it exits when this
    process goes away, even if it crashes.
    """

    def __init__(self, command, name):
        self.name = name
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True)
        self.target = self._wait_until_ready()

    def _wait_until_ready(self):
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.process.stdout], [], [], 1.0)
            if ready:
                line = self.process.stdout.readline()
                if line.startswith("READY "):
                    return line.split()[1]
                if not line:
                    break
        self.stop()
        raise RuntimeError("%s did not print READY within %.0f s (exit status %s)"
                           % (self.name, READY_TIMEOUT_S, self.process.returncode))

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            stream.close()


def TaskProcess(cluster, job, task):
    """One task of ``cluster``, served by ``python -m minitf.distributed.launch``."""
    return ServingProcess([sys.executable, "-m", "minitf.distributed.launch",
                           "--cluster", json.dumps(cluster), "--job", job, "--task", str(task),
                           "--device-count", ",".join("%s=%d" % kv for kv in ONE_CPU.items())],
                          "task %s:%d" % (job, task))


# A bare grpcio channel takes messages of up to 2 GiB - 1 (gRPC's own cap).
BARE_OPTIONS = [("grpc.max_send_message_length", (1 << 31) - 1),
                ("grpc.max_receive_message_length", (1 << 31) - 1)]

# A bare grpcio server answering one method with ``argv[1]`` bytes: the ceiling
# of what a unary gRPC call moves in Python, without minitf's layers.
BARE_SERVER = """
import concurrent.futures, sys, grpc
limit = (1 << 31) - 1
options = [("grpc.max_send_message_length", limit), ("grpc.max_receive_message_length", limit)]
payload = b"\\x01" * int(sys.argv[1])
server = grpc.server(concurrent.futures.ThreadPoolExecutor(2), options=options)
server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(
    "Bare", {"Get": grpc.unary_unary_rpc_method_handler(lambda request, context: payload)})])
port = server.add_insecure_port("127.0.0.1:0")
server.start()
print("READY 127.0.0.1:%d" % port, flush=True)
sys.stdin.read()  # until the parent closes the pipe
"""


# ---- (a) per-step overhead -------------------------------------------------------------
def tiny_graph(tf, device=None):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        with tf.device(device):
            y = tf.add(x, 1.0, name="y")
    return graph, x, y


def time_tiny_step(tf, np, target, device, args):
    """Seconds per ``sess.run(y, {x: 3})`` of the tiny graph through ``target``."""
    graph, x, y = tiny_graph(tf, device)
    value = np.float32(3.0)
    config = tf.ConfigProto(device_count=ONE_CPU)
    with tf.Session(target, graph=graph, config=config) as sess:
        assert sess.run(y, {x: value}) == 4.0
        used = sorted(sess.partition_graphs(y, {x: value}))
        seconds = best_time_per_call(lambda: sess.run(y, {x: value}), args.repeat, args.min_time)
    return seconds, used


def measure_overhead(tf, np, args):
    rows = []
    local, _ = time_tiny_step(tf, np, "", None, args)
    rows.append(("local session (tf.Session())", local, ["(this process)"]))

    server = tf.train.Server.create_local_server(config=tf.ConfigProto(device_count=ONE_CPU))
    try:
        seconds, used = time_tiny_step(tf, np, server.target, None, args)
        rows.append(("grpc, 1 task in this process", seconds, used))
    finally:
        server.stop()

    task = TaskProcess({"local": [free_address()]}, "local", 0)
    try:
        seconds, used = time_tiny_step(tf, np, task.target, None, args)
        rows.append(("grpc, 1 task in another process", seconds, used))
    finally:
        task.stop()

    cluster = {"worker": [free_address()], "ps": [free_address()]}
    ps = TaskProcess(cluster, "ps", 0)
    server = tf.train.Server(cluster, "worker", 0, config=tf.ConfigProto(device_count=ONE_CPU))
    try:
        seconds, used = time_tiny_step(tf, np, server.target, "/job:ps/task:0", args)
        assert used == ["/job:ps/replica:0/task:0/device:CPU:0"], used
        rows.append(("grpc, master in this process, op on a task in another", seconds, used))
    finally:
        server.stop()
        ps.stop()

    cluster = {"worker": [free_address(), free_address()]}
    tasks = [TaskProcess(cluster, "worker", i) for i in range(2)]
    try:
        seconds, used = time_tiny_step(tf, np, tasks[0].target, "/job:worker/task:1", args)
        assert used == ["/job:worker/replica:0/task:1/device:CPU:0"], used
        rows.append(("grpc, master on task 0, op on task 1 (2 processes)", seconds, used))
    finally:
        for task in tasks:
            task.stop()

    rows.append(("bare grpcio call, 4-byte reply, another process", bare_call_seconds(args), []))

    print("(a) per-run cost of a tiny graph (fed scalar, +1; best of %d repeats)" % args.repeat)
    print_table(("", "us per run", "vs local"), [
        (name, "%.1f" % (seconds * 1e6), "%.2fx" % (seconds / local))
        for name, seconds, _ in rows])
    print("goal: <= TF 2.21's grpc session on the same machine: not judged here "
          "(TF is not installed; see benchmarks/README.md)\n")


def bare_call_seconds(args):
    """Seconds per tiny bare grpcio call to another process: the floor of a remote step."""
    import grpc

    server = ServingProcess([sys.executable, "-c", BARE_SERVER, "4"], "bare gRPC server")
    channel = grpc.insecure_channel(server.target, options=BARE_OPTIONS)
    try:
        get = channel.unary_unary("/Bare/Get")
        return best_time_per_call(lambda: get(b"x"), args.repeat, args.min_time)
    finally:
        channel.close()
        server.stop()


# ---- (b) RecvTensor bandwidth ----------------------------------------------------------
def time_recv_tensor(tf, np, elements, steps, shared_memory=True):
    """A variable on a ps task in another process, read by a slice on this process's task.

    Args:
        shared_memory: let the tasks lend large tensors in ``/dev/shm``; False:
            ``MINITF_SHM=0`` (in both processes), every byte crosses gRPC.

    Returns ``(best step s, median step s, best _Recv op s)``.
    """
    previous = os.environ.get("MINITF_SHM")
    os.environ["MINITF_SHM"] = "1" if shared_memory else "0"
    try:
        return _time_recv_tensor(tf, np, elements, steps)
    finally:
        if previous is None:
            del os.environ["MINITF_SHM"]
        else:
            os.environ["MINITF_SHM"] = previous


def _time_recv_tensor(tf, np, elements, steps):
    cluster = {"ps": [free_address()], "worker": [free_address()]}
    ps = TaskProcess(cluster, "ps", 0)
    server = tf.train.Server(cluster, "worker", 0, config=tf.ConfigProto(device_count=ONE_CPU))
    try:
        graph = tf.Graph()
        with graph.as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(tf.ones([elements]), name="v")
            with tf.device("/job:worker/task:0"):
                first = tf.slice(v, [elements - 1], [1], name="last")
        with tf.Session(server.target, graph=graph) as sess:
            sess.run(v.initializer)
            parts = sess.partition_graphs(first)
            recvs = [op for op in parts["/job:worker/replica:0/task:0/device:CPU:0"]
                     .get_operations() if op.type == "_Recv"]
            assert len(recvs) == 1 and recvs[0].get_attr("send_device").startswith("/job:ps")
            assert sess.run(first)[0] == 1.0
            best, median = best_of_steps(lambda: sess.run(first), steps,
                                         warmup=1 if elements > (64 << 18) else 3)
            recv = best_recv_seconds(tf, sess, first, runs=min(steps, 3))
    finally:
        server.stop()
        ps.stop()
    return best, median, recv


def time_bare_grpc(nbytes, steps):
    """Best seconds of one bare grpcio call answering ``nbytes`` from another process."""
    import grpc

    server = ServingProcess([sys.executable, "-c", BARE_SERVER, str(nbytes)], "bare gRPC server")
    channel = grpc.insecure_channel(server.target, options=BARE_OPTIONS)
    try:
        get = channel.unary_unary("/Bare/Get")
        assert len(get(b"")) == nbytes
        best, _ = best_of_steps(lambda: get(b""), steps, warmup=1)
    finally:
        channel.close()
        server.stop()
    return best


def best_recv_seconds(tf, sess, fetch, runs):
    """The best duration of the ``_Recv`` op (its RecvTensor) in a few traced steps."""
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    best = float("inf")
    for _ in range(runs):
        metadata = tf.RunMetadata()
        sess.run(fetch, options=options, run_metadata=metadata)
        for dev in metadata.step_stats.dev_stats:
            for node in dev.node_stats:
                if node.op_type == "_Recv":
                    best = min(best, node.all_end_rel_micros * 1e-6)
    return best


def measure_bandwidth(tf, np, args):
    from minitf.distributed.shared_memory import enabled as shared_memory_enabled

    paths = [("gRPC bytes", False)] + ([("shared memory", True)]
                                       if shared_memory_enabled() else [])
    small = {name: time_recv_tensor(tf, np, SMALL_ELEMENTS, args.steps, shm)[0]
             for name, shm in paths}
    rows, grpc_verdicts, shm_verdicts = [], [], []
    for mib in args.sizes:
        elements = mib * (1 << 20) // 4
        nbytes = elements * 4
        steps = args.steps if mib <= 256 else max(2, args.steps // 3)
        memcpy_before = memcpy_seconds(np, elements, steps)
        results = {}
        for name, shm in paths:
            try:
                results[name] = time_recv_tensor(tf, np, elements, steps, shm)
            except Exception as error:  # pylint: disable=broad-except
                print("RecvTensor of %d MiB (%s) FAILED: %s: %s"
                      % (mib, name, type(error).__name__, error))
        bare = time_bare_grpc(nbytes, steps)
        memcpy = min(memcpy_before, memcpy_seconds(np, elements, steps))
        memcpy_gbps = nbytes / memcpy / 1e9
        bare_gbps = nbytes / bare / 1e9
        rows.append(("np.copyto %d MiB, in-process" % mib, "%.1f" % (memcpy * 1e3), "", "",
                     "%.2f" % memcpy_gbps, "1.00x"))
        rows.append(("bare grpcio call, %d MiB reply" % mib, "%.1f" % (bare * 1e3), "", "",
                     "%.2f" % bare_gbps, "%.2fx" % (bare_gbps / memcpy_gbps)))
        for name, _ in paths:
            if name not in results:
                (shm_verdicts if name == "shared memory" else grpc_verdicts).append(
                    "%d MiB: failed" % mib)
                continue
            big, median, recv = results[name]
            transfer = max(big - small[name], 1e-9)
            gbps = nbytes / transfer / 1e9
            rows.append(("RecvTensor %d MiB, ps -> worker, %s" % (mib, name),
                         "%.1f (median %.1f)" % (big * 1e3, median * 1e3),
                         "%.1f" % (transfer * 1e3), "%.1f" % (recv * 1e3), "%.2f" % gbps,
                         "%.2fx" % (gbps / memcpy_gbps)))
            if name == "shared memory":
                shm_verdicts.append("%d MiB: %.0f%% of memcpy, %s" % (
                    mib, 100 * gbps / memcpy_gbps,
                    "met" if gbps >= SHARED_MEMORY_GOAL * memcpy_gbps else "MISSED"))
            else:
                grpc_verdicts.append("%d MiB: %.2f GB/s, %s (bare grpcio: %.2f)" % (
                    mib, gbps, "met" if gbps >= GRPC_GOAL_GBPS else "MISSED", bare_gbps))
    print("(b) RecvTensor between two tasks in two processes (a %d-float step: %s)"
          % (SMALL_ELEMENTS, ", ".join("%.2f ms (%s)" % (small[name] * 1e3, name)
                                        for name, _ in paths)))
    print_table(("", "step ms", "transfer ms", "_Recv ms", "GB/s", "vs memcpy"), rows)
    print("goal: >= %.0f GB/s over loopback gRPC (MINITF_SHM=0): %s"
          % (GRPC_GOAL_GBPS, "; ".join(grpc_verdicts)))
    print("goal: >= %.0f%% of memcpy on the same-host shared-memory path: %s"
          % (SHARED_MEMORY_GOAL * 100, "; ".join(shm_verdicts) if shm_verdicts
             else "not applicable (MINITF_SHM=0 or no /dev/shm)"))


def main(argv=None):
    args = parse_args(argv)
    openblas = handle_openblas_coretype(args.keep_openblas_coretype)
    from bench_distributed_training import set_blas_threads  # see its docstring
    set_blas_threads(args.blas_threads)
    # gRPC's informational logs (a closed connection's GOAWAY) would fill the table.
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    import numpy as np  # only now: OPENBLAS_CORETYPE is read when NumPy loads OpenBLAS
    import grpc

    import minitf as tf

    print("minitf %s, NumPy %s, grpcio %s, Python %s, %s %s, %d CPUs" % (
        tf.__version__, np.__version__, grpc.__version__, platform.python_version(),
        platform.system(), platform.machine(), os.cpu_count()))
    print("OPENBLAS_CORETYPE: %s\n" % ("unset" if openblas is None else "%s (%s)" % (
        openblas, "kept" if args.keep_openblas_coretype else "removed")))
    if not args.skip_overhead:
        measure_overhead(tf, np, args)
    if not args.skip_bandwidth:
        measure_bandwidth(tf, np, args)
    if not args.skip_training:
        # Imported here: it imports this module's process helpers.
        from bench_distributed_training import measure_training
        print()
        measure_training(tf, np, argparse.Namespace(
            workers=args.training_workers, seconds=args.training_seconds, batch_size=128,
            blas_threads=args.blas_threads))
    return 0


if __name__ == "__main__":
    sys.exit(main())
