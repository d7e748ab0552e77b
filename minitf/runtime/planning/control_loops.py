"""Control loops: running one while loop's frame on several devices.

When the body of a ``tf.while_loop`` is placed on more than one device, the
partitioner cuts edges *inside* the loop's frame.  A ``_Recv`` on the other
side must then run once per iteration, in the right frame — but that device
has no loop of its own to drive it.  As TF's partitioner does
(``AddControlFlow`` in ``graph_partition.cc``; Yu et al. 2018, §4.3), every
device that runs ops of the frame gets a small **control loop**::

    Const -> Enter(frame) -> Merge -> Switch(pred) -[true]-> Identity -> NextIteration -> Merge
                                               \\-[false]-> Exit

whose predicate is the loop's ``LoopCond``, sent each iteration from the
device that computes it (keyed ``...;frame_id:iteration`` in the rendezvous).
Each ``_Recv`` of the frame gets a control edge from the control loop's
``Merge``, so it runs in every iteration — also the last one, where its
``_Send`` delivers a dead value.  A nested loop's control loop is entered
from its parent's, one activation per parent iteration.

The partitions of such a step run their kernels on a thread pool (a blocked
``_Recv`` must not stop its device's other ops).
"""

import numpy as np

from minitf.framework import dtypes


def loop_frame(op):
    """The WhileContext whose frame ``op``'s outputs live in, or None (top level).

    An Enter's outputs are in its loop; an Exit's are outside it.
    """
    context = getattr(op, "_control_flow_context", None)
    context = context.get_while_context() if context is not None else None
    if context is not None and op.type == "Exit":
        outer = context.outer_context
        context = outer.get_while_context() if outer is not None else None
    return context


def execution_frame(op):
    """The WhileContext ``op`` runs in (an Enter runs in its loop's parent frame)."""
    context = getattr(op, "_control_flow_context", None)
    context = context.get_while_context() if context is not None else None
    if context is not None and op.type == "Enter":
        outer = context.outer_context
        context = outer.get_while_context() if outer is not None else None
    return context


class ControlLoops:
    """Builds (once each) the control loop of a frame on a device of a partitioned step.

    Args:
        partitioner: the partitioner (its partitions, copies and ``send_recv``).
        placement: Operation -> Device.
        step_graph: the graph of the placed ops.
    """

    def __init__(self, partitioner, placement, step_graph):
        self.partitioner = partitioner
        self.placement = placement
        self.step_graph = step_graph
        self.loops = {}  # (WhileContext, device name) -> (merge op, identity tensor)

    def merge_for(self, frame, device):
        """The Merge op of ``frame``'s control loop on ``device``."""
        return self.loop(frame, device)[0]

    def loop(self, frame, device):
        key = (frame, device.name)
        if key not in self.loops:
            self.loops[key] = self._build(frame, device)
        return self.loops[key]

    def _build(self, frame, device):
        graph = self.partitioner.partition_of(device).graph
        prefix = "_control_loop_%s_%s/" % (_clean(frame.name), _short(device.name))
        parent = frame.outer_context.get_while_context() if frame.outer_context else None

        def create(op_type, inputs, name, attrs=None):
            op = graph.create_op(op_type, inputs, name=prefix + name + "/", attrs=attrs or {},
                                 compute_shapes=False)
            op._set_device(device.name)
            return op

        dummy = create("Const", [], "dummy",
                       {"value": np.zeros((), np.float32), "dtype": dtypes.float32})
        if parent is not None:  # one activation of this loop per parent iteration
            dummy._control_inputs.append(self.loop(parent, device)[1].op)
        enter = create("Enter", [dummy.outputs[0]], "Enter",
                       {"frame_name": frame.name, "is_constant": False,
                        "parallel_iterations": frame.parallel_iterations})
        merge = create("Merge", [[enter.outputs[0], enter.outputs[0]]], "Merge")
        switch = create("Switch", [merge.outputs[0], self._predicate(frame, device, merge)],
                        "Switch")
        identity = create("Identity", [switch.outputs[1]], "Identity")
        next_iteration = create("NextIteration", [identity.outputs[0]], "NextIteration")
        merge._update_input(1, next_iteration.outputs[0])
        create("Exit", [switch.outputs[0]], "Exit")
        return merge, identity.outputs[0]

    def _predicate(self, frame, device, merge):
        """The loop's LoopCond on ``device``: local, or received every iteration."""
        # The frame was built in the user's graph: its pivot's counterpart in
        # the step graph is the op of the same name.
        pivot = self.step_graph.get_operation_by_name(frame.pivot.op.name).outputs[0]
        loop_cond = pivot.op
        home = self.placement[loop_cond]
        local = self.partitioner.copies[loop_cond].outputs[0]
        if home is device:
            return local
        key = (pivot, device.name)
        recv = self.partitioner.recvs.get(key)  # an op of the loop there may receive it already
        if recv is None:
            recv = self.partitioner.send_recv(
                local, frame.pivot.name, home, device,
                "%s_to_%s" % (_clean(frame.pivot.name), _short(device.name)), loop_cond)
            recv.op._attrs["_in_control_flow"] = True
            recv.op._attrs["_in_loop"] = True
            self.partitioner.recvs[key] = recv
        add_control_input(recv.op, merge)
        return recv


def add_control_input(op, control):
    """Adds ``control`` to ``op``'s control inputs, once."""
    if control not in op._control_inputs:
        op._control_inputs.append(control)


def spanned_frames(ops, placement):
    """The loop frames whose ops run on more than one device, with those devices."""
    devices = {}
    for op in ops:
        frame = execution_frame(op)
        while frame is not None:  # a device running a nested frame runs its parents' too
            devices.setdefault(frame, set()).add(placement[op])
            outer = frame.outer_context
            frame = outer.get_while_context() if outer is not None else None
    return {frame: used for frame, used in devices.items() if len(used) > 1}


def _short(device_name):
    return device_name.rsplit("device:", 1)[-1].replace(":", "_")


def _clean(name):
    return name.replace("/", "_").replace(":", "_")


__all__ = ["ControlLoops", "add_control_input", "loop_frame", "execution_frame",
           "spanned_frames"]
