"""``tf.train.Saver``: saving variables to checkpoints and restoring them.

A Saver adds ``SaveV2``/``RestoreV2`` ops to the graph when it is created
(:mod:`~minitf.train.saver_builder`); ``save`` and ``restore`` just run them
with the checkpoint prefix fed in, then manage the files around them::

    saver = tf.train.Saver(max_to_keep=3)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(1000):
            sess.run(train_op)
            if step % 100 == 0:
                saver.save(sess, "/tmp/run1/model.ckpt", global_step=step)
    # later, in another process:
    with tf.Session() as sess:
        saver.restore(sess, tf.train.latest_checkpoint("/tmp/run1"))

One ``save`` writes, each file atomically and in this order, so that a crash
at any moment leaves every earlier checkpoint and the state file intact:

1. ``model.ckpt-100.data-00000-of-00001`` and ``model.ckpt-100.index``
   (the ``SaveV2`` kernel; format in :mod:`~minitf.train.checkpoint_format`);
2. ``model.ckpt-100.meta``, the MetaGraphDef (:mod:`~minitf.train.meta_graph`);
   TF writes it last, minitf before the state file so that the newest
   checkpoint the state file names is complete;
3. the checkpoints beyond ``max_to_keep`` are deleted — only ever files in
   the directory of the save.  TF deletes after writing the state file, so
   a crash in between leaves a checkpoint no state file lists and no Saver
   ever deletes; the price of this order is that a crash may leave the old
   state file listing an oldest checkpoint that is gone, which
   ``recover_last_checkpoints`` skips;
4. ``checkpoint``, the state file (:mod:`~minitf.train.checkpoint_state`).

Saving again to the same prefix is crash-safe as well (the previous data
file keeps a second name until the new index is in place, see
:mod:`~minitf.train.checkpoint_format`), a save removes the temporary files
of killed saves, and the first save of a Saver takes over the checkpoints
the state file lists, so ``max_to_keep`` bounds the files on disk across
crashes and restarts.  ``docs/reliability.rst`` lists these promises and
their tests.

Mirrors ``tf.compat.v1.train.Saver`` (``tensorflow/python/training/saver.py``).
"""

import logging
import numbers
import os
import time

from minitf.framework import errors
from minitf.framework import graph as graph_lib
from minitf.ops import variables
from minitf.platform import tf_logging
from minitf.train import checkpoint_state, meta_graph
from minitf.train.saver_builder import (
    SAVEABLE_OBJECTS, BulkSaverBuilder, SaverDef, op_list_to_dict, saveables_for)

_logger = logging.getLogger("minitf.train")


class InvalidCheckpointPathError(errors.NotFoundError, ValueError):
    """``Saver.restore`` was given a path that holds no checkpoint.

    TF1's ``Saver.restore`` raises ``ValueError("The passed save_path is not a
    valid checkpoint: ...")`` here, while reading a missing checkpoint anywhere
    else (``RestoreV2``, ``tf.train.load_variable``) is a ``NotFoundError``.
    This error is both, so code written against either keeps working.
    """


class Saver:
    """Saves and restores variables (``tf.train.Saver``).

    Args:
        var_list: the variables to save: a list (each saved under its op
            name, ``"w"`` for ``w:0``) or a dict ``{name in checkpoint:
            variable}``.  Default: all global variables and the
            ``saveable_objects`` collection.
        reshape: restore a saved tensor into a variable of another shape with
            the same number of elements.
        sharded: accepted for compatibility; minitf always writes one shard.
        max_to_keep: how many recent checkpoints to keep; older ones are
            deleted on save (None or 0: keep all, and list none in the state file).
        keep_checkpoint_every_n_hours: additionally keep one checkpoint per
            this many hours of training.
        name: the name scope of the saver's ops (default ``save``).
        restore_sequentially: restore one variable after the other.
        saver_def: use the ops named by this :class:`SaverDef` instead of
            building new ones (what ``import_meta_graph`` does).
        builder: the :class:`~minitf.train.saver_builder.BaseSaverBuilder`.
        defer_build: build later, with :meth:`build`.
        allow_empty: with no variables, make ``save``/``restore`` do nothing
            instead of raising.
        write_version: 2 (TF's V2 layout); V1 is not supported.
        pad_step_number: name checkpoints ``model-00000100`` instead of ``model-100``.
        save_relative_paths: write paths relative to the directory in the state file.
        filename: the default checkpoint prefix of the save/restore ops.

    Raises:
        ValueError: if there are no variables to save (and not ``allow_empty``),
            or two share a name.
        TypeError: if ``var_list`` holds something that is not a variable.
    """

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False,
                 saver_def=None, builder=None, defer_build=False, allow_empty=False,
                 write_version=2, pad_step_number=False, save_relative_paths=False,
                 filename=None):
        if defer_build and var_list:
            raise ValueError("If `var_list` is provided then build cannot be deferred. Either "
                             "set defer_build=False or var_list=None.")
        if write_version not in (2, "V2"):
            _logger.warning("minitf writes only V2 checkpoints; write_version=%r ignored",
                            write_version)
        self._var_list = var_list
        self._reshape = reshape
        self._sharded = sharded
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._name = name
        self._restore_sequentially = restore_sequentially
        self.saver_def = saver_def
        self._builder = builder
        self._allow_empty = allow_empty
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self._filename = filename
        self._is_built = False
        self._is_empty = False
        self._last_checkpoints = []  # (path, save time), oldest first
        self._checkpoints_to_be_deleted = []
        self._recovered = False  # whether the first save took over the state file's list
        if not defer_build:
            self.build()
        if self.saver_def is not None:
            self._next_checkpoint_time = (
                time.time() + self.saver_def.keep_checkpoint_every_n_hours * 3600)

    # ---- building ------------------------------------------------------------------------------
    def build(self):
        """Adds the save/restore ops to the graph (once)."""
        if self._is_built:
            return
        self._is_built = True
        if self.saver_def is not None:
            self._check_saver_def()
            return
        var_list = self._var_list
        if var_list is None:
            graph = graph_lib.get_default_graph()
            var_list = (variables.global_variables()
                        + graph.get_collection(SAVEABLE_OBJECTS))
        saveables = saveables_for(op_list_to_dict(var_list))
        if not saveables:
            if not self._allow_empty:
                raise ValueError("No variables to save")
            self._is_empty = True
            return
        builder = self._builder or BulkSaverBuilder()
        self.saver_def = builder.build(
            saveables, reshape=self._reshape, sharded=self._sharded,
            max_to_keep=self._max_to_keep or 0,  # the SaverDef field is an int, as in TF
            keep_checkpoint_every_n_hours=self._keep_checkpoint_every_n_hours, name=self._name,
            restore_sequentially=self._restore_sequentially, filename=self._filename)
        self._next_checkpoint_time = (
            time.time() + self.saver_def.keep_checkpoint_every_n_hours * 3600)

    def _check_saver_def(self):
        if not isinstance(self.saver_def, SaverDef):
            raise TypeError("saver_def must be a SaverDef, got %r" % (self.saver_def,))
        for field in ("filename_tensor_name", "save_tensor_name", "restore_op_name"):
            if not getattr(self.saver_def, field):
                raise ValueError("saver_def must specify the %s: %s" % (field, self.saver_def))

    def as_saver_def(self):
        """The :class:`SaverDef` (None for an empty saver)."""
        return self.saver_def

    def to_proto(self, export_scope=None):
        """The ``saver_pb2.SaverDef`` message, names relative to ``export_scope``
        (None if the saver's ops are outside it)."""
        proto = self.saver_def.to_proto()
        if export_scope:
            prefix = export_scope.rstrip("/") + "/"
            for key in ("filename_tensor_name", "save_tensor_name", "restore_op_name"):
                if not getattr(proto, key).startswith(prefix):
                    return None
                setattr(proto, key, getattr(proto, key)[len(prefix):])
        return proto

    @staticmethod
    def from_proto(saver_def, import_scope=None):
        """A Saver using the ops named by ``saver_def`` (a ``saver_pb2.SaverDef``
        message or a :class:`SaverDef`)."""
        if not isinstance(saver_def, SaverDef):
            saver_def = SaverDef.from_proto(saver_def)
        return Saver(saver_def=saver_def.with_scope(import_scope))

    # ---- the checkpoints this saver keeps ----------------------------------------------------
    @property
    def last_checkpoints(self):
        """The checkpoints not yet deleted, oldest first."""
        return [path for path, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints):
        """Deprecated: use :meth:`recover_last_checkpoints`."""
        self._last_checkpoints = [(path, None) for path in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time):
        """Sets ``[(path, save time)]`` as the checkpoints to manage."""
        self._last_checkpoints = list(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths):
        """Takes over existing checkpoints (e.g. after a restart), so that
        ``max_to_keep`` deletes them in turn.  Missing ones are ignored.

        Example:
            >>> state = tf.train.get_checkpoint_state(ckpt_dir)
            >>> saver.recover_last_checkpoints(state.all_model_checkpoint_paths)
        """
        existing = [p for p in checkpoint_paths if checkpoint_state.checkpoint_exists(p)]
        times = checkpoint_state.get_checkpoint_mtimes(existing)
        self.set_last_checkpoints_with_time(list(zip(existing, times)))

    def _record_last_checkpoint(self, path):
        if not self.saver_def.max_to_keep:
            return
        self._last_checkpoints = [(p, t) for p, t in self._last_checkpoints if p != path]
        self._last_checkpoints.append((path, time.time()))
        while len(self._last_checkpoints) > self.saver_def.max_to_keep:
            self._checkpoints_to_be_deleted.append(self._last_checkpoints.pop(0))

    def _maybe_delete_old_checkpoints(self, meta_graph_suffix, save_dir):
        """Deletes checkpoints beyond ``max_to_keep``, except one per
        ``keep_checkpoint_every_n_hours``.

        Only files in ``save_dir`` are ever deleted: a path elsewhere (which a
        damaged or hostile ``checkpoint`` state file may have listed, see
        :meth:`_recover_from_state_file`) is left alone and logged.
        """
        while self._checkpoints_to_be_deleted:
            path, saved_at = self._checkpoints_to_be_deleted.pop(0)
            if saved_at is not None and saved_at > self._next_checkpoint_time:
                self._next_checkpoint_time += self.saver_def.keep_checkpoint_every_n_hours * 3600
                continue
            if not checkpoint_state.is_in_directory(path, save_dir):
                _logger.warning("Not deleting checkpoint %s: it is not in the directory %s of "
                                "the save", path, save_dir or ".")
                continue
            checkpoint_state.remove_checkpoint(path, meta_graph_suffix)

    def _recover_from_state_file(self, save_dir, latest_filename):
        """Takes over the checkpoints the state file of ``save_dir`` lists, once,
        at the first save of a Saver that manages none yet.

        TF1 leaves this to the caller (``recover_last_checkpoints``; its
        ``SessionManager`` does it), so a training script restarted without
        it keeps every checkpoint of its earlier runs forever; minitf does it
        itself so that ``max_to_keep`` bounds the checkpoints on disk across
        crashes and restarts.  Paths outside ``save_dir`` are ignored.
        """
        if self._recovered or not self.saver_def.max_to_keep:
            return
        self._recovered = True
        if self._last_checkpoints:
            return
        try:
            state = checkpoint_state.get_checkpoint_state(save_dir or ".", latest_filename)
        except ValueError:
            return
        if state is not None:
            self.recover_last_checkpoints(
                [p for p in state.all_model_checkpoint_paths
                 if checkpoint_state.is_in_directory(p, save_dir)])

    # ---- save ---------------------------------------------------------------------------------
    def save(self, sess, save_path, global_step=None, latest_filename=None,
             meta_graph_suffix="meta", write_meta_graph=True, write_state=True,
             strip_default_attrs=False, save_debug_info=False):
        """Saves the variables' values in ``sess`` to the checkpoint ``save_path``.

        Args:
            sess: the Session holding the values.
            save_path: the checkpoint prefix, e.g. ``/tmp/run1/model.ckpt``.
            global_step: an int, or a Tensor/Variable evaluated in ``sess``;
                appended to the prefix (``model.ckpt-100``).
            latest_filename: the state file's name (default ``checkpoint``).
            meta_graph_suffix: the meta graph file's suffix (``.meta``).
            write_meta_graph: also export the MetaGraphDef.
            write_state: update the state file and delete old checkpoints.
            strip_default_attrs, save_debug_info: accepted for compatibility.

        Returns:
            The checkpoint prefix written (None for an empty saver).

        Raises:
            TypeError: if ``sess`` is not a Session.
            ValueError: if the directory of ``save_path`` does not exist and
                cannot be made (its own parent is missing too); a missing
                directory whose parent exists is created, as in TF.
            RuntimeError: if the saver was deferred and not built.
        """
        del strip_default_attrs, save_debug_info
        if not self._is_built:
            raise RuntimeError("`build()` should be called before save if defer_build==True")
        latest_filename = latest_filename or "checkpoint"
        if os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain pathname components")
        if not hasattr(sess, "run"):
            raise TypeError("'sess' must be a Session; %s" % (sess,))
        save_path = os.fspath(save_path)
        if global_step is not None:
            if not isinstance(global_step, numbers.Integral):  # NumPy ints too, as in TF
                global_step = int(sess.run(global_step))
            global_step = int(global_step)
            pattern = "%s-%08d" if self._pad_step_number else "%s-%d"
            checkpoint_file = pattern % (save_path, global_step)
        else:
            checkpoint_file = save_path
            if os.path.basename(save_path) == latest_filename:
                raise ValueError("'latest_filename' collides with 'save_path': '%s' and '%s'"
                                 % (latest_filename, save_path))
        save_dir = os.path.dirname(save_path)
        model_checkpoint_path = None
        if not self._is_empty:
            try:
                written = sess.run(self.saver_def.save_tensor_name,
                                   {self.saver_def.filename_tensor_name: checkpoint_file})
            except errors.NotFoundError as e:
                if not os.path.isdir(save_dir or "."):
                    raise ValueError("Parent directory of %s doesn't exist, can't save."
                                     % save_path) from e
                raise
            model_checkpoint_path = _as_str(written)
        if write_meta_graph:
            self.export_meta_graph(
                checkpoint_state.meta_graph_filename(checkpoint_file, meta_graph_suffix),
                graph=sess.graph)
        if model_checkpoint_path is not None and write_state:
            self._recover_from_state_file(save_dir, latest_filename)
            self._record_last_checkpoint(model_checkpoint_path)
            # Deleting before the state file is rewritten (TF deletes after) means
            # a crash in between leaves no checkpoint that no state file lists.
            self._maybe_delete_old_checkpoints(meta_graph_suffix, save_dir)
            checkpoint_state.update_checkpoint_state(
                save_dir, model_checkpoint_path, self.last_checkpoints, latest_filename,
                save_relative_paths=self._save_relative_paths)
        return model_checkpoint_path

    # ---- restore -------------------------------------------------------------------------------
    def restore(self, sess, save_path):
        """Restores the variables in ``sess`` from the checkpoint ``save_path``.

        The variables need no initialization first: restoring initializes them.

        Raises:
            ValueError: if ``save_path`` is None.
            InvalidCheckpointPathError: (a ``NotFoundError`` and a
                ``ValueError``, as TF1 raises) if there is no such checkpoint.
            errors.NotFoundError: if a variable is not in the checkpoint
                ("Key w not found in checkpoint").
            errors.InvalidArgumentError: if a saved shape or dtype does not
                match its variable (the message names the variable).
            errors.DataLossError: if the checkpoint files are damaged.
        """
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        save_path = os.fspath(save_path)
        if not checkpoint_state.checkpoint_exists(save_path):
            hint = (" It is a directory: pass tf.train.latest_checkpoint(%r)." % save_path
                    if os.path.isdir(save_path) else "")
            raise InvalidCheckpointPathError(
                None, None, "The passed save_path is not a valid checkpoint: %s (Failed to find "
                "any matching files for %s.index).%s" % (save_path, save_path, hint))
        tf_logging.info("Restoring parameters from %s", save_path)
        try:
            sess.run(self.saver_def.restore_op_name,
                     {self.saver_def.filename_tensor_name: save_path})
        except errors.NotFoundError as e:
            raise _restore_error(e, "a Variable name or other graph key that is missing from "
                                    "the checkpoint") from e
        except errors.InvalidArgumentError as e:
            raise _restore_error(e, "a mismatch between the current graph and the graph from "
                                    "the checkpoint") from e

    # ---- meta graph ------------------------------------------------------------------------------
    def export_meta_graph(self, filename=None, collection_list=None, as_text=False,
                          export_scope=None, clear_devices=False,
                          clear_extraneous_savers=False, strip_default_attrs=False,
                          save_debug_info=False, graph=None):
        """Writes the graph, its collections and this saver's SaverDef to ``filename``
        (as text with ``as_text``).

        Returns:
            The ``MetaGraphDef``.
        """
        del clear_extraneous_savers, strip_default_attrs, save_debug_info
        return export_meta_graph(filename=filename, saver_def=self.saver_def,
                                 collection_list=collection_list, as_text=as_text, graph=graph,
                                 export_scope=export_scope, clear_devices=clear_devices)


def _as_str(value):
    value = value.item() if hasattr(value, "item") else value
    return os.fsdecode(value) if isinstance(value, bytes) else str(value)


def _restore_error(error, likely_cause):
    """``error`` again, saying it happened restoring and, for a failed Assign,
    which variable and checkpoint key were involved."""
    message = ("Restoring from checkpoint failed. This is most likely due to %s. Please ensure "
               "that you have not altered the graph expected based on the checkpoint. Original "
               "error:\n\n%s" % (likely_cause, error.message))
    op = error.op
    if op is not None and op.type == "Assign" and len(op.inputs) == 2:
        key = _restored_key(op.inputs[1])
        message += "\n(restoring variable '%s'%s)" % (
            op.inputs[0].op.name, "" if key is None else " from checkpoint key '%s'" % key)
    return type(error)(error.node_def, op, message)


def _restored_key(tensor):
    """The checkpoint key a RestoreV2 output (possibly reshaped) was read from."""
    from minitf.framework.tensor_util import constant_value
    while tensor.op.type != "RestoreV2" and tensor.op.inputs:
        tensor = tensor.op.inputs[0]
    if tensor.op.type != "RestoreV2":
        return None
    names = constant_value(tensor.op.inputs[1])
    if names is None:
        return None
    return _as_str(names.reshape(-1)[tensor.value_index])


# ---- tf.train.export_meta_graph / import_meta_graph -------------------------------------------
def export_meta_graph(filename=None, meta_info_def=None, graph_def=None, saver_def=None,
                      collection_list=None, as_text=False, graph=None, export_scope=None,
                      clear_devices=False, clear_extraneous_savers=False,
                      strip_default_attrs=False, save_debug_info=False, **kwargs):
    """Returns (and writes to ``filename``, as text with ``as_text``) the
    ``MetaGraphDef`` of ``graph`` (``tf.train.export_meta_graph``); see
    :mod:`~minitf.train.meta_graph`."""
    del clear_extraneous_savers, strip_default_attrs, save_debug_info, kwargs
    return meta_graph.export_scoped_meta_graph(
        filename=filename, graph_def=graph_def, graph=graph, export_scope=export_scope,
        as_text=as_text, clear_devices=clear_devices, saver_def=saver_def,
        collection_list=collection_list, meta_info_def=meta_info_def)


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None, **kwargs):
    """Rebuilds a saved graph in the default graph (``tf.train.import_meta_graph``).

    Example:
        >>> saver = tf.train.import_meta_graph("/tmp/run1/model.ckpt-100.meta")
        >>> train_op = tf.get_collection("train_op")[0]
        >>> with tf.Session() as sess:
        ...     saver.restore(sess, "/tmp/run1/model.ckpt-100")

    Args:
        meta_graph_or_file: the ``.meta`` path (binary or text) or a ``MetaGraphDef``.
        clear_devices: ignore the saved device requests.
        import_scope: put the imported names under this scope.

    Returns:
        A Saver using the imported save/restore ops; a new Saver when the
        file has no SaverDef but there are variables; else None.

    Raises:
        ValueError: if the graph, a collection or the SaverDef is malformed
            or names something the graph does not have (checked here, as
            :func:`~minitf.framework.graph_def.import_graph_def` checks the ops).
        tf.errors.NotFoundError: for an op type minitf does not have (TF's class).
        OSError: if the file is not a MetaGraphDef.
    """
    del kwargs
    meta = meta_graph_or_file
    if isinstance(meta, (str, os.PathLike)):
        meta = meta_graph.read_meta_graph_file(os.fspath(meta))
    imported = meta_graph.import_scoped_meta_graph(meta, clear_devices=clear_devices,
                                                   import_scope=import_scope)
    if meta.HasField("saver_def"):
        saver = Saver.from_proto(meta.saver_def, import_scope=import_scope)
        _check_saver_def_names(saver.saver_def)
        return saver
    if imported:
        return Saver(var_list=list(imported.values()))
    _logger.info("Saver not created because there are no variables in the graph to restore")
    return None


def _check_saver_def_names(saver_def):
    """Refuses a SaverDef naming tensors or ops the imported graph does not have
    (TF finds out only at the first save or restore)."""
    graph = graph_lib.get_default_graph()
    for field in ("filename_tensor_name", "save_tensor_name", "restore_op_name"):
        name = getattr(saver_def, field)
        try:
            graph.as_graph_element(name)
        except (KeyError, ValueError, TypeError):
            raise ValueError("The meta graph's saver_def names %s '%s', which is not in the "
                             "imported graph" % (field, name)) from None


def _saver_to_proto(saver, export_scope):
    return saver.to_proto(export_scope) if saver.saver_def is not None else None


def _saver_from_proto(saver_def, graph, import_scope):
    del graph
    return Saver.from_proto(saver_def, import_scope)


meta_graph.register_proto_function(graph_lib.GraphKeys.SAVERS, "saver_pb2.SaverDef",
                                   _saver_to_proto, _saver_from_proto)
