"""Planning a step: what runs (pruning, scheduling), where (placement), and the
graph each device runs (partitioning with Send/Recv).

The master (:mod:`~minitf.runtime.master`) calls these in order; each module
is one stage and can be read on its own.
"""
