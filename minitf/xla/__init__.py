"""``tf.xla``: minitf's XLA in miniature (``tf.xla.experimental.jit_scope``).

See :mod:`minitf.runtime.passes.xla_fusion` for what is compiled, and
:mod:`minitf.xla.experimental` for how a graph asks for it.
"""

from minitf.xla import experimental

__all__ = ["experimental"]
