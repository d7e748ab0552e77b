"""Set minitf's GPU numbers next to PyTorch's and say which goals are met.

Reads the JSON written by ``bench_opencl.py --json`` (one file, or two: the
default run and an ``--only-compiled`` run; for a number in both, the first
file's wins) and by ``torch_reference.py --json``, both taken in one run on the
same GPU (``benchmarks/gpu_device_check.sh`` does that), and prints one line
per goal with its ratio and ``met`` or ``MISSED``, then a few informational
ratios.  A number that is absent (or a file never written) prints as ``n/a``.
Exits 0 either way: it reports a measurement, it is not a test::

    python3 benchmarks/compare_gpu_goals.py --minitf minitf.json --torch torch.json
"""

import argparse
import json
import sys

# (goal, numerator (file, key), denominator (file, key), "<=" or ">=", bound)
GOALS = [
    ("per-op host cost vs bare pyopencl enqueue",
     ("minitf", "per_op_us"), ("minitf", "bare_enqueue_us"), "<=", 1.3),
    ("one-op step with fetch vs bare launch-and-wait",
     ("minitf", "one_op_step_us"), ("minitf", "bare_launch_wait_us"), "<=", 3.0),
    ("fused add chain GB/s vs torch eager",
     ("minitf", "fused_add_gbs"), ("torch", "add_gbs"), ">=", 1.0),
    ("matmul 2048^2 fp32 GFLOP/s vs torch (TF32 off)",
     ("minitf", "matmul_2048_gflops"), ("torch", "matmul_2048_gflops"), ">=", 0.4),
    ("MLP 784-256-10 steps/s vs torch eager",
     ("minitf", "mlp_784_256_10_gpu_steps_s"), ("torch", "mlp_784_256_10_steps_s"), ">=", 1.0),
]

# Not goals, but what a reader of the goals asks next.
INFO = [
    ("unfused add chain GB/s vs torch eager",
     ("minitf", "unfused_add_gbs"), ("torch", "add_gbs")),
    ("matmul 1024^2 GFLOP/s vs torch", ("minitf", "matmul_1024_gflops"),
     ("torch", "matmul_1024_gflops")),
    ("per-op host cost vs torch", ("minitf", "per_op_us"), ("torch", "per_op_us")),
    ("one-op step with fetch vs torch", ("minitf", "one_op_step_us"), ("torch", "one_op_step_us")),
    ("MLP 784-256-10 fused (jit ON_1) steps/s vs torch eager",
     ("minitf", "mlp_784_256_10_gpu_jit_steps_s"), ("torch", "mlp_784_256_10_steps_s")),
    ("MLP 784-512-512-10 steps/s vs torch", ("minitf", "mlp_784_512_512_10_gpu_steps_s"),
     ("torch", "mlp_784_512_512_10_steps_s")),
]


def merge(*dicts):
    """One dict of numbers; for a key in several, the first dict's value wins."""
    merged = {}
    for d in reversed(dicts):
        merged.update(d)
    return merged


def ratio_of(sources, numerator, denominator):
    """``(numerator value, denominator value, ratio)``; ratio None where a number is missing."""
    top = sources[numerator[0]].get(numerator[1])
    bottom = sources[denominator[0]].get(denominator[1])
    if top is None or not bottom:
        return top, bottom, None
    return top, bottom, top / bottom


def verdict(ratio, relation, bound):
    if ratio is None:
        return "n/a"
    return "met" if (ratio <= bound if relation == "<=" else ratio >= bound) else "MISSED"


def _number(value):
    return "n/a" if value is None else "%.4g" % value


def report(minitf, torch):
    """The lines of the comparison of the ``minitf`` and ``torch`` result dicts."""
    sources = {"minitf": minitf, "torch": torch}
    lines = ["minitf on %s; torch %s on %s" % (minitf.get("device", "?"),
                                                torch.get("torch_version", "?"),
                                                torch.get("device", "?"))]
    chains = [(d.get("add_chain"), d.get("add_size")) for d in (minitf, torch)]
    if None not in chains[0] + chains[1] and chains[0] != chains[1]:
        lines.append("warning: add chains differ: minitf %s x %s floats, torch %s x %s"
                     % (minitf.get("add_chain"), minitf.get("add_size"),
                        torch.get("add_chain"), torch.get("add_size")))
    if torch.get("tf32"):
        lines.append("warning: torch's matmul used TF32")
    lines.append("goals:")
    for goal, numerator, denominator, relation, bound in GOALS:
        top, bottom, ratio = ratio_of(sources, numerator, denominator)
        lines.append("  %-48s %10s / %-10s = %-7s target %s %.2fx  %s" % (
            goal, _number(top), _number(bottom), "n/a" if ratio is None else "%.2fx" % ratio,
            relation, bound, verdict(ratio, relation, bound)))
    lines.append("for information:")
    for label, numerator, denominator in INFO:
        top, bottom, ratio = ratio_of(sources, numerator, denominator)
        lines.append("  %-48s %10s / %-10s = %s" % (
            label, _number(top), _number(bottom), "n/a" if ratio is None else "%.2fx" % ratio))
    return lines


def load(path):
    """The numbers in ``path``, or none (with a note) when that run wrote no file."""
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        print("note: %s is missing (that run did not finish)" % path)
        return {}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minitf", action="append", required=True, metavar="PATH",
                        help="bench_opencl.py's JSON (repeat for a second run's file)")
    parser.add_argument("--torch", required=True, metavar="PATH",
                        help="torch_reference.py's JSON")
    args = parser.parse_args(argv)
    print("\n".join(report(merge(*[load(p) for p in args.minitf]), load(args.torch))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
