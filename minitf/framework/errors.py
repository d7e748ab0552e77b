"""TensorFlow's error classes (``tf.errors``).

Every failure that happens while a graph *runs* is an :class:`OpError` carrying
a canonical error code, the operation that failed and a message that says where
that operation was created.  Construction-time mistakes stay ordinary Python
errors (``ValueError``, ``TypeError``), exactly as in TF1.

Mirrors ``tensorflow/python/framework/errors_impl.py``.
"""

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class InaccessibleTensorError(ValueError):
    """A fetch of a tensor that lives inside a cond branch or a while loop's frame."""


class OpError(Exception):
    """A failure while running an operation.

    Args:
        node_def: the failing node's definition (or None).
        op: the failing :class:`Operation` (or None when not known).
        message: what went wrong.
        error_code: one of the canonical codes above.
    """

    def __init__(self, node_def, op, message, error_code=UNKNOWN):
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code

    @property
    def message(self):
        return self._message

    @property
    def op(self):
        return self._op

    @property
    def node_def(self):
        return self._node_def

    @property
    def error_code(self):
        return self._error_code

    def __str__(self):
        return self._message

    def __reduce__(self):
        return type(self), (self._node_def, self._op, self._message)


def _subclass(name, code, doc):
    def __init__(self, node_def, op, message, *args):
        OpError.__init__(self, node_def, op, message, code)

    return type(name, (OpError,), {"__init__": __init__, "__doc__": doc})


CancelledError = _subclass("CancelledError", CANCELLED, "An operation or step was cancelled.")
UnknownError = _subclass("UnknownError", UNKNOWN, "An unknown error.")
InvalidArgumentError = _subclass(
    "InvalidArgumentError", INVALID_ARGUMENT, "An operation received an invalid argument.")
DeadlineExceededError = _subclass(
    "DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline expired before the operation finished.")
NotFoundError = _subclass("NotFoundError", NOT_FOUND, "A requested entity was not found.")
AlreadyExistsError = _subclass("AlreadyExistsError", ALREADY_EXISTS, "An entity already exists.")
PermissionDeniedError = _subclass(
    "PermissionDeniedError", PERMISSION_DENIED, "The caller may not run the operation.")
ResourceExhaustedError = _subclass(
    "ResourceExhaustedError", RESOURCE_EXHAUSTED, "Some resource (e.g. memory) ran out.")
FailedPreconditionError = _subclass(
    "FailedPreconditionError", FAILED_PRECONDITION,
    "The system is not in a state to run the operation (e.g. an uninitialized variable).")
AbortedError = _subclass("AbortedError", ABORTED, "The operation was aborted.")
OutOfRangeError = _subclass(
    "OutOfRangeError", OUT_OF_RANGE, "Iterated past the valid range (end of a queue or dataset).")
UnimplementedError = _subclass("UnimplementedError", UNIMPLEMENTED, "The operation is not implemented.")
InternalError = _subclass("InternalError", INTERNAL, "An invariant of the system was broken.")
UnavailableError = _subclass("UnavailableError", UNAVAILABLE, "The runtime (e.g. a device) is unavailable.")
DataLossError = _subclass("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption.")
UnauthenticatedError = _subclass("UnauthenticatedError", UNAUTHENTICATED, "Missing credentials.")

_CODE_TO_CLASS = {
    CANCELLED: CancelledError, UNKNOWN: UnknownError, INVALID_ARGUMENT: InvalidArgumentError,
    DEADLINE_EXCEEDED: DeadlineExceededError, NOT_FOUND: NotFoundError,
    ALREADY_EXISTS: AlreadyExistsError, PERMISSION_DENIED: PermissionDeniedError,
    RESOURCE_EXHAUSTED: ResourceExhaustedError, FAILED_PRECONDITION: FailedPreconditionError,
    ABORTED: AbortedError, OUT_OF_RANGE: OutOfRangeError, UNIMPLEMENTED: UnimplementedError,
    INTERNAL: InternalError, UNAVAILABLE: UnavailableError, DATA_LOSS: DataLossError,
    UNAUTHENTICATED: UnauthenticatedError,
}


def exception_type_from_error_code(error_code):
    """Returns the :class:`OpError` subclass for a canonical error code."""
    return _CODE_TO_CLASS[error_code]


def error_code_from_exception_type(cls):
    """Returns the canonical error code of an :class:`OpError` subclass."""
    for code, klass in _CODE_TO_CLASS.items():
        if klass is cls:
            return code
    return UNKNOWN
