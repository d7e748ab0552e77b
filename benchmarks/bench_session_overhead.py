"""How much does ``Session.run`` cost on top of the NumPy calls it makes?

Two measurements, each against a plain Python function making the same NumPy
calls on the same values:

(a) **run overhead**: a one-op graph — two fed float32 placeholders, one
    ``Add`` fetched — against ``np.add(a, b)`` of the same values in a plain
    function, once for each kind of value users feed: 0-d and n-d arrays (of
    the placeholder's dtype and of another), Python floats and ints, NumPy
    scalars, nested lists.  Target: for every kind, a run costs at most 4x the
    plain function's call.  float64 arrays fed to the float32 placeholders
    are timed against two plain functions: ``np.add`` of the float64 values
    (a float64 sum, no conversion) and the same NumPy calls as the session
    makes (each value cast to float32 with ``astype``, then ``np.add``): the
    first ratio includes the casts' own cost, the second is the run's
    overhead on top of the same work.
(b) **per-op cost**: a chain of small elementwise ops (200 by default, cycling
    through add, multiply, subtract, divide — whichever exist) on a fed
    ``float32[16]`` placeholder, against the same NumPy calls in a plain
    function.  Target: per op, at most 1.5x NumPy's per-call cost.  The same
    chain is then timed with one op type at a time, to show which kernels
    cost more than their NumPy call (``--no-breakdown`` skips this).

Timing is timeit-style: a warm-up (which also builds and caches the session's
compiled step), then the best of ``--repeat`` repeats of a loop whose length
is calibrated to last about ``--min-time`` seconds.  The best repeat is the
least disturbed by the rest of the machine, and the minitf and NumPy loops
take turns, so that a busy moment slows both.

Run it from the repository root::

    .venv/bin/python benchmarks/bench_session_overhead.py
    .venv/bin/python benchmarks/bench_session_overhead.py --chain 400 --repeat 9

The exit status is 0 even when a target is missed (this is a measurement, not
a test); the table says which targets were met.
"""

import argparse
import os
import platform
import sys
import timeit

RUN_OVERHEAD_TARGET = 4.0
PER_OP_TARGET = 1.5


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chain", type=int, default=200,
                        help="number of elementwise ops in benchmark (b) (default: 200)")
    parser.add_argument("--size", type=int, default=16,
                        help="elements of the placeholder in benchmark (b) (default: 16)")
    parser.add_argument("--repeat", type=int, default=7,
                        help="timed repeats; the best is reported (default: 7)")
    parser.add_argument("--min-time", type=float, default=0.2,
                        help="seconds each repeat should last at least (default: 0.2)")
    parser.add_argument("--no-breakdown", action="store_true",
                        help="skip timing the chain once per op type")
    parser.add_argument("--keep-openblas-coretype", action="store_true",
                        help="do not remove OPENBLAS_CORETYPE from the environment")
    return parser.parse_args(argv)


def handle_openblas_coretype(keep):
    """Warns about OPENBLAS_CORETYPE, and removes it unless asked not to.

    Some machines preset ``OPENBLAS_CORETYPE`` (e.g. ``Haswell``), which
    forces OpenBLAS's kernel choice instead of detecting the CPU.  It must be
    removed before NumPy is imported to have any effect, which is why this
    script imports NumPy and minitf only after calling this function.  The ops
    measured here do not call BLAS, but numbers taken with and without it are
    not comparable in general: say which you used when you report them.
    """
    value = os.environ.get("OPENBLAS_CORETYPE")
    if value is None:
        return None
    if keep:
        print("warning: OPENBLAS_CORETYPE=%s is set and kept (--keep-openblas-coretype); "
              "OpenBLAS will not detect the CPU itself." % value, file=sys.stderr)
    else:
        os.environ.pop("OPENBLAS_CORETYPE")
        print("warning: OPENBLAS_CORETYPE=%s was set; removed it before importing NumPy so that "
              "OpenBLAS detects the CPU (pass --keep-openblas-coretype to keep it)." % value,
              file=sys.stderr)
    return value


def best_times_interleaved(fns, repeat, min_time):
    """Seconds per call of each of ``fns``: their calibrated loops take turns, and the
    best of ``repeat`` turns is kept for each, so that a busy moment of a shared
    machine slows all of them rather than one (the ratios stay comparable)."""
    timers, numbers = [], []
    for fn in fns:
        for _ in range(20):
            fn()
        timer = timeit.Timer(fn)
        number = 1
        while timer.timeit(number) < min_time / 5:
            number *= 2
        timers.append(timer)
        numbers.append(max(1, int(number * (min_time / max(timer.timeit(number), 1e-9)))))
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, (timer, number) in enumerate(zip(timers, numbers)):
            best[i] = min(best[i], timer.timeit(number) / number)
    return best


def chain_ops(tf):
    """The (name, minitf fn, numpy fn) cycle used by benchmark (b): ops that exist."""
    import numpy as np
    candidates = [("add", "add", np.add), ("multiply", "multiply", np.multiply),
                  ("subtract", "subtract", np.subtract), ("divide", "divide", np.divide)]
    ops = [(name, getattr(tf, attr), fn) for name, attr, fn in candidates if hasattr(tf, attr)]
    return ops


def feed_kinds(np):
    """(name, value of x, value of y, shape, plain function or None) for each kind
    of value users feed; None: ``np.add``."""
    pair = [[1.5, 2.5, 3.5, 4.5], [5.5, 6.5, 7.5, 8.5]]
    def cast_then_add(x, y):  # the NumPy calls the session makes for float64 feeds
        return np.add(x.astype(np.float32), y.astype(np.float32))

    return [
        ("0-d float32 arrays", np.asarray(1.5, np.float32), np.asarray(2.5, np.float32), [],
         None),
        ("Python floats", 1.5, 2.5, [], None),
        ("Python ints", 1, 2, [], None),
        ("np.float32 scalars", np.float32(1.5), np.float32(2.5), [], None),
        ("np.float64 scalars", np.float64(1.5), np.float64(2.5), [], None),
        ("float32[2,4] arrays", np.asarray(pair, np.float32), np.asarray(pair, np.float32),
         [None, 4], None),
        ("float64[2,4] arrays", np.asarray(pair), np.asarray(pair), [None, 4], None),
        ("float64[2,4], plain casts too", np.asarray(pair), np.asarray(pair), [None, 4],
         cast_then_add),
        ("nested lists [2][4]", pair, pair, [None, 4], None),
    ]


def bench_run_overhead(tf, np, args, va, vb, shape, plain=None):
    """(a): one Add of two fed float32 placeholders of ``shape``, vs ``plain``
    (default ``np.add``) of the same fed values (NumPy converts them too)."""
    graph = tf.Graph()
    with graph.as_default():
        a = tf.placeholder(tf.float32, shape=shape, name="a")
        b = tf.placeholder(tf.float32, shape=shape, name="b")
        c = tf.add(a, b)
    plain = plain or np.add

    with tf.Session(graph=graph) as sess:
        feed = {a: va, b: vb}
        np.testing.assert_allclose(sess.run(c, feed), plain(va, vb))
        t_session, t_plain = best_times_interleaved(
            [lambda: sess.run(c, feed), lambda: plain(va, vb)], args.repeat, args.min_time)
    return t_session, t_plain


def bench_chain(tf, np, args, ops):
    """A chain of ``args.chain`` elementwise ops cycling through ``ops`` on a
    fed float32[size] placeholder, vs the same NumPy calls in a plain function.

    Returns:
        (session seconds per run, plain seconds per call, the chain's op types).
    """
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, shape=[args.size], name="x")
        y = x
        for i in range(args.chain):
            y = ops[i % len(ops)][1](y, x)
        op_types = sorted({op.type for op in graph.get_operations()} - {"Placeholder"})
    numpy_calls = [ops[i % len(ops)][2] for i in range(args.chain)]

    def plain(value):
        result = value
        for call in numpy_calls:
            result = call(result, value)
        return result

    # Values near 1 keep the chain (add, multiply, subtract, divide) bounded.
    vx = np.random.default_rng(0).uniform(0.9, 1.1, size=args.size).astype(np.float32)
    with tf.Session(graph=graph) as sess:
        feed = {x: vx}
        np.testing.assert_allclose(sess.run(y, feed), plain(vx), rtol=1e-4)
        t_session, t_plain = best_times_interleaved(
            [lambda: sess.run(y, feed), lambda: plain(vx)], args.repeat, args.min_time)
    return t_session, t_plain, op_types


def main(argv=None):
    args = parse_args(argv)
    openblas = handle_openblas_coretype(args.keep_openblas_coretype)
    import numpy as np  # only now: OPENBLAS_CORETYPE is read when NumPy loads OpenBLAS

    import minitf as tf

    print("minitf %s, NumPy %s, Python %s, %s %s" % (
        tf.__version__, np.__version__, platform.python_version(), platform.system(),
        platform.machine()))
    print("OPENBLAS_CORETYPE: %s" % ("unset" if openblas is None else
                                     "%s (%s)" % (openblas, "kept" if args.keep_openblas_coretype
                                                  else "removed")))
    print("best of %d repeats, each >= %.2f s\n" % (args.repeat, args.min_time))

    runs = [(kind,) + bench_run_overhead(tf, np, args, va, vb, shape, plain)
            for kind, va, vb, shape, plain in feed_kinds(np)]
    ops = chain_ops(tf)
    chain_s, chain_plain_s, op_types = bench_chain(tf, np, args, ops)
    per_op = chain_s / args.chain
    per_op_plain = chain_plain_s / args.chain
    op_ratio = per_op / per_op_plain

    rows = [("(a) run: 1 Add, fed %s" % kind, run_s * 1e6, run_plain_s * 1e6,
             run_s / run_plain_s, RUN_OVERHEAD_TARGET) for kind, run_s, run_plain_s in runs]
    rows += [
        ("(b) run: %d-op chain, float32[%d]" % (args.chain, args.size), chain_s * 1e6,
         chain_plain_s * 1e6, chain_s / chain_plain_s, None),
        ("(b) per op", per_op * 1e6, per_op_plain * 1e6, op_ratio, PER_OP_TARGET),
    ]
    if not args.no_breakdown:  # the same chain with one op type at a time
        for op in ops:
            one_s, one_plain_s, (op_type,) = bench_chain(tf, np, args, [op])
            rows.append(("    per op, %s only (%s)" % (op[0], op_type), one_s / args.chain * 1e6,
                         one_plain_s / args.chain * 1e6, one_s / one_plain_s, None))
    header = ("benchmark", "minitf us", "NumPy us", "ratio", "target", "")
    table = [header] + [
        (name, "%.2f" % ours, "%.2f" % plain, "%.2fx" % ratio,
         "<= %.1fx" % target if target else "",
         ("met" if ratio <= target else "MISSED") if target else "")
        for name, ours, plain, ratio, target in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.rjust(w) if 0 < i < 4 else cell.ljust(w)
                        for i, (cell, w) in enumerate(zip(row, widths))).rstrip())
    print("\n(a) 'plain casts too': the plain function casts the float64 values to float32 "
          "before np.add, as the session does.")
    print("(b) cycles through %s (op types %s).  'NumPy us' is a plain Python function "
          "making the same NumPy calls on the same values." % (
              ", ".join(op[0] for op in ops), ", ".join(op_types)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
