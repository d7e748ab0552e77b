"""How fast is the OpenCL GPU backend?  Four measurements on ``/gpu:0``:

(a) **elementwise bandwidth**: a chain of ``Add`` ops on float32 vectors held in
    device memory, in GB/s (3 x 4 bytes moved per element), against the same
    number of launches of a bare pyopencl add kernel (one element per work
    item).  Target: >= 80 % of the bare kernel.  A bare float4 kernel (four
    elements per work item, as minitf's own) is printed too: it is the
    ceiling for this device.
(b) **matmul**: ``tf.matmul`` of 1024^2 and 2048^2 float32 variables, in
    GFLOP/s, against NumPy's ``a @ b`` on the same machine.  Target on PoCL:
    >= 20 GFLOP/s at 1024^2.
(c) **per-op cost**: a step of 200 tiny dependent ops divided by 200 — what
    one op costs the host (Python, allocation, enqueue) — next to a bare
    pyopencl enqueue, and the **launch latency** of a one-op step that waits
    for its result, next to a bare launch-and-wait.
(d) **MLP training**: steps/s of a 784-256-10 MLP with plain SGD, batch 128,
    every op on ``/gpu:0`` (without and with ``global_jit_level=ON_1``)
    versus on ``/cpu:0``.
(e) **fusion**: the chain of (a) with ``global_jit_level=ON_1`` (one generated
    kernel, see ``docs/concepts/fusion.rst``) against the same step unfused.
    Target on PoCL: >= 5x (``--only-fusion`` runs this case alone).
(f) **compiled step and GEMM** (``--only-compiled`` runs these alone): matmul
    1024^2 against NumPy (target on PoCL >= 0.5x), the per-op cost of (c)
    with the compiled step and with ``MINITF_OPENCL_COMPILED_STEP=0``, and
    a 784-512-512-10 MLP's training steps/s on ``/gpu:0`` against
    ``/cpu:0`` (target on PoCL >= 0.8x).  See
    ``docs/concepts/opencl_performance.rst``.

Timing: each case is warmed up (the first run compiles the OpenCL programs
and the step), then the best of ``--repeat`` runs is reported.  A step ends
by fetching one element of its last result, which waits for the device.

Run it from the repository root, on a machine at rest::

    .venv/bin/python benchmarks/bench_opencl.py

It exits 0 even when a target is missed (this is a measurement, not a test),
and prints why it cannot run when no OpenCL device is available.
``--json PATH`` also writes the printed numbers to PATH, for
``benchmarks/compare_gpu_goals.py`` (which sets them next to PyTorch's).
"""

import argparse
import json
import os
import sys
import time

import numpy as np

BANDWIDTH_TARGET = 0.80
MATMUL_NUMPY_TARGET = 0.5
MLP_GPU_CPU_TARGET = 0.8
FUSION_TARGET = 5.0
MATMUL_TARGET_GFLOPS = 20.0


def best_time(fn, repeat):
    return best_times([fn], repeat)[0]


def best_times(fns, repeat):
    """The best time of each of ``fns``, timed in turns so that a busy moment of
    the machine does not favour one of them."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, spent in zip(fns, times):
            start = time.perf_counter()
            fn()
            spent.append(time.perf_counter() - start)
    return [min(spent) for spent in times]


def bench_bandwidth(tf, device, n, chain, repeat):
    import pyopencl as cl
    graph = tf.Graph()
    with graph.as_default(), tf.device("/gpu:0"):
        a = tf.Variable(np.ones(n, np.float32))
        b = tf.Variable(np.ones(n, np.float32))
        c = a + b
        for _ in range(chain - 1):
            c = c + b
        last = c[:1]
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph)
    sess.run(init)
    target = device.target
    program = cl.Program(target.context, """
        __kernel void add(__global float *z, __global const float *x, __global const float *y,
                          const int n) {
            const int i = get_global_id(0);
            if (i < n) z[i] = x[i] + y[i];
        }
        __kernel void add4(__global float4 *z, __global const float4 *x,
                           __global const float4 *y) {
            const int i = get_global_id(0);
            z[i] = x[i] + y[i];
        }""").build()
    a_buf, b_buf, c_buf, d_buf = [cl.Buffer(target.context, cl.mem_flags.READ_WRITE, 4 * n)
                                  for _ in range(4)]
    for buffer in (a_buf, b_buf, c_buf, d_buf):
        # Written once, as the variables are: a buffer never written may be
        # backed by the shared zero page on a CPU device, and reading it would
        # come from cache and flatter the bare kernels.
        cl.enqueue_fill_buffer(target.queue, buffer, np.float32(1), 0, 4 * n)

    def bare(kernel, items, *extra):
        """The same data flow as the graph: c = a + b, then c = c + b, ping-ponging."""
        def launches():
            kernel(target.queue, (items,), None, c_buf, a_buf, b_buf, *extra)
            source, result = c_buf, d_buf
            for _ in range(chain - 1):
                kernel(target.queue, (items,), None, result, source, b_buf, *extra)
                source, result = result, source
            target.queue.finish()
        return launches
    minitf_s, bare_s, bare4_s = best_times(
        [lambda: sess.run(last), bare(program.add, n, np.int32(n)), bare(program.add4, n // 4)],
        repeat)
    sess.close()
    moved = 3 * 4 * n * chain
    return moved / minitf_s / 1e9, moved / bare_s / 1e9, moved / bare4_s / 1e9


def bench_fusion(tf, n, chain, repeat):
    """Seconds per step of the add chain of (a), ``(fused, unfused)``."""
    graph = tf.Graph()
    with graph.as_default(), tf.device("/gpu:0"):
        a = tf.Variable(np.ones(n, np.float32))
        b = tf.Variable(np.ones(n, np.float32))
        c = a + b
        for _ in range(chain - 1):
            c = c + b
        last = c[:1]
        init = tf.global_variables_initializer()
    sessions = []
    for level in (tf.OptimizerOptions.ON_1, tf.OptimizerOptions.OFF):
        jit = tf.OptimizerOptions(global_jit_level=level)
        sess = tf.Session(graph=graph, config=tf.ConfigProto(
            graph_options=tf.GraphOptions(optimizer_options=jit)))
        sess.run(init)
        sessions.append(sess)
    times = best_times([lambda: sessions[0].run(last), lambda: sessions[1].run(last)], repeat)
    for sess in sessions:
        sess.close()
    return times


def bench_matmul(tf, n, chain, repeat):
    rng = np.random.RandomState(0)
    a = rng.rand(n, n).astype(np.float32)
    b = rng.rand(n, n).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default(), tf.device("/gpu:0"):
        va, vb = tf.Variable(a), tf.Variable(b)
        products = [tf.matmul(va, vb) for _ in range(chain)]
        last = tf.add_n([p[:1, :1] for p in products])
        init = tf.global_variables_initializer()
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        gpu_s, numpy_s = best_times([lambda: sess.run(last),
                                     lambda: [a @ b for _ in range(chain)]], repeat)
    flops = 2.0 * n ** 3 * chain
    return flops / gpu_s / 1e9, flops / numpy_s / 1e9


def bench_op_cost(tf, device, ops, repeat):
    import pyopencl as cl
    graph = tf.Graph()
    with graph.as_default(), tf.device("/gpu:0"):
        x = tf.Variable(np.ones(16, np.float32))
        y = x
        for _ in range(ops):
            y = y + 1.0
        chain_end = y[:1]
        single = (x + 1.0)[:1]
        init = tf.global_variables_initializer()
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        chain_s = best_time(lambda: sess.run(chain_end), repeat)
        single_s = best_time(lambda: sess.run(single), repeat)
    target = device.target
    kernel = cl.Program(target.context, "__kernel void k(__global float *z) { z[0] += 1; }"
                        ).build().k
    buffer = cl.Buffer(target.context, cl.mem_flags.READ_WRITE, 64)
    kernel(target.queue, (1,), None, buffer)
    target.queue.finish()
    start = time.perf_counter()
    for _ in range(1000):
        kernel(target.queue, (1,), None, buffer)
    enqueue_s = (time.perf_counter() - start) / 1000
    target.queue.finish()

    def launch_and_wait():
        kernel(target.queue, (1,), None, buffer).wait()
    wait_s = best_time(lambda: [launch_and_wait() for _ in range(100)], repeat) / 100
    return chain_s / ops, enqueue_s, single_s, wait_s


def mlp_training_step(tf, device_name, hidden, jit=False):
    """``(session, step)``: ``step()`` runs one SGD step of a 784-...-10 MLP on ``device_name``
    (``jit``: in a session with ``global_jit_level=ON_1``, its elementwise ops fused)."""
    rng = np.random.RandomState(0)
    images = rng.rand(128, 784).astype(np.float32)
    labels = rng.randint(0, 10, 128).astype(np.int64)
    graph = tf.Graph()
    with graph.as_default(), tf.device(device_name):
        x = tf.placeholder(tf.float32, [None, 784])
        y = tf.placeholder(tf.int64, [None])
        logits = x
        for fan_in, fan_out in zip((784,) + tuple(hidden), tuple(hidden) + (10,)):
            w = tf.Variable((rng.randn(fan_in, fan_out) * 0.05).astype(np.float32))
            b = tf.Variable(tf.zeros([fan_out]))
            logits = tf.matmul(tf.nn.relu(logits) if fan_in != 784 else logits, w) + b
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        init = tf.global_variables_initializer()
    config = tf.ConfigProto(graph_options=tf.GraphOptions(optimizer_options=tf.OptimizerOptions(
        global_jit_level=tf.OptimizerOptions.ON_1))) if jit else None
    sess = tf.Session(graph=graph, config=config)
    sess.run(init)
    feed = {x: images, y: labels}
    return sess, lambda: sess.run([loss, train], feed)


def bench_mlp(tf, device_names, steps, repeat, hidden=(256,), jit=False):
    """Training steps/s of the MLP on each of ``device_names``, one device after the other.

    Not in turns as the other cases: OpenBLAS's threads keep spinning for a
    while after a matrix product, and would slow the PoCL step that follows.
    """
    rates = []
    for name in device_names:
        sess, step = mlp_training_step(tf, name, hidden, jit)
        with sess:
            rates.append(steps / best_time(lambda: [step() for _ in range(steps)], repeat))
    return rates


def report_compiled(tf, device, args, results):
    """Case (f): the GEMM against NumPy, the compiled step's per-op cost, the big MLP."""
    gflops, numpy_gflops = bench_matmul(tf, 1024, 3, args.repeat)
    ratio = gflops / numpy_gflops
    print("(f) matmul 1024^2: %.1f GFLOP/s, NumPy %.1f -> %.2fx, target >= %.1fx: %s"
          % (gflops, numpy_gflops, ratio, MATMUL_NUMPY_TARGET,
             "met" if ratio >= MATMUL_NUMPY_TARGET else "MISSED"))
    per_op, enqueue, single, wait = bench_op_cost(tf, device, args.ops, args.repeat)
    os.environ["MINITF_OPENCL_COMPILED_STEP"] = "0"
    try:
        generated, _, generated_single, _ = bench_op_cost(tf, device, args.ops, args.repeat)
    finally:
        del os.environ["MINITF_OPENCL_COMPILED_STEP"]
    print("    per op in a step of %d ops: compiled %.1f us, generated %.1f us, "
          "bare pyopencl enqueue %.1f us" % (args.ops, per_op * 1e6, generated * 1e6,
                                              enqueue * 1e6))
    print("    one-op step with its fetch: compiled %.1f us, generated %.1f us, "
          "bare launch-and-wait %.1f us" % (single * 1e6, generated_single * 1e6, wait * 1e6))
    gpu, cpu = bench_mlp(tf, ["/gpu:0", "/cpu:0"], args.steps, args.repeat, hidden=(512, 512))
    print("    MLP 784-512-512-10, batch 128, SGD: /gpu:0 %.1f steps/s, /cpu:0 %.1f -> %.2fx, "
          "target >= %.1fx: %s" % (gpu, cpu, gpu / cpu, MLP_GPU_CPU_TARGET,
                                   "met" if gpu >= MLP_GPU_CPU_TARGET * cpu else "MISSED"))
    results.update({
        "matmul_1024_gflops": gflops, "matmul_1024_numpy_gflops": numpy_gflops,
        "op_chain_ops": args.ops, "per_op_us": per_op * 1e6, "bare_enqueue_us": enqueue * 1e6,
        "per_op_generated_us": generated * 1e6, "one_op_step_us": single * 1e6,
        "one_op_step_generated_us": generated_single * 1e6, "bare_launch_wait_us": wait * 1e6,
        "mlp_784_512_512_10_gpu_steps_s": gpu, "mlp_784_512_512_10_cpu_steps_s": cpu})


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1 << 22, help="elements per vector in (a)")
    parser.add_argument("--chain", type=int, default=20, help="adds per step in (a)")
    parser.add_argument("--repeat", type=int, default=5, help="timed repeats (best is kept)")
    parser.add_argument("--ops", type=int, default=200, help="ops per step in (c)")
    parser.add_argument("--steps", type=int, default=20, help="training steps per repeat in (d)")
    parser.add_argument("--skip-2048", action="store_true", help="time matmul at 1024^2 only")
    parser.add_argument("--only-fusion", action="store_true", help="run case (e) alone")
    parser.add_argument("--only-compiled", action="store_true", help="run case (f) alone")
    parser.add_argument("--json", metavar="PATH", help="also write the numbers to PATH as JSON")
    return parser.parse_args(argv)


def write_json(path, results):
    """Write ``results`` to ``path`` (through a temporary file, so a reader never sees half)."""
    temporary = path + ".tmp"
    with open(temporary, "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    os.replace(temporary, path)


def main(argv=None):
    args = parse_args(argv)
    import minitf as tf
    from minitf.registry import get_registry
    registry = get_registry()
    factory = registry.device_factory("GPU")
    if factory is None:
        reason = registry.unavailable_devices().get("GPU", ("", "no GPU plugin"))[1]
        print("No OpenCL device: %s" % reason)
        return 0
    device = factory.create(0)
    print("device: %s" % factory.describe(0))
    results = {"device": factory.describe(0)}
    if args.only_fusion or args.only_compiled:
        if args.only_fusion:
            report_fusion(tf, args, results)
        else:
            report_compiled(tf, device, args, results)
        if args.json:
            write_json(args.json, results)
        return 0
    gbs, bare_gbs, bare4_gbs = bench_bandwidth(tf, device, args.size, args.chain, args.repeat)
    print("(a) elementwise add, %d floats: %.1f GB/s  (bare pyopencl kernel %.1f GB/s) "
          "-> %.0f %% of bare, target >= %.0f %%: %s"
          % (args.size, gbs, bare_gbs, 100 * gbs / bare_gbs, 100 * BANDWIDTH_TARGET,
             "met" if gbs >= BANDWIDTH_TARGET * bare_gbs else "MISSED"))
    print("    bare float4 kernel %.1f GB/s -> minitf at %.0f %% of it"
          % (bare4_gbs, 100 * gbs / bare4_gbs))
    results.update({"add_size": args.size, "add_chain": args.chain, "add_gbs": gbs,
                    "add_bare_gbs": bare_gbs, "add_bare4_gbs": bare4_gbs})
    for n in (1024,) if args.skip_2048 else (1024, 2048):
        gflops, numpy_gflops = bench_matmul(tf, n, 3 if n == 1024 else 1, args.repeat)
        verdict = ("target >= %.0f: %s" % (MATMUL_TARGET_GFLOPS, "met" if gflops >=
                                            MATMUL_TARGET_GFLOPS else "MISSED")
                   if n == 1024 else "")
        print("(b) matmul %d^2: %.1f GFLOP/s  (NumPy %.1f GFLOP/s)  %s"
              % (n, gflops, numpy_gflops, verdict))
        results.update({"matmul_%d_gflops" % n: gflops, "matmul_%d_numpy_gflops" % n: numpy_gflops})
    per_op, enqueue, single, wait = bench_op_cost(tf, device, args.ops, args.repeat)
    print("(c) per-op cost in a step of %d ops: %.1f us  (bare pyopencl enqueue %.1f us)"
          % (args.ops, per_op * 1e6, enqueue * 1e6))
    print("    one-op step with its fetch: %.1f us  (bare launch-and-wait %.1f us)"
          % (single * 1e6, wait * 1e6))
    results.update({"op_chain_ops": args.ops, "per_op_us": per_op * 1e6,
                    "bare_enqueue_us": enqueue * 1e6, "one_op_step_us": single * 1e6,
                    "bare_launch_wait_us": wait * 1e6})
    gpu, cpu = bench_mlp(tf, ["/gpu:0", "/cpu:0"], args.steps, args.repeat)
    (gpu_jit,) = bench_mlp(tf, ["/gpu:0"], args.steps, args.repeat, jit=True)
    print("(d) MLP 784-256-10, batch 128, SGD: /gpu:0 %.1f steps/s (fused, jit ON_1: %.1f), "
          "/cpu:0 %.1f steps/s" % (gpu, gpu_jit, cpu))
    results.update({"mlp_784_256_10_gpu_steps_s": gpu, "mlp_784_256_10_cpu_steps_s": cpu,
                    "mlp_784_256_10_gpu_jit_steps_s": gpu_jit})
    report_fusion(tf, args, results)
    if args.json:
        write_json(args.json, results)
    return 0


def report_fusion(tf, args, results):
    fused, unfused = bench_fusion(tf, args.size, args.chain, args.repeat)
    ratio = unfused / fused
    print("(e) %d chained adds, %d floats: fused %.2f ms, unfused %.2f ms per step -> %.1fx, "
          "target >= %.0fx: %s" % (args.chain, args.size, fused * 1e3, unfused * 1e3, ratio,
                                   FUSION_TARGET, "met" if ratio >= FUSION_TARGET else "MISSED"))
    moved = 3 * 4 * args.size * args.chain
    results.update({"add_size": args.size, "add_chain": args.chain,
                    "fused_add_ms": fused * 1e3, "unfused_add_ms": unfused * 1e3,
                    "fused_add_gbs": moved / fused / 1e9, "unfused_add_gbs": moved / unfused / 1e9})


if __name__ == "__main__":
    sys.exit(main())
