"""Writes the code samples the docs include, from real output.

Run ``python docs/make_samples.py`` after changing the generated step
(``minitf/runtime/executors/generated.py``); ``tests/test_generated_step.py``
regenerates every sample and fails while a checked-in one is out of date.

The one sample so far, ``concepts/generated_step_sample.txt``, is the source
of the step the runtime generates for :func:`sample_program` — found the way
a session finds it, one stage of a ``sess.run`` journey per line of
:func:`generated_step_source`.
"""

import pathlib

import minitf as tf
from minitf.registry import get_registry
from minitf.runtime.config import ConfigProto
from minitf.runtime.executors.generated import compile_plan
from minitf.runtime.executors.plan import build_plan
from minitf.runtime.kernel_context import KernelContext
from minitf.runtime.master import plan_step
from minitf.runtime.planning.placer import kernel_dtypes
from minitf.runtime.resources import ResourceManager

DOCS = pathlib.Path(__file__).resolve().parent


def sample_program():
    """A dense layer with a ReLU: returns ``(x, y)``, the placeholder and the output."""
    x = tf.placeholder(tf.float32, [32, 64], name="x")
    with tf.variable_scope("layer"):
        w = tf.get_variable("w", [64, 64])
        b = tf.reshape(tf.fill([64], 0.1), [1, 64], name="b")   # folded into a constant
        y = tf.nn.relu(tf.matmul(x, w) + b, name="relu")      # 32x64: worth forwarding
    return x, y


def generated_step_source(fetches, feeds, graph):
    """The source of the generated step running ``fetches`` given ``feeds`` on /cpu:0."""
    registry = get_registry()
    device = registry.device_factory("CPU").create(0)
    planned = plan_step(graph, fetches, feeds, [], [device], ConfigProto(), registry,
                        local_devices={device.name})
    resources = ResourceManager()
    plan = build_plan(
        planned.step.ops, planned.step.feeds, planned.step.fetches,
        kernel_for=lambda op: registry.kernel(op.type, "CPU", kernel_dtypes(op), node=op),
        ctx_for=lambda op: KernelContext(op, device, resources))
    return compile_plan(plan).source


def generated_step_sample():
    """The text of ``concepts/generated_step_sample.txt``."""
    graph = tf.Graph()
    with graph.as_default():
        x, y = sample_program()
    return generated_step_source([y], [x], graph)


# Each sample file (relative to docs/) and the function writing its text.
SAMPLES = {"concepts/generated_step_sample.txt": generated_step_sample}


def main():
    for name, make in SAMPLES.items():
        (DOCS / name).write_text(make())
        print("wrote", DOCS / name)


if __name__ == "__main__":
    main()
