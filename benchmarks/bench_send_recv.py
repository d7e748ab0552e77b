"""How fast do tensors cross between device processes, and what does a partitioned step cost?

With ``ConfigProto(device_count={"CPU": 3})``, ``/cpu:1`` and ``/cpu:2`` are
separate OS processes; a tensor between them crosses as a ``_Send``/``_Recv``
pair, through a pooled shared-memory segment when it is larger than 1 MiB
(:mod:`minitf.runtime.worker.wire`).  Two measurements:

(a) **Send/Recv bandwidth**: one step that moves a 64 MiB float32 tensor
    (16M floats; ``--mib``) from one process to another, against an
    in-process ``np.copyto`` of the same size in the same run (the memcpy
    bandwidth of this machine; timed before and after the transfers, the
    better of the two is used).  Two ways in:

    * *resident*: a variable on ``/cpu:1`` read by a ``tf.slice`` of one
      element on ``/cpu:2`` — the whole variable crosses, the slice is free;
    * *fed*: a placeholder fed from the session's process, sliced on
      ``/cpu:1`` — the fed value crosses once, with ``RunGraph``.

    Every step also pays a fixed cost (thread start, the ``RunGraph`` and
    ``RecvTensor`` round trips), so the same graph is timed with a 16-float
    tensor; the *transfer* is the difference, and GB/s is reported both ways
    (whole step, and transfer only).  The ``_Recv`` column is the receiving
    op's own duration from ``RunOptions(trace_level=FULL_TRACE)`` step stats.
    Target: the transfer moves at least half the memcpy bandwidth (one copy
    into the segment, none on the receiving side).

(b) **per-run overhead**: a tiny graph (a fed scalar, ``+1`` on ``/cpu:1``,
    ``*2`` on ``/cpu:2``) run on two device processes, on two in-process
    devices (``device_processes=False``: partitions on threads), and on one
    device, in microseconds per ``Session.run``.

Timing: a warm-up (plans compiled, graphs registered in the processes,
shared-memory segments touched and pooled), then the best of N: for (a) the
best of ``--steps`` single steps, for (b) the best of ``--repeat`` calibrated
loops of at least ``--min-time`` seconds (timeit-style).  The best is the run
least disturbed by the rest of the machine.

Run it from the repository root::

    .venv/bin/python benchmarks/bench_send_recv.py
    .venv/bin/python benchmarks/bench_send_recv.py --mib 256 --steps 50

The exit status is 0 even when the target is missed (this is a measurement,
not a test).
"""

import argparse
import os
import platform
import statistics
import sys
import time
import timeit

BANDWIDTH_TARGET = 0.5  # transfer GB/s as a fraction of memcpy GB/s
SMALL_ELEMENTS = 16


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=64,
                        help="size of the transferred float32 tensor in MiB (default: 64)")
    parser.add_argument("--steps", type=int, default=30,
                        help="timed steps in (a); the best is reported (default: 30)")
    parser.add_argument("--repeat", type=int, default=7,
                        help="timed repeats in (b); the best is reported (default: 7)")
    parser.add_argument("--min-time", type=float, default=0.2,
                        help="seconds each repeat of (b) lasts at least (default: 0.2)")
    parser.add_argument("--keep-openblas-coretype", action="store_true",
                        help="do not remove OPENBLAS_CORETYPE from the environment")
    return parser.parse_args(argv)


def handle_openblas_coretype(keep):
    """Warns about OPENBLAS_CORETYPE, and removes it unless asked not to.

    It must go before NumPy is imported — and before the session starts its
    device processes, which inherit this process's environment — so this
    script imports NumPy and minitf only after calling this function.  The
    copies measured here do not call BLAS, but say which setting you used when
    you report numbers.
    """
    value = os.environ.get("OPENBLAS_CORETYPE")
    if value is None:
        return None
    if keep:
        print("warning: OPENBLAS_CORETYPE=%s is set and kept (--keep-openblas-coretype); "
              "OpenBLAS will not detect the CPU itself." % value, file=sys.stderr)
    else:
        os.environ.pop("OPENBLAS_CORETYPE")
        print("warning: OPENBLAS_CORETYPE=%s was set; removed it before importing NumPy and "
              "starting device processes (pass --keep-openblas-coretype to keep it)." % value,
              file=sys.stderr)
    return value


def best_of_steps(fn, steps, warmup=5):
    """``(best, median)`` seconds of ``steps`` single calls of ``fn`` after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def best_time_per_call(fn, repeat, min_time):
    """Seconds per call of ``fn()``: the best of ``repeat`` calibrated loops."""
    for _ in range(20):
        fn()
    timer = timeit.Timer(fn)
    number = 1
    while timer.timeit(number) < min_time / 5:
        number *= 2
    number = max(1, int(number * (min_time / max(timer.timeit(number), 1e-9))))
    return min(timer.repeat(repeat=repeat, number=number)) / number


# ---- (a) bandwidth ---------------------------------------------------------------------
def memcpy_seconds(np, elements, steps):
    source = np.random.default_rng(0).random(elements, dtype=np.float32)
    target = np.empty_like(source)
    best, _ = best_of_steps(lambda: np.copyto(target, source), steps)
    assert np.array_equal(source, target)
    return best


def _recv_seconds(tf, sess, fetch, feed, runs=5):
    """The best duration of the ``_Recv`` op in a few traced steps."""
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    best = float("inf")
    for _ in range(runs):
        metadata = tf.RunMetadata()
        sess.run(fetch, feed, options=options, run_metadata=metadata)
        for dev in metadata.step_stats.dev_stats:
            for node in dev.node_stats:
                if node.op_type == "_Recv":
                    best = min(best, node.all_end_rel_micros * 1e-6)
    return best


def time_resident(tf, np, elements, steps):
    """A variable on /cpu:1 read by a one-element slice on /cpu:2."""
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/cpu:1"):
            v = tf.Variable(tf.random_uniform([elements], seed=1), name="v")
        with tf.device("/cpu:2"):
            first = tf.slice(v, [0], [1], name="first")
        check = tf.identity(v)  # read back once, to check what crossed
    config = tf.ConfigProto(device_count={"CPU": 3})
    with tf.Session(graph=graph, config=config) as sess:
        sess.run(v.initializer)
        parts = sess.partition_graphs(first)
        assert [op.type for op in parts[_cpu(2)].get_operations()].count("_Recv") == 1
        assert sess.run(first)[0] == sess.run(check)[0]
        best, median = best_of_steps(lambda: sess.run(first), steps)
        recv = _recv_seconds(tf, sess, first, None)
    return best, median, recv


def time_fed(tf, np, elements, steps):
    """A placeholder fed from the session's process, sliced on /cpu:1."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [elements], name="x")
        with tf.device("/cpu:1"):
            first = tf.slice(x, [elements - 1], [1], name="last")
    value = np.random.default_rng(1).random(elements, dtype=np.float32)
    config = tf.ConfigProto(device_count={"CPU": 3})
    with tf.Session(graph=graph, config=config) as sess:
        parts = sess.partition_graphs(first, {x: value})
        assert list(parts) == [_cpu(1)], "only /cpu:1 runs: the feed crosses with RunGraph"
        assert sess.run(first, {x: value})[0] == value[-1]
        best, median = best_of_steps(lambda: sess.run(first, {x: value}), steps)
    return best, median, None


def _cpu(index):
    return "/job:localhost/replica:0/task:0/device:CPU:%d" % index


# ---- (b) per-run overhead --------------------------------------------------------------
def time_tiny_graph(tf, np, config, devices, args):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        with tf.device(devices[0]):
            a = tf.add(x, 1.0, name="a")
        with tf.device(devices[1]):
            b = tf.multiply(a, 2.0, name="b")
    value = np.float32(3.0)
    with tf.Session(graph=graph, config=config) as sess:
        used = sorted(sess.partition_graphs(b, {x: value}))
        assert sess.run(b, {x: value}) == 8.0
        seconds = best_time_per_call(lambda: sess.run(b, {x: value}), args.repeat, args.min_time)
    return seconds, used


def _print_table(header, rows, right_from=1):
    table = [header] + rows
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.rjust(w) if i >= right_from else cell.ljust(w)
                        for i, (cell, w) in enumerate(zip(row, widths))).rstrip())


def main(argv=None):
    args = parse_args(argv)
    openblas = handle_openblas_coretype(args.keep_openblas_coretype)
    import numpy as np  # only now: OPENBLAS_CORETYPE is read when NumPy loads OpenBLAS

    import minitf as tf
    from minitf.runtime.worker import wire

    print("minitf %s, NumPy %s, Python %s, %s %s, %d CPUs" % (
        tf.__version__, np.__version__, platform.python_version(), platform.system(),
        platform.machine(), os.cpu_count()))
    print("OPENBLAS_CORETYPE: %s" % ("unset" if openblas is None else
                                     "%s (%s)" % (openblas, "kept" if args.keep_openblas_coretype
                                                  else "removed")))
    print("shared memory: %s; tensors over %d KiB cross through it\n" % (
        "yes (/dev/shm)" if wire.shared_memory_available() else "NO (all through the socket)",
        wire.INLINE_LIMIT // 1024))

    elements = args.mib * (1 << 20) // 4
    nbytes = elements * 4
    memcpy_before = memcpy_seconds(np, elements, args.steps)
    measured = []
    for name, timer in (("resident: /cpu:1 -> /cpu:2", time_resident),
                        ("fed: session -> /cpu:1", time_fed)):
        big, big_median, recv = timer(tf, np, elements, args.steps)
        small, _, _ = timer(tf, np, SMALL_ELEMENTS, args.steps)
        measured.append((name, big, big_median, recv, small))
    # memcpy before and after the transfers, best of both: a busy machine slows either
    memcpy = min(memcpy_before, memcpy_seconds(np, elements, args.steps))
    rows = [("np.copyto, in-process", "%.2f" % (memcpy * 1e3), "", "", "",
             "%.2f" % (nbytes / memcpy / 1e9), "", "1.00x")]
    missed = []
    for name, big, big_median, recv, small in measured:
        transfer = max(big - small, 1e-9)
        ratio = (nbytes / transfer) / (nbytes / memcpy)
        if ratio < BANDWIDTH_TARGET:
            missed.append(name)
        rows.append((name, "%.2f (median %.2f)" % (big * 1e3, big_median * 1e3),
                     "%.2f" % (small * 1e3), "%.2f" % (transfer * 1e3),
                     "" if recv is None else "%.2f" % (recv * 1e3),
                     "%.2f" % (nbytes / big / 1e9), "%.2f" % (nbytes / transfer / 1e9),
                     "%.2fx" % ratio))
    print("(a) moving a %d MiB float32 tensor between processes (best of %d steps)" % (
        args.mib, args.steps))
    _print_table(("", "step ms", "16-float step ms", "transfer ms", "_Recv ms",
                  "GB/s step", "GB/s transfer", "vs memcpy"), rows)
    print("target: transfer >= %.0f%% of memcpy bandwidth: %s\n" % (
        BANDWIDTH_TARGET * 100, "MISSED (%s)" % ", ".join(missed) if missed else "met"))

    one, _ = time_tiny_graph(tf, np, tf.ConfigProto(device_count={"CPU": 1}), (None, None), args)
    threads, used_threads = time_tiny_graph(
        tf, np, tf.ConfigProto(device_count={"CPU": 3}, device_processes=False),
        ("/cpu:1", "/cpu:2"), args)
    processes, used_processes = time_tiny_graph(
        tf, np, tf.ConfigProto(device_count={"CPU": 3}), ("/cpu:1", "/cpu:2"), args)
    assert used_threads == used_processes == [_cpu(1), _cpu(2)]
    print("(b) per-run cost of a tiny graph (fed scalar, +1, *2; best of %d repeats)" % args.repeat)
    _print_table(("", "us per run", "vs one device"), [
        ("one device, in-process", "%.1f" % (one * 1e6), "1.00x"),
        ("/cpu:1 + /cpu:2 in-process (threads)", "%.1f" % (threads * 1e6),
         "%.2fx" % (threads / one)),
        ("/cpu:1 + /cpu:2 in two processes", "%.1f" % (processes * 1e6),
         "%.2fx" % (processes / one)),
    ])
    return 0


if __name__ == "__main__":
    sys.exit(main())
