"""CPU kernels of ``_Send``/``_Recv``: hand host arrays through the step's rendezvous."""

from minitf.plugin import receive_from_rendezvous, send_to_rendezvous

from minitf_numpy_cpu.kernels.table import kernel


@kernel("_Send")
def send(ctx, tensor, tensor_name, send_device, send_device_incarnation, recv_device):
    send_to_rendezvous(ctx, tensor)


@kernel("_Recv")
def recv(ctx, tensor_name, send_device, send_device_incarnation, recv_device, tensor_type,
         shape):
    return receive_from_rendezvous(ctx)
