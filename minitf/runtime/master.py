"""The master: planning a step, from the client's graph to per-device graphs.

In TF's distributed design (TF paper §3.3) a client talks to a *master*,
which turns "run these fetches" into work for the devices; the workers then
only execute.  The master's planning is the same whether the devices are in
this process, in device processes, or on other machines, so it is written
once, here, as one function a student can read top to bottom::

    plan_step:  prune → schedule → copy into a step graph → rewrite passes
                → place → fuse elementwise ops (XLA-style, where a device can)
                → partition (when more than one worker runs it)

``Session.run`` calls it once per new (fetches, feeds, targets) signature,
``Session.partition_graphs`` calls it to show the partitions, and a cluster's
master service calls it with the devices of every task.

Mirrors TF's ``GraphExecutionState`` + ``DirectSession::CreateGraphs``.
"""

import dataclasses

from minitf.runtime.passes import PassContext, run_passes
from minitf.runtime.passes.xla_fusion import fuse_elementwise
from minitf.runtime.planning import placer
from minitf.runtime.planning.partition import partition
from minitf.runtime.planning.schedule import schedule
from minitf.runtime.planning.step_graph import copy_step
from minitf.runtime.planning.subgraph import prune


@dataclasses.dataclass(frozen=True)
class PlannedStep:
    """What :func:`plan_step` decided for one step signature.

    Attributes:
        step: the :class:`~minitf.runtime.planning.step_graph.StepGraph`
            (its feeds and fetches line up with the client's).
        placement: each op of the step graph -> its Device.
        partitions: device name -> Partition, or None when the whole step
            runs on one device of the caller's own process (``device``).
        device: that one device (None when partitioned).
        rewrites: the :class:`~minitf.runtime.passes.AppliedPass` of each
            rewrite pass run over the step, in order.
    """

    step: object
    placement: dict
    partitions: object
    device: object
    rewrites: tuple = ()


def plan_step(graph, fetches, feeds, targets, devices, config, registry, local_devices=(),
              default_task=None, done_ops=()):
    """Plans one step: the ops to run, where, and the graph each worker runs.

    Args:
        graph: the client's Graph.
        fetches: the fetched Tensors of ``graph``.
        feeds: the fed Tensors of ``graph``.
        targets: the Operations to run for their effects.
        devices: the available devices, in priority order.
        config: the session's ConfigProto (soft placement, logging, rewrites).
        registry: the kernel registry.
        local_devices: names of host-memory devices the caller runs itself:
            a step placed entirely on one of them is not partitioned.
        default_task: in a cluster, the DeviceSpec of the master's task: ops
            that name no job are placed there (None: a local session).
        done_ops: ops that ran in an earlier call of a partial run (left out).

    Returns:
        A :class:`PlannedStep`.

    Raises:
        errors.InvalidArgumentError: if an op cannot be placed.
        ValueError: if the graph has a cycle outside a while loop.
    """
    order, _ = schedule(prune(fetches, targets, feeds, done_ops), feeds)
    step = copy_step(graph, order, feeds, fetches, targets)
    context = PassContext(registry, _host_device(devices), config)
    step = run_passes(step, context)
    placement = placer.place(step.ops, devices, registry, config.allow_soft_placement,
                             config.log_device_placement, default_task=default_task)
    step, placement = fuse_elementwise(step, placement, context)
    used = set(placement.values()) or {devices[0]}
    if len(used) == 1:
        device = next(iter(used))
        if device.name in local_devices and device.host_memory:
            return PlannedStep(step, placement, partitions=None, device=device,
                               rewrites=tuple(context.applied))
    parts = partition(step.ops, placement, step.feeds, step.fetches, step.targets)
    return PlannedStep(step, placement, partitions=parts, device=None,
                       rewrites=tuple(context.applied))


def _host_device(devices):
    """An in-process CPU device, on which passes may evaluate ops (None: none)."""
    return next((d for d in devices if d.device_type == "CPU" and d.host_memory
                 and d.index == 0), None)
