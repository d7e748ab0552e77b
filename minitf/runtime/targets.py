"""Session targets: where ``tf.Session(target)`` sends its steps.

``tf.Session()`` runs steps in this process (TF's ``DirectSession``).  A
``target`` such as ``"grpc://host:port"`` names a master elsewhere, and its
*scheme* picks the code that talks to it (TF's ``SessionFactory`` registry:
``DIRECT_SESSION``, ``GRPC_SESSION``).  The runtime does not know the schemes
in advance — the distributed runtime, a layer above, registers ``"grpc"`` —
so this module is only the table.

A factory ``factory(target, graph, config)`` returns a *remote target* with:

* ``make_step(fetches, feeds, targets, converters, traced)`` — a step
  following the step protocol (:mod:`~minitf.runtime.executors.step`);
* ``list_devices()`` — the devices a step may use, as ``DeviceAttributes``;
* ``reset(containers)`` — clear resource containers on every task the target
  reaches (``tf.Session.reset``);
* ``close()``.
"""

from minitf.framework import errors

_FACTORIES = {}


def register(scheme, factory):
    """Makes ``Session("scheme://...")`` connect through ``factory``."""
    _FACTORIES[scheme] = factory


def connect(target, graph, config):
    """The remote target ``target`` names.

    Raises:
        errors.NotFoundError: if no factory handles its scheme (TF's message).
    """
    scheme = target.split("://", 1)[0] if "://" in target else ""
    factory = _FACTORIES.get(scheme)
    if factory is None:
        raise errors.NotFoundError(
            None, None, "No session factory registered for the given session options: "
            "{target: \"%s\"} Registered factories are {DIRECT_SESSION%s}." % (
                target, "".join(", %s_SESSION" % s.upper() for s in sorted(_FACTORIES))))
    return factory(target, graph, config)


def reset(target, containers=None, config=None):
    """Clears the resource containers of the cluster ``target`` names (``tf.Session.reset``).

    Connects to the target's master without a graph, asks it to ``Reset``
    ``containers`` (None: all) on every task, and disconnects.

    Raises:
        errors.NotFoundError: if no factory handles the target's scheme.
        errors.OpError: what the master reports (``UnavailableError`` for a
            task that cannot be reached).
    """
    remote = connect(target, None, config)
    try:
        remote.reset(list(containers or []))
    finally:
        remote.close()
