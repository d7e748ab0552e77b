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
op is moved to one that does if ``allow_soft_placement`` is set (keeping its
task when it can, as TF's soft placement keeps the job and task and drops the
device type); otherwise ``InvalidArgumentError`` lists the alternatives.  With
``log_device_placement`` each decision is printed as TF prints it.

In a cluster the devices belong to several tasks,
``/job:ps/replica:0/task:1/device:CPU:0``, and a request matches a device
when every field it names agrees.  The master passes its own task as
``default_task``: a request that names no job (``/device:GPU:0``, or no
request at all) is placed within that task, as TF places unassigned ops on
the master's task; a request that names a job but no task (``/job:ps``) may
use any task of the job, and the lowest task index wins (TF's ``/job:ps``
means ``/job:ps/task:0``)::

    request            default_task        candidates
    (none)             /job:worker/task:0  /job:worker/replica:0/task:0/*
    /device:CPU:0      /job:worker/task:0  /job:worker/replica:0/task:0/device:CPU:0
    /job:ps            (any)               /job:ps/replica:0/task:0/*  (lowest task)
    /job:ps/task:1     (any)               /job:ps/replica:0/task:1/*

Mirrors TF's ``Placer`` (``common_runtime/placer.cc``).
"""

import sys

from minitf.framework import dtypes, errors
from minitf.framework.device_spec import DeviceSpec
from minitf.framework.op_attrs import kernel_dtypes
from minitf.runtime.planning.step_graph import user_op


def device_spec_of(device):
    """The full :class:`DeviceSpec` of a device: job, replica and task from its
    name, type and index from the device itself."""
    named = DeviceSpec.from_string(device.name)
    return DeviceSpec(named.job, named.replica, named.task, device.device_type, device.index)


def _matches(request, device_spec):
    """True when every field ``request`` names agrees with the device's."""
    return all(getattr(request, field) is None or getattr(device_spec, field) is None
               or getattr(request, field) == getattr(device_spec, field)
               for field in DeviceSpec.__slots__)


def _task_of(spec):
    """The job/replica/task part of a spec (what soft placement keeps)."""
    return DeviceSpec(spec.job, spec.replica, spec.task)


def _within_default_task(request, default_task):
    """The request an op is placed by: one naming no job is completed with the
    default task's job, replica and task (its own fields win)."""
    if default_task is None or request.job is not None:
        return request
    return _task_of(default_task).make_merged_spec(request)


def place(ops, devices, registry, allow_soft_placement=False, log_device_placement=False,
          default_task=None):
    """Assigns each op in ``ops`` (in topological order) a device.

    Args:
        ops: the step's operations, producers before consumers.
        devices: the session's devices, in priority order.
        registry: the kernel registry.
        allow_soft_placement: move ops whose request cannot be met.
        log_device_placement: print each op's device.
        default_task: the task (a :class:`DeviceSpec` or string such as
            ``"/job:worker/replica:0/task:0"``) in which ops whose request
            names no job are placed: the master's own task in a cluster.
            None (a local session): every device is a candidate.

    Returns:
        A dict Operation -> Device.

    Raises:
        errors.InvalidArgumentError: if a request cannot be met and soft
            placement is off.
        ValueError: if a requested device string is malformed.
    """
    if isinstance(default_task, str):
        default_task = DeviceSpec.from_string(default_task)
    # Each device's job/replica/task/type/index, parsed once for the whole step.
    specs = {device: device_spec_of(device) for device in devices}
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
        device = _colocated_device(op, placement, by_name, specs)
        if device is None:
            device = _choose(op, devices, specs, registry, allow_soft_placement, placement,
                             default_task)
        elif op.device and not _matches(DeviceSpec.from_string(op.device), specs[device]) \
                and not allow_soft_placement:
            raise errors.InvalidArgumentError(
                op.node_def, user_op(op),
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


def _colocated_device(op, placement, by_name, specs):
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
    return _resource_device(op, placement, specs)


def _resource_device(op, placement, specs):
    """The device of a resource (a TensorArray, say) that ``op`` takes as input.

    A resource is a host object of its device (its kernels' Python object):
    it cannot travel, so its users run where it lives — as TF's placer
    colocates the ends of every resource edge.  An explicit, different
    device request wins (the edge then fails loudly at run time).
    """
    for tensor in op.inputs:
        if tensor.dtype.base_dtype == dtypes.resource and tensor.op in placement:
            device = placement[tensor.op]
            if not op.device or _matches(DeviceSpec.from_string(op.device), specs[device]):
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


def _lowest_task(candidates, specs):
    """The candidates that belong to the lowest (replica, task) among them.

    A request such as ``/job:ps`` matches every task of the job; TF places it
    on task 0, so the lowest task wins and the device is chosen within it.
    Devices of one task (a local session) are all kept.
    """
    def task_key(device):
        return (specs[device].replica or 0, specs[device].task or 0)
    lowest = min(task_key(d) for d in candidates)
    return [d for d in candidates if task_key(d) == lowest]


def _choose(op, devices, specs, registry, allow_soft, placement, default_task):
    request = DeviceSpec.from_string(op.device) if op.device else DeviceSpec()
    spec = _within_default_task(request, default_task)
    dtypes = kernel_dtypes(op)

    def has_kernel(device):
        return (registry.has_kernel(op.type, device.device_type, dtypes)
                and _holds(device, op.outputs))

    requested = [d for d in devices if _matches(spec, specs[d])]
    with_kernel = [d for d in requested if has_kernel(d)]
    if with_kernel:
        return _nearest(_lowest_task(with_kernel, specs), op, placement)
    # Soft placement (or an op with no request of its own) keeps the task and
    # lets the device type go, as TF's does; failing that, any device will do.
    fallback = [d for d in devices if has_kernel(d)]
    in_task = [d for d in fallback if _matches(_task_of(spec), specs[d])]
    if fallback and (allow_soft or not op.device):
        return _nearest(_lowest_task(in_task or fallback, specs), op, placement)
    if not op.device:
        device_type = (requested or devices)[0].device_type
        raise registry.missing_kernel_error(op.type, device_type, dtypes, node=user_op(op))
    available = ", ".join(d.name for d in devices)
    where = "%s:%d" % op.traceback
    if not requested:
        raise errors.InvalidArgumentError(
            op.node_def, user_op(op),
            "Cannot assign a device for operation %s (defined at %s): Operation was explicitly "
            "assigned to %s but available devices are [ %s ]. Make sure the device "
            "specification refers to a valid device." % (op.name, where, op.device, available))
    unheld = [t.dtype.base_dtype.name for t in op.outputs
              if op.inputs and not _holds(requested[0], [t])]   # a source's are listed already
    raise errors.InvalidArgumentError(
        op.node_def, user_op(op),
        "Cannot assign a device for operation %s (defined at %s): Could not satisfy explicit "
        "device specification '%s' because no supported kernel for %s devices is available "
        "for op type %s with input dtypes [%s]%s. Devices with a kernel for these dtypes: "
        "[%s]. Set allow_soft_placement=True to place it there."
        % (op.name, where, op.device, requested[0].device_type, op.type,
           ", ".join(d.name for d in dtypes),
           " and output dtypes [%s]" % ", ".join(unheld) if unheld else "",
           ", ".join(sorted({d.device_type for d in fallback})) or "none"))


def _holds(device, tensors):
    """Whether ``device`` can hold tensors of the dtypes of ``tensors`` (``Device.dtypes``)."""
    held = getattr(device, "dtypes", None)
    return held is None or all(t.dtype.base_dtype in held for t in tensors)
