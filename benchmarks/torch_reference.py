"""PyTorch's numbers for the GPU goals that ``bench_opencl.py`` measures minitf against.

The OpenCL backend's goals on a real GPU are ratios to PyTorch on the same card,
measured in the same run (``benchmarks/gpu_device_check.sh`` runs both scripts
and ``benchmarks/compare_gpu_goals.py`` divides).  This script times the same
cases, with the same sizes, as ``bench_opencl.py``:

(a) **elementwise bandwidth**: 20 chained ``c = c + b`` on float32 vectors of
    4 Mi elements, eager, in GB/s counting 3 x 4 bytes per element per add.
(b) **matmul**: ``a @ b`` of 1024^2 (three products per step) and 2048^2 (one)
    float32 matrices in GFLOP/s, with TF32 off
    (``torch.backends.cuda.matmul.allow_tf32 = False``, cuDNN's too): minitf
    computes in full float32, so TF32 would compare different arithmetic.
(c) **per-op cost**: a chain of 200 dependent ``y = y + 1.0`` on 16 floats,
    ending with ``y[:1].cpu()``, divided by 200 (what one op costs the host), and
    a one-op step ``(x + 1.0)[:1].cpu()`` (launch latency with the fetch).
(d) **MLP training**: steps/s of 784-256-10 and 784-512-512-10 MLPs, plain SGD
    (``torch.optim.SGD``, lr 0.1), batch 128, sparse softmax cross-entropy.
    As minitf's ``sess.run([loss, train], feed)``, each step copies the batch
    from host memory and fetches the loss (``.item()``).

Timing is bench_opencl's: every case runs once to warm up (CUDA context,
cuBLAS handles, the caching allocator), then the best of ``--repeat`` timed
runs is kept; each run ends with ``torch.cuda.synchronize()`` (or a fetch),
so it includes the device's work.

Run it from the repository root; it needs PyTorch, which minitf does not
depend on (the GPU machine has it)::

    python3 benchmarks/torch_reference.py --json torch.json
    python3 benchmarks/torch_reference.py --device cpu --size 65536 --skip-2048

``--device`` defaults to ``cuda`` when CUDA is available, else ``cpu``.
"""

import argparse
import json
import os
import sys
import time

import numpy as np

MLP_SHAPES = ((256,), (512, 512))


def best_times(fns, repeat):
    """The best time of each of ``fns`` after one warm-up call, timed in turns
    (as bench_opencl.py does) so that a busy moment does not favour one."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, spent in zip(fns, times):
            start = time.perf_counter()
            fn()
            spent.append(time.perf_counter() - start)
    return [min(spent) for spent in times]


def add_chain_gbs(n, chain, seconds):
    """GB/s of ``chain`` adds of ``n`` float32: each reads two vectors and writes one."""
    return 3 * 4 * n * chain / seconds / 1e9


def matmul_gflops(n, products, seconds):
    """GFLOP/s of ``products`` n x n by n x n products (2 n^3 flops each)."""
    return 2.0 * n ** 3 * products / seconds / 1e9


def mlp_layer_sizes(hidden):
    """``[(fan_in, fan_out), ...]`` of a 784-...-10 MLP, e.g. (256,) -> [(784, 256), (256, 10)]."""
    sizes = (784,) + tuple(hidden) + (10,)
    return list(zip(sizes[:-1], sizes[1:]))


def mlp_name(hidden):
    """The results key of an MLP: (512, 512) -> ``mlp_784_512_512_10``."""
    return "mlp_" + "_".join(str(size) for size in (784,) + tuple(hidden) + (10,))


def bench_add_chain(torch, device, sync, n, chain, repeat):
    a = torch.ones(n, dtype=torch.float32, device=device)
    b = torch.ones(n, dtype=torch.float32, device=device)

    def step():
        c = a + b
        for _ in range(chain - 1):
            c = c + b
        sync()
    return best_times([step], repeat)[0]


def bench_matmul(torch, device, sync, n, products, repeat):
    generator = torch.Generator().manual_seed(0)
    a = torch.rand(n, n, generator=generator).to(device)
    b = torch.rand(n, n, generator=generator).to(device)

    def step():
        for _ in range(products):
            a @ b
        sync()
    return best_times([step], repeat)[0]


def bench_op_cost(torch, device, ops, repeat):
    """``(seconds per op in a chain of ops, seconds of a one-op step)``; both end with a fetch."""
    x = torch.ones(16, dtype=torch.float32, device=device)

    def chain():
        y = x
        for _ in range(ops):
            y = y + 1.0
        y[:1].cpu()

    def single():
        (x + 1.0)[:1].cpu()
    chain_s, single_s = best_times([chain, single], repeat)
    return chain_s / ops, single_s


def mlp_training_step(torch, device, hidden):
    """``step()`` runs one SGD step of a 784-...-10 MLP, as bench_opencl's ``mlp_training_step``."""
    rng = np.random.RandomState(0)
    images = rng.rand(128, 784).astype(np.float32)
    labels = rng.randint(0, 10, 128).astype(np.int64)
    params = []
    for fan_in, fan_out in mlp_layer_sizes(hidden):
        w = torch.tensor(rng.randn(fan_in, fan_out) * 0.05, dtype=torch.float32, device=device)
        b = torch.zeros(fan_out, dtype=torch.float32, device=device)
        params += [w.requires_grad_(), b.requires_grad_()]
    optimizer = torch.optim.SGD(params, lr=0.1)

    def step():
        x = torch.from_numpy(images).to(device)    # the feed: host to device, every step
        y = torch.from_numpy(labels).to(device)
        logits = x
        for layer in range(0, len(params), 2):
            if layer:
                logits = torch.relu(logits)
            logits = logits @ params[layer] + params[layer + 1]
        loss = torch.nn.functional.cross_entropy(logits, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss.item()                         # the fetch, which waits for the step
    return step


def bench_mlp(torch, device, hidden, steps, repeat):
    step = mlp_training_step(torch, device, hidden)
    return steps / best_times([lambda: [step() for _ in range(steps)]], repeat)[0]


def measure(torch, args):
    """Every case, as a flat dict of numbers (the JSON written by ``--json``)."""
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        sync = torch.cuda.synchronize
        name = torch.cuda.get_device_name(device)
    else:
        sync = lambda: None  # noqa: E731 - CPU ops finish before they return
        name = "cpu (%d threads)" % torch.get_num_threads()
    results = {"device": name, "torch_version": torch.__version__,
               "tf32": bool(torch.backends.cuda.matmul.allow_tf32),
               "add_size": args.size, "add_chain": args.chain, "op_chain_ops": args.ops}
    add_s = bench_add_chain(torch, device, sync, args.size, args.chain, args.repeat)
    results["add_ms"] = add_s * 1e3
    results["add_gbs"] = add_chain_gbs(args.size, args.chain, add_s)
    for n in (1024,) if args.skip_2048 else (1024, 2048):
        products = 3 if n == 1024 else 1
        seconds = bench_matmul(torch, device, sync, n, products, args.repeat)
        results["matmul_%d_gflops" % n] = matmul_gflops(n, products, seconds)
    per_op, single = bench_op_cost(torch, device, args.ops, args.repeat)
    results["per_op_us"] = per_op * 1e6
    results["one_op_step_us"] = single * 1e6
    for hidden in MLP_SHAPES:
        results[mlp_name(hidden) + "_steps_s"] = bench_mlp(torch, device, hidden, args.steps,
                                                           args.repeat)
    return results


def format_table(results):
    """The human-readable table of ``results`` (one line per measured number)."""
    rows = [("(a) %d chained adds, %d floats, eager" % (results["add_chain"], results["add_size"]),
             "%.1f GB/s  (%.3f ms/step)" % (results["add_gbs"], results["add_ms"]))]
    for n in (1024, 2048):
        if "matmul_%d_gflops" % n in results:
            rows.append(("(b) matmul %d^2 fp32, TF32 %s" % (n, "on" if results["tf32"] else "off"),
                         "%.1f GFLOP/s" % results["matmul_%d_gflops" % n]))
    rows.append(("(c) per op in a chain of %d ops" % results["op_chain_ops"],
                 "%.1f us" % results["per_op_us"]))
    rows.append(("    one-op step with its fetch", "%.1f us" % results["one_op_step_us"]))
    for hidden in MLP_SHAPES:
        key = mlp_name(hidden) + "_steps_s"
        if key in results:
            rows.append(("(d) MLP %s, batch 128, SGD" % "-".join(key.split("_")[1:-2]),
                         "%.1f steps/s" % results[key]))
    width = max(len(label) for label, _ in rows)
    lines = ["torch %s on %s" % (results["torch_version"], results["device"])]
    return "\n".join(lines + ["%-*s  %s" % (width, label, value) for label, value in rows])


def write_json(path, results):
    """Write ``results`` to ``path`` (through a temporary file, so a reader never sees half)."""
    temporary = path + ".tmp"
    with open(temporary, "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    os.replace(temporary, path)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default=None,
                        help="torch device (default: cuda if available, else cpu)")
    parser.add_argument("--size", type=int, default=1 << 22, help="elements per vector in (a)")
    parser.add_argument("--chain", type=int, default=20, help="adds per step in (a)")
    parser.add_argument("--repeat", type=int, default=5, help="timed repeats (best is kept)")
    parser.add_argument("--ops", type=int, default=200, help="ops per step in (c)")
    parser.add_argument("--steps", type=int, default=20, help="training steps per repeat in (d)")
    parser.add_argument("--skip-2048", action="store_true", help="time matmul at 1024^2 only")
    parser.add_argument("--json", metavar="PATH", help="also write the numbers to PATH as JSON")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed: no reference numbers")
        return 0
    if args.device is None:
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    results = measure(torch, args)
    print(format_table(results))
    if args.json:
        write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
