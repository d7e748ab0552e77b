"""Executors: running a planned step.

Start with :mod:`~minitf.runtime.executors.plan` (what is fixed per step) and
:mod:`~minitf.runtime.executors.interpreter` (the reference loop); then the
generated straight-line step, the parallel and control-flow executors, the
multi-device step, and :mod:`~minitf.runtime.executors.step`, where one of
them is chosen.  Every step is called the same way:
``step(feeds, *, deadline=None, trace=None)``.
"""
