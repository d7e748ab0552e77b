"""The partitioner: one graph per device, with Send/Recv on every cut edge.

After placement, a step's ops are split by device (TF paper §3.2.2, TF's
``graph/graph_partition.cc``).  Every op is copied into the graph of its
device; every data edge whose two ends are on different devices is replaced
by a ``_Send`` on the producer's device and a ``_Recv`` on the consumer's —
one Recv per (tensor, destination device), however many consumers it has
there.  A control edge across devices becomes a Send/Recv of an empty tensor
that the consumer waits for.

Feeds become placeholders (``_arg_...``) in the partitions that consume them,
and fetches are read from the partition that produces them.  The partitions
are ordinary :class:`~minitf.framework.graph.Graph` objects: print them, draw
them, or serialize them with ``as_graph_def()`` to send them to another
process.
"""

import dataclasses

import numpy as np

from minitf.framework import dtypes
from minitf.framework.device_spec import DeviceSpec
from minitf.framework.graph import Graph, nest_list_input
from minitf.framework.tensor_shape import TensorShape
from minitf.runtime.planning.control_loops import (ControlLoops, add_control_input,
                                                    loop_frame, spanned_frames)
from minitf.runtime.rendezvous import LOCAL_INCARNATION



@dataclasses.dataclass
class Partition:
    """The subgraph of one device.

    Attributes:
        device: the Device that runs it.
        graph: its Graph (copies of the step's ops plus Send/Recv/args).
        feeds: ``[(original fed Tensor, placeholder Tensor in graph)]``.
        fetches: ``{original fetched Tensor: Tensor in graph}``.
        targets: names of the ops in ``graph`` that must run.
    """

    device: object
    graph: Graph
    feeds: list = dataclasses.field(default_factory=list)
    fetches: dict = dataclasses.field(default_factory=dict)
    targets: list = dataclasses.field(default_factory=list)


def _short(device_name):
    """``CPU_0`` for a device of this process; ``worker_1_CPU_0`` for a task's
    (the names of Sends to two tasks' ``CPU:0`` must differ)."""
    task, _, device = device_name.rpartition("/device:")
    device = device.replace(":", "_")
    spec = DeviceSpec.from_string(task) if task else DeviceSpec()
    if spec.job in (None, "localhost"):
        return device
    if spec.replica:
        return "%s_r%d_%d_%s" % (spec.job, spec.replica, spec.task or 0, device)
    return "%s_%d_%s" % (spec.job, spec.task or 0, device)


def _clean(tensor_name):
    return tensor_name.replace("/", "_").replace(":", "_")


class _Partitioner:
    def __init__(self, placement, feeds):
        self.placement = placement
        self.fed = set(feeds)
        self.partitions = {}
        self.copies = {}   # original op -> copy
        self.args = {}     # (fed tensor, device name) -> placeholder tensor
        self.recvs = {}    # (tensor, device name) -> recv tensor
        self.control_recvs = {}  # (control ops, device name) -> recv op
        self.control_names = {}   # device name -> the names of tokens sent to it
        self.back_edges = []  # (original Merge, input index) still to wire
        self.loop_recvs = []  # (_Recv op, loop frame, source device): cut edges in a loop

    def partition_of(self, device):
        if device.name not in self.partitions:
            self.partitions[device.name] = Partition(device, Graph())
        return self.partitions[device.name]

    def copy(self, op):
        """Copies ``op`` into its device's graph, wiring cut edges through Send/Recv."""
        device = self.placement[op]
        part = self.partition_of(device)
        back_edges = [i for i, t in enumerate(op.inputs) if t.op not in self.copies
                      and t.op.type == "NextIteration" and t not in self.fed]
        inputs = [self.input_for(t, device) if i not in back_edges else None
                  for i, t in enumerate(op.inputs)]
        for i in back_edges:  # a loop's Merge: wired to its NextIteration once that is copied
            inputs[i] = next(x for x in inputs if x is not None)
            self.back_edges.append((op, i))
        control = self.controls_for([c for c in op.control_inputs if c in self.placement], device)
        copy = part.graph.create_op(
            op.type, nest_list_input(op.op_def, inputs), dtypes=[t.dtype for t in op.outputs],
            name=op.name + "/", attrs=op._attrs, op_def=op.op_def, compute_shapes=False)
        copy._control_inputs.extend(control)
        copy._set_device(device.name)
        copy._traceback = op._traceback
        # A run-time error names the user's op, not this copy (TF resolves the
        # failing node's name in the session's graph).
        copy._original_op = getattr(op, "_original_op", op)
        for original, copied in zip(op.outputs, copy.outputs):
            copied._shape = original.shape
        self.copies[op] = copy
        return copy

    def input_for(self, tensor, device):
        if tensor in self.fed:
            return self.arg_for(tensor, device)
        source = self.placement[tensor.op]
        local = self.copies[tensor.op].outputs[tensor.value_index]
        if source is device:
            return local
        return self.recv_for(tensor, local, source, device)

    def arg_for(self, tensor, device):
        key = (tensor, device.name)
        if key not in self.args:
            part = self.partition_of(device)
            arg = part.graph.create_op(
                "Placeholder", [], name="_arg_%s/" % _clean(tensor.name),
                attrs={"dtype": tensor.dtype.base_dtype, "shape": tensor.shape}).outputs[0]
            arg.op._set_device(device.name)
            part.feeds.append((tensor, arg))
            self.args[key] = arg
        return self.args[key]

    def recv_for(self, tensor, local, source, device):
        key = (tensor, device.name)
        if key not in self.recvs:
            name = tensor.name
            recv = self.send_recv(local, name, source, device,
                                  "%s_to_%s" % (_clean(name), _short(device.name)), tensor.op)
            self.mark_control_flow(recv.op, tensor.op, source)
            self.recvs[key] = recv
        return self.recvs[key]

    def controls_for(self, control_ops, device):
        """The control inputs of an op placed on ``device``.

        The ones on ``device`` are their copies.  Those on another device
        cross as a Send/Recv of an empty token that waits for them — one
        token for all of them per source device (a training step's group op
        waits for every update on a ps: one round trip, not one per update);
        an op inside a cond or loop crosses alone, as its token may be dead.
        """
        local, grouped = [], {}
        for control_op in control_ops:
            source = self.placement[control_op]
            if source is device:
                local.append(self.copies[control_op])
            elif getattr(control_op, "_control_flow_context", None) is not None:
                local.append(self.control_for((control_op,), device))
            else:
                grouped.setdefault(source.name, []).append(control_op)
        return local + [self.control_for(tuple(group), device) for group in grouped.values()]

    def control_for(self, control_ops, device):
        """The ``_Recv`` on ``device`` of a token sent once ``control_ops``
        (all on one other device) have run."""
        key = (frozenset(control_ops), device.name)
        if key not in self.control_recvs:
            first = control_ops[0]
            source = self.placement[first]
            source_graph = self.partition_of(source).graph
            name = _clean(first.name) + ("" if len(control_ops) == 1 else
                                         "_and_%d_more" % (len(control_ops) - 1))
            name = self.unique_control_name(name, device)
            with source_graph.control_dependencies([self.copies[c] for c in control_ops]):
                token = source_graph.create_op(
                    "Const", [], name="_ctrl_%s_to_%s/" % (name, _short(device.name)),
                    attrs={"value": np.zeros(0, np.float32), "dtype": dtypes.float32}).outputs[0]
            token.op._set_device(source.name)
            recv = self.send_recv(token, "^" + name, source, device,
                                  "ctrl_%s_to_%s" % (name, _short(device.name)), first)
            self.mark_control_flow(recv.op, first, source)
            self.control_recvs[key] = recv.op
        return self.control_recvs[key]

    def unique_control_name(self, name, device):
        """``name``, or ``name_1``, ... if another token to ``device`` has it."""
        taken = self.control_names.setdefault(device.name, set())
        unique, index = name, 0
        while unique in taken:
            index += 1
            unique = "%s_%d" % (name, index)
        taken.add(unique)
        return unique

    def mark_control_flow(self, recv, producer, source):
        """Notes a ``_Recv`` of a value that may be dead, or that lives in a loop's frame."""
        if getattr(producer, "_control_flow_context", None) is None:
            return
        # It may be dead (a cond's untaken branch): the receiving partition
        # needs the control-flow executor.
        recv._attrs["_in_control_flow"] = True
        frame = loop_frame(producer)
        if frame is not None:  # it must run once per iteration: see control_loops.py
            recv._attrs["_in_loop"] = True
            self.loop_recvs.append((recv, frame, source))

    def send_recv(self, local, tensor_name, source, device, suffix, producer):
        """Adds a ``_Send`` of ``local`` on ``source`` and its ``_Recv`` on ``device``.

        Both stand for ``producer``, the user's op whose value crosses: a Recv
        that fails (the other task died, the deadline passed) names it.
        """
        attrs = {"tensor_name": tensor_name, "send_device": source.name,
                 "send_device_incarnation": getattr(source, "incarnation", LOCAL_INCARNATION),
                 "recv_device": device.name}
        send = self.partition_of(source).graph.create_op(
            "_Send", [local], name="_send_%s/" % suffix, attrs=attrs)
        send._set_device(source.name)
        self.partition_of(source).targets.append(send.name)
        recv = self.partition_of(device).graph.create_op(
            "_Recv", [], name="_recv_%s/" % suffix,
            attrs=dict(attrs, tensor_type=local.dtype.base_dtype,
                       shape=local.shape if local.shape.ndims is not None else TensorShape(None)))
        recv._set_device(device.name)
        for op in (send, recv):
            op._original_op = getattr(producer, "_original_op", producer)
        return recv.outputs[0]


def _add_control_loops(partitioner, ops, placement):
    """Drives every loop frame cut across devices with a control loop per device."""
    spanned = spanned_frames(ops, placement)
    if not spanned and not partitioner.loop_recvs:
        return
    loops = ControlLoops(partitioner, placement, ops[0].graph)
    for frame, devices in spanned.items():
        for device in sorted(devices, key=lambda d: d.name):
            loops.loop(frame, device)
    for recv, frame, source in list(partitioner.loop_recvs):
        loops.loop(frame, source)  # the Send's side must iterate too
        add_control_input(recv, loops.merge_for(frame, placement_of(recv, partitioner)))


def placement_of(recv, partitioner):
    """The device of a partition op (the partition whose graph holds it)."""
    for part in partitioner.partitions.values():
        if part.graph is recv.graph:
            return part.device
    raise KeyError(recv.name)


def partition(ops, placement, feeds, fetches, targets):
    """Splits a placed step into per-device :class:`Partition` objects.

    Args:
        ops: the step's ops in topological order.
        placement: Operation -> Device.
        feeds: fed Tensors.
        fetches: fetched Tensors (a fetched fed tensor is the client's to return).
        targets: Operations to run.

    Returns:
        A dict from device name to Partition, in order of first use.
    """
    partitioner = _Partitioner(placement, feeds)
    for op in ops:
        partitioner.copy(op)
    for merge, index in partitioner.back_edges:
        tensor = merge.inputs[index]
        if placement[tensor.op] is not placement[merge]:
            raise ValueError("The back edge %s -> %s of a while loop crosses devices (%s, %s); "
                             "place a loop's control-flow ops on one device"
                             % (tensor.name, merge.name, placement[tensor.op].name,
                                placement[merge].name))
        partitioner.copies[merge]._update_input(
            index, partitioner.copies[tensor.op].outputs[tensor.value_index])
    _add_control_loops(partitioner, ops, placement)
    for tensor in fetches:
        if tensor not in partitioner.fed:
            device = placement[tensor.op]
            partitioner.partition_of(device).fetches[tensor] = \
                partitioner.copies[tensor.op].outputs[tensor.value_index]
    for op in targets:
        partitioner.partition_of(placement[op]).targets.append(op.name)
    return partitioner.partitions

