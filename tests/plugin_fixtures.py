"""A tiny third-party-style plugin used by the tests: registered at run time.

It declares ``CountingIdentity`` (an identity that counts its executions, to
prove pruning) and ``Cube`` (a new op with its kernel), using only the public
hooks.
"""

import time

from minitf.ops.common_shapes import unchanged_shape
from minitf.ops.op_def_library import apply_op
from minitf.registry import OpDef, hookimpl

CALLS = {}

COUNTING = OpDef("CountingIdentity", inputs=("input",), shape_fn=unchanged_shape,
                 attrs={"tag": ""}, stateful=True, doc="Identity that counts its runs.")
CUBE = OpDef("Cube", inputs=("x",), outputs=("y",), shape_fn=unchanged_shape, doc="x ** 3")
SLEEP = OpDef("SleepIdentity", inputs=("input",), shape_fn=unchanged_shape,
              attrs={"seconds": 0.0}, stateful=True, doc="Identity that sleeps first.")


def counting_identity(x, tag):
    return apply_op(COUNTING, [x], attrs={"tag": tag}, name="CountingIdentity")


def sleep_identity(x, seconds):
    return apply_op(SLEEP, [x], attrs={"seconds": seconds}, name="SleepIdentity")


def cube(x, name=None):
    return apply_op(CUBE, [x], name=name or "Cube")


class TestPlugin:
    @hookimpl
    def minitf_register_ops(self, registry):
        registry.register_op(COUNTING)
        registry.register_op(CUBE)
        registry.register_op(SLEEP)

    @hookimpl
    def minitf_register_kernels(self, registry):
        def count(ctx, x, tag):
            CALLS[tag] = CALLS.get(tag, 0) + 1
            return x
        registry.register_kernel("CountingIdentity", "CPU", count)
        registry.register_kernel("Cube", "CPU", lambda ctx, x: x * x * x,
                                 dtypes=["float32", "float64"])

        def sleep(ctx, x, seconds):
            time.sleep(seconds)
            return x
        registry.register_kernel("SleepIdentity", "CPU", sleep)
