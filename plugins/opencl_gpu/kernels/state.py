"""GPU kernels of the variable ops and of ``_Send``/``_Recv``.

A variable on the GPU device keeps its value in a device buffer in the
session's ResourceManager; ``Assign`` stores the assigned DeviceArray itself
(no kernel ever writes into an input, so sharing it is safe) and
``AssignAdd``/``AssignSub`` store a new buffer, as the CPU kernels store new
arrays: a value read earlier in a step never changes under its reader.

``_Send``/``_Recv`` are where a cross-device edge crosses the bus: the Send
downloads its tensor into the step's rendezvous (host memory, so the other
side may be another process), the Recv uploads what it receives.
"""

import numpy as np

from minitf.plugin import DEAD, receive_from_rendezvous, send_to_rendezvous

from minitf_opencl_gpu.kernels.elementwise import binary
from minitf_opencl_gpu.kernels.table import KERNELS, kernel, on_device

ALL = ("float", "int", "bool")


@kernel("VariableV2", dtypes=ALL)
def variable(ctx, shape, dtype, shared_name):
    return ctx.variable(shared_name or ctx.op.name)


def _assign(ctx, ref, value, validate_shape, use_locking):
    value = on_device(ctx, value, ctx.output_dtypes[0])
    if validate_shape:
        static = ctx.op.inputs[0].shape
        lhs = (ref.value.shape if ref.value is not None else
               tuple(static.as_list()) if static.is_fully_defined() else None)
        if lhs is not None and tuple(lhs) != tuple(value.shape):
            raise ctx.invalid_argument(
                "Assign requires shapes of both tensors to match. lhs shape= %s rhs shape= %s"
                % (list(lhs), list(value.shape)))
    ref.value = value
    return ref


def _assign_add(ctx, ref, value, use_locking):
    ref.value = binary(ctx, "add", on_device(ctx, ref.get()), value)
    return ref


def _assign_sub(ctx, ref, value, use_locking):
    ref.value = binary(ctx, "sub", on_device(ctx, ref.get()), value)
    return ref


def _is_variable_initialized(ctx, ref):
    return np.bool_(ref.is_initialized())


def _send(ctx, tensor, tensor_name, send_device, send_device_incarnation, recv_device):
    # Inside a loop the key carries the frame and iteration; a dead tensor
    # (an untaken branch) crosses as the marker itself.
    send_to_rendezvous(ctx, tensor if tensor is DEAD else ctx.device.to_host(tensor))


def _recv(ctx, tensor_name, send_device, send_device_incarnation, recv_device, tensor_type,
          shape):
    value = receive_from_rendezvous(ctx)
    return value if value is DEAD else ctx.device.from_host(value)


# A Ref input is never a host array, so these register without the host dispatch.
for _op, _fn in (("Assign", _assign), ("AssignAdd", _assign_add), ("AssignSub", _assign_sub),
                 ("IsVariableInitialized", _is_variable_initialized)):
    KERNELS.append((_op, _fn, ALL))
# Every dtype the device holds crosses to other devices (a Cast to uint8 feeding the CPU).
for _op, _fn in (("_Send", _send), ("_Recv", _recv)):
    KERNELS.append((_op, _fn, ALL + ("small_int",)))
