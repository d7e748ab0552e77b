"""CPU kernels of ``_Send``/``_Recv``: hand host arrays through the step's rendezvous."""

from minitf.runtime.rendezvous import rendezvous_key

from minitf_numpy_cpu.kernels.table import kernel


@kernel("_Send")
def send(ctx, tensor, tensor_name, send_device, send_device_incarnation, recv_device):
    ctx.rendezvous.send(rendezvous_key(ctx.op, *ctx.frame_iter), tensor)


@kernel("_Recv")
def recv(ctx, tensor_name, send_device, send_device_incarnation, recv_device, tensor_type,
         shape):
    return ctx.rendezvous.recv(rendezvous_key(ctx.op, *ctx.frame_iter), timeout=ctx.step_timeout)
