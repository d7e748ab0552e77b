"""The placer: choosing a device for every op of a step.

Each op's requested device (from ``tf.device``, possibly partial such as
``/device:GPU:*``) is matched against the session's devices.  Ops that take a
variable's *reference* go where the variable is, and so do ops colocated with
it (``tf.colocate_with``); an explicit request that contradicts such a
colocation is an ``InvalidArgumentError``.

Unconstrained ops are placed greedily, in topological order, by a simple
cost heuristic in the spirit of the TF paper's §3.2.1: moving a tensor between
devices costs, so an op goes to the device that already holds most of its
inputs, among the devices with a kernel for it; an op with no inputs (a
constant, a variable) goes to the device of its control inputs, or else to the
highest-priority device (GPU before CPU).

When the requested device does not exist, or has no kernel for the op, the
op is moved to one that does if ``allow_soft_placement`` is set; otherwise
``InvalidArgumentError`` lists the alternatives.  With
``log_device_placement`` each decision is printed as TF prints it.

Mirrors TF's ``Placer`` (``common_runtime/placer.cc``).
"""

import sys

from minitf.framework import dtypes, errors
from minitf.framework.device_spec import DeviceSpec


def kernel_dtypes(op):
    """The dtypes a kernel is chosen by: the inputs', or the outputs' for sources."""
    tensors = op.inputs or op.outputs
    return tuple(t.dtype.base_dtype for t in tensors)


def _matches(spec, device):
    return ((spec.job in (None, "localhost"))
            and spec.replica in (None, 0) and spec.task in (None, 0)
            and (spec.device_type is None or spec.device_type == device.device_type)
            and (spec.device_index is None or spec.device_index == device.index))


def place(ops, devices, registry, allow_soft_placement=False, log_device_placement=False):
    """Assigns each op in ``ops`` (in topological order) a device.

    Args:
        ops: the step's operations, producers before consumers.
        devices: the session's devices, in priority order.
        registry: the kernel registry.
        allow_soft_placement: move ops whose request cannot be met.
        log_device_placement: print each op's device.

    Returns:
        A dict Operation -> Device.

    Raises:
        errors.InvalidArgumentError: if a request cannot be met and soft
            placement is off.
        ValueError: if a requested device string is malformed.
    """
    placement = {}
    by_name = {}
    step_ops = {op.name: op for op in ops}

    def place_one(op):
        # An op colocated with another (``tf.colocate_with``) follows it, so
        # the op it names is placed first, even when it comes later in the
        # topological order (TF's placer unites colocation groups up front).
        for group in op._colocation_groups:
            target = step_ops.get(group[len("loc:@"):])
            if target is not None and target is not op and target not in placement:
                place_one(target)
        device = _colocated_device(op, placement, by_name)
        if device is None:
            device = _choose(op, devices, registry, allow_soft_placement, placement)
        elif op.device and not _matches(DeviceSpec.from_string(op.device), device) \
                and not allow_soft_placement:
            raise errors.InvalidArgumentError(
                op.node_def, op,
                "Cannot colocate nodes %s (defined at %s:%d) and its variable or colocation "
                "group: it requests device '%s' but they are on '%s'. Remove the device "
                "request or set allow_soft_placement=True."
                % ((op.name,) + tuple(op.traceback) + (op.device, device.name)))
        placement[op] = device
        by_name[op.name] = device
        if log_device_placement:
            print("%s: (%s): %s" % (op.name, op.type, device.name), file=sys.stderr)

    for op in ops:
        if op not in placement:
            place_one(op)
    return placement


def _colocated_device(op, placement, by_name):
    """The device of the variable (or op) that ``op`` must share a device with."""
    for index in op.op_def.ref_inputs:
        if not op.inputs[index].dtype.is_ref:  # Switch/Enter take refs and values alike
            continue
        producer = op.inputs[index].op
        if producer in placement:
            return placement[producer]
    for group in op._colocation_groups:
        device = by_name.get(group[len("loc:@"):])
        if device is not None:
            return device
    return _resource_device(op, placement)


def _resource_device(op, placement):
    """The device of a resource (a TensorArray, say) that ``op`` takes as input.

    A resource is a host object of its device (its kernels' Python object):
    it cannot travel, so its users run where it lives — as TF's placer
    colocates the ends of every resource edge.  An explicit, different
    device request wins (the edge then fails loudly at run time).
    """
    for tensor in op.inputs:
        if tensor.dtype.base_dtype == dtypes.resource and tensor.op in placement:
            device = placement[tensor.op]
            if not op.device or _matches(DeviceSpec.from_string(op.device), device):
                return device
    return None


def _nearest(candidates, op, placement):
    """The candidate holding most of ``op``'s inputs (ties: priority order).

    An op without inputs follows its control inputs: a constant inside a
    ``tf.cond`` branch or loop body hangs on the branch's or loop's pivot,
    and stays on the device of the control flow it belongs to.
    """
    votes = {}
    producers = [t.op for t in op.inputs] or op.control_inputs
    for producer in producers:
        device = placement.get(producer)
        if device is not None:
            votes[device] = votes.get(device, 0) + 1
    return max(candidates, key=lambda d: (votes.get(d, 0), -candidates.index(d)))


def _choose(op, devices, registry, allow_soft, placement):
    spec = DeviceSpec.from_string(op.device) if op.device else DeviceSpec()
    dtypes = kernel_dtypes(op)
    requested = [d for d in devices if _matches(spec, d)]
    with_kernel = [d for d in requested if registry.has_kernel(op.type, d.device_type, dtypes)]
    if with_kernel:
        return _nearest(with_kernel, op, placement)
    fallback = [d for d in devices if registry.has_kernel(op.type, d.device_type, dtypes)]
    if fallback and (allow_soft or not op.device):
        return _nearest(fallback, op, placement)
    available = ", ".join(d.name for d in devices)
    where = "%s:%d" % op.traceback
    if not requested:
        raise errors.InvalidArgumentError(
            op.node_def, op,
            "Cannot assign a device for operation %s (defined at %s): Operation was explicitly "
            "assigned to %s but available devices are [ %s ]. Make sure the device "
            "specification refers to a valid device." % (op.name, where, op.device, available))
    if not op.device:
        raise registry.missing_kernel_error(op.type, requested[0].device_type, dtypes, node=op)
    raise errors.InvalidArgumentError(
        op.node_def, op,
        "Cannot assign a device for operation %s (defined at %s): Could not satisfy explicit "
        "device specification '%s' because no supported kernel for %s devices is available "
        "for op type %s with input dtypes [%s]. Devices with a kernel for these dtypes: [%s]. "
        "Set allow_soft_placement=True to place it there."
        % (op.name, where, op.device, requested[0].device_type, op.type,
           ", ".join(d.name for d in dtypes),
           ", ".join(sorted({d.device_type for d in fallback})) or "none"))
