"""Partial execution: one step of a graph, run over several calls.

``sess.partial_run_setup(fetches, feeds)`` declares everything the step will
fetch and feed; each ``sess.partial_run(handle, fetches, feed_dict)`` then
feeds a few of the tensors and fetches a few, and may use what earlier calls
computed — the feed of a later call can depend on a fetch of an earlier one::

    h = sess.partial_run_setup([r1, r2], [a, b, c])
    res = sess.partial_run(h, r1, feed_dict={a: 1, b: 2})
    res = sess.partial_run(h, r2, feed_dict={c: res})   # r1 is not computed again

TF runs the whole setup as one executor whose feed nodes wait until a call
supplies their values.  minitf runs it piece by piece: a call runs only the
ops its fetches need that no earlier call of the handle ran, fed what earlier
calls fed or computed.  :class:`PartialRun` keeps, after each call, the
values later calls may still read, so every op runs at most once per handle —
a stateful one (an ``assign_add``, a random op, a dequeue) too.  Ops the
setup names as fetches (its targets) run as soon as every feed they depend
on has been given.  Variables are looked up again by each call (a lookup
has no effect).

The handle is used up once every declared tensor has been fed and fetched;
an op failing while it runs ends it too.  Validation errors are TF's
``InvalidArgumentError`` and leave the handle as it was.

Mirrors ``DirectSession::PRunSetup`` / ``PRun`` (``direct_session.cc``).
"""

import dataclasses
import itertools

from minitf.framework import dtypes, errors
from minitf.runtime.planning.subgraph import prune

_HANDLE_NUMBERS = itertools.count()


@dataclasses.dataclass(frozen=True)
class PartialStep:
    """What one ``partial_run`` call runs (see :meth:`PartialRun.plan`).

    Attributes:
        fetches: the tensors the step computes: those asked for that no
            earlier call computed, then those a later call will read.
        feeds: the tensors fed to the step: this call's feeds and values
            that earlier calls fed or computed.
        targets: the setup's target ops that can run now.
        done_ops: the ops earlier calls ran, left out of the step.
        finishes: the ops of the step that will not run again.
    """

    fetches: list
    feeds: list
    targets: list
    done_ops: frozenset
    finishes: frozenset

    @property
    def is_empty(self):
        return not (self.fetches or self.targets)


class PartialRun:
    """The state of one partial-run handle: what has been fed, fetched, run and kept.

    Args:
        graph: the session's graph.
        fetches: the Tensors the setup declares as fetches.
        targets: the Operations the setup declares (run for their effects).
        feeds: the Tensors the setup declares as feeds.

    Raises:
        errors.InvalidArgumentError: for a tensor fed twice, or both fed and fetched.
    """

    def __init__(self, graph, fetches, targets, feeds):
        for tensor in feeds:
            if feeds.count(tensor) > 1:
                raise _invalid('Endpoint "%s" fed more than once.' % tensor.name)
            if tensor in fetches:
                raise _invalid("%s is both fed and fetched." % tensor.name)
        self._graph = graph
        self._declared_feeds = set(feeds)
        self._declared_fetches = set(fetches)
        self._fed = set()
        self._fetched = set()
        self._pending_targets = list(targets)
        self.values = {}  # tensor -> array: fed, or computed and read by a later call
        self._done = frozenset()  # the ops that ran and will not run again
        self._consumers = _consumers(prune(fetches, targets, feeds))
        self.handle = "%s->%s/%s/%d" % (",".join(t.name for t in feeds),
                                        ",".join(t.name for t in fetches),
                                        ",".join(op.name for op in targets),
                                        next(_HANDLE_NUMBERS))

    @property
    def finished(self):
        """Whether everything declared has been fed, fetched and run."""
        return (self._fed == self._declared_feeds and self._fetched == self._declared_fetches
                and not self._pending_targets)

    def check(self, feeds, fetches):
        """TF's checks of one call's fed and fetched tensors.

        Raises:
            errors.InvalidArgumentError: for a tensor not declared in the
                setup, fed or fetched before, or a fetch that needs a
                declared feed not given yet.
        """
        for tensor in feeds:
            if tensor not in self._declared_feeds:
                raise _invalid("The feed %s was not specified in partial_run_setup."
                               % tensor.name)
            if tensor in self._fed:
                raise _invalid("The feed %s has already been fed." % tensor.name)
        for tensor in fetches:
            if tensor not in self._declared_fetches:
                raise _invalid("The fetch %s was not specified in partial_run_setup."
                               % tensor.name)
            if tensor in self._fetched:
                raise _invalid("The fetch %s has already been fetched." % tensor.name)
        waiting = self._waiting_feed(fetches, [], set(self.values) | set(feeds))
        if waiting is not None:
            raise _invalid("Fetch %s can't be computed from the feeds that have been fed so "
                           "far." % waiting.name)

    def plan(self, feeds, fetches):
        """The :class:`PartialStep` of a call feeding ``feeds`` and fetching ``fetches``."""
        available = set(self.values) | set(feeds)
        targets = [op for op in self._pending_targets
                   if self._waiting_feed([], [op], available) is None]
        wanted = [t for t in dict.fromkeys(fetches) if t not in self.values]
        needed = prune(wanted, targets, available, self._done)
        later_fetches = self._declared_fetches - self._fetched - set(fetches)

        def read_later(tensor):
            return tensor in later_fetches or any(
                op not in needed and op not in self._done for op in self._consumers.get(tensor, ()))

        kept = [t for op in needed for t in op.outputs
                if t not in available and t not in self._declared_feeds and t not in wanted
                and read_later(t) and self._keepable(t)]
        computed = set(wanted) | set(kept)
        finishes = frozenset(op for op in needed if not _only_lookup(op) and all(
            t in available or t in computed or not read_later(t) for t in op.outputs))
        feeds_used = dict.fromkeys(t for op in needed for t in op.inputs if t in available)
        return PartialStep(fetches=wanted + kept, feeds=list(feeds_used), targets=targets,
                           done_ops=self._done, finishes=finishes)

    def record(self, step, feed_values, step_values, fetches):
        """Notes a call that succeeded: its feeds, and what its step computed and ran."""
        self.values.update(feed_values)
        self.values.update((t, value) for t, value in zip(step.fetches, step_values)
                           if self._keepable(t))
        self._done = self._done | step.finishes
        self._fed.update(feed_values)
        self._fetched.update(fetches)
        self._pending_targets = [op for op in self._pending_targets if op not in step.targets]

    def _waiting_feed(self, fetches, targets, available):
        """A declared feed, not given yet, that the fetches or targets need (None: none)."""
        needed = prune([t for t in fetches if t not in available], targets, available,
                       self._done)
        waiting = sorted((t for op in needed for t in op.inputs
                          if t in self._declared_feeds and t not in available),
                         key=lambda t: t.name)
        return waiting[0] if waiting else None

    def _keepable(self, tensor):
        """Whether ``tensor``'s value can be fetched and fed to a later call."""
        return not _only_lookup(tensor.op) and self._graph.is_fetchable(tensor)


def _only_lookup(op):
    """A variable op: it only looks its variable up, so running it again is harmless."""
    return not op.inputs and bool(op.outputs) and all(
        t.dtype.is_ref or t.dtype.base_dtype == dtypes.resource for t in op.outputs)


def _consumers(ops):
    """Tensor -> the ops among ``ops`` reading it."""
    consumers = {}
    for op in ops:
        for tensor in op.inputs:
            consumers.setdefault(tensor, set()).add(op)
    return consumers


def _invalid(message):
    return errors.InvalidArgumentError(None, None, message)
