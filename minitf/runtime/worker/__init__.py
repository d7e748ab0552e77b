"""The worker side: serving devices' partitions, in this process or in another.

:mod:`~minitf.runtime.worker.service` is TF's ``WorkerService`` (RegisterGraph,
RunGraph, RecvTensor); :mod:`~minitf.runtime.worker.server` and
:mod:`~minitf.runtime.worker.client` carry its calls over a socket in
:mod:`~minitf.runtime.worker.wire`'s format; :mod:`~minitf.runtime.worker.processes`
starts the device processes (entry point :mod:`~minitf.runtime.worker.main`).
"""
