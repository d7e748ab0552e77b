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
from minitf.framework.graph import Graph, nest_list_input
from minitf.framework.tensor_shape import TensorShape
from minitf.runtime.rendezvous import create_key


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
    return device_name.rsplit("device:", 1)[-1].replace(":", "_")


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
        self.control_recvs = {}
        self.back_edges = []  # (original Merge, input index) still to wire

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
        control = [self.control_for(c, device) for c in op.control_inputs if c in self.placement]
        copy = part.graph.create_op(
            op.type, nest_list_input(op.op_def, inputs), dtypes=[t.dtype for t in op.outputs],
            name=op.name + "/", attrs=op._attrs, op_def=op.op_def, compute_shapes=False)
        copy._control_inputs.extend(control)
        copy._set_device(device.name)
        copy._traceback = op._traceback
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
            context = _control_flow_context(tensor.op)
            if _in_loop_frame(tensor.op, context):
                raise ValueError(
                    "Tensor %s is computed inside a while loop on %s but used on %s: minitf "
                    "runs a loop's frame on one device; place the whole loop body on one "
                    "device" % (name, source.name, device.name))
            recv = self.send_recv(local, name, source, device,
                                  "%s_to_%s" % (_clean(name), _short(device.name)))
            if context is not None:
                # It may be dead (a cond's untaken branch): the receiving
                # partition needs the control-flow executor.
                recv.op._attrs["_in_control_flow"] = True
            self.recvs[key] = recv
        return self.recvs[key]

    def control_for(self, control_op, device):
        source = self.placement[control_op]
        local = self.copies[control_op]
        if source is device:
            return local
        key = (control_op, device.name)
        if key not in self.control_recvs:
            source_graph = self.partition_of(source).graph
            with source_graph.control_dependencies([local]):
                token = source_graph.create_op(
                    "Const", [], name="_ctrl_%s_to_%s/" % (_clean(control_op.name),
                                                         _short(device.name)),
                    attrs={"value": np.zeros(0, np.float32), "dtype": dtypes.float32}).outputs[0]
            token.op._set_device(source.name)
            recv = self.send_recv(token, "^" + control_op.name, source, device,
                                  "ctrl_%s_to_%s" % (_clean(control_op.name), _short(device.name)))
            self.control_recvs[key] = recv.op
        return self.control_recvs[key]

    def send_recv(self, local, tensor_name, source, device, suffix):
        """Adds a ``_Send`` of ``local`` on ``source`` and its ``_Recv`` on ``device``."""
        attrs = {"tensor_name": tensor_name, "send_device": source.name,
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
        return recv.outputs[0]


def _control_flow_context(op):
    """The cond/while context ``op`` was built in (None at top level)."""
    return getattr(op, "_control_flow_context", None)


def _in_loop_frame(op, context):
    """Whether ``op``'s outputs live in a while loop's frame (an Exit's are outside)."""
    if context is None or op.type == "Exit":
        return False
    while context is not None:
        if hasattr(context, "pivot_for_body"):  # a WhileContext
            return True
        context = context.outer_context
    return False


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
    for tensor in fetches:
        if tensor not in partitioner.fed:
            device = placement[tensor.op]
            partitioner.partition_of(device).fetches[tensor] = \
                partitioner.copies[tensor.op].outputs[tensor.value_index]
    for op in targets:
        partitioner.partition_of(placement[op]).targets.append(op.name)
    return partitioner.partitions


def rendezvous_key(recv_or_send_op, frame_id=0, iteration=0):
    """The rendezvous key a ``_Send``/``_Recv`` op uses in a given frame and iteration."""
    return create_key(recv_or_send_op.get_attr("send_device"),
                      recv_or_send_op.get_attr("recv_device"),
                      recv_or_send_op.get_attr("tensor_name"), frame_id, iteration)
