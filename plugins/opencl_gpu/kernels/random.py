"""GPU kernels of ``RandomUniform``, ``RandomStandardNormal`` and
``TruncatedNormal`` (source: ``opencl_kernels/random.cl``); ``RandomUniformInt``
runs on the host.

The numbers come from a counter-based generator: no generator state lives on
the device, only a key (from the op's ``seed``/``seed2``, or the operating
system when both are 0) and a step counter that the host advances on every
run, kept in the session's resources like the CPU kernels' generators.  As in
TF, the GPU draws other numbers than the CPU for the same seeds; a seeded
program draws the same numbers on every run of the program.
"""

import os

import numpy as np

from minitf_opencl_gpu.kernels.table import KERNELS, empty, host_kernel, i32, run


class _Counter:
    """The key and the next step of one random op in one session."""

    def __init__(self, seed, seed2):
        if seed == 0 and seed2 == 0:
            self.key = int.from_bytes(os.urandom(8), "little")
        else:
            self.key = ((seed & 0xFFFFFFFF) << 32 | (seed2 & 0xFFFFFFFF)) ^ 0x5851F42D4C957F2D
        self.step = 0

    def next(self):
        self.step += 1
        return np.uint64(self.key), np.uint64(self.step)


def _draw(name):
    def draw(ctx, shape, seed, seed2, dtype):
        shape = [int(d) for d in ctx.device.to_host(shape)]
        if any(d < 0 for d in shape):
            raise ctx.invalid_argument("Dimension must be >= 0, got shape %s" % shape)
        out_dtype = np.dtype(ctx.output_dtypes[0])
        counter = ctx.resources.kernel_state(("opencl_rng", ctx.op.name),
                                             lambda: _Counter(seed, seed2))
        key, step = counter.next()
        out = empty(ctx, shape, out_dtype)
        run(ctx, "random", name, out_dtype, out.size, out, key, step, i32(out.size),
            **({"IS_DOUBLE": "1"} if out_dtype == np.float64 else {}))
        return out
    draw.__name__ = name
    return draw


# The shape is an int32 input (host memory) and the output float; the kernel is
# chosen by the input dtype, so it registers for both.  No host dispatch: a
# host-memory shape is the normal case here.
for _op, _name in (("RandomUniform", "random_uniform"), ("RandomStandardNormal", "random_normal"),
                   ("TruncatedNormal", "truncated_normal")):
    KERNELS.append((_op, _draw(_name), ("float", "int")))


# Random integers are int32/int64 tensors, which this device keeps in host
# memory (see kernels.table): they are drawn there, by the CPU kernel.
host_kernel("RandomUniformInt")
