"""The runtime layer: running graphs built by the framework and ops layers.

Read it in the order a ``sess.run`` travels::

    session.py        the client: fetches and feeds in, values out
    master.py         plan_step: prune → schedule → passes → place → partition
      planning/       subgraph (prune), schedule, step_graph, placer, partition
      passes/         rewrite passes over the step graph (constant folding, ...)
    executors/        running a plan: plan, interpreter (read first), generated,
                      parallel, control_flow, multi_device; step.make_step chooses
    worker/           the worker service and the device processes behind it
    rendezvous.py     where a _Send and its _Recv meet
    kernel_context.py what a kernel sees; resources.py, values.py, config.py

It finds kernels only through the registry — it never imports a backend.
"""
