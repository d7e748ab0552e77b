"""Who may talk to a cluster: an optional shared-secret token and optional TLS.

By default a minitf cluster trusts its network, as TF1's does: servers listen
on plain (insecure) gRPC ports at exactly the addresses of their
``ClusterSpec`` — loopback stays loopback — and accept every call.  A cluster
that spans hosts can add two independent protections:

* a **shared-secret token**: every call carries it as gRPC metadata
  (``minitf-cluster-token``) and every server checks it, in a server
  interceptor, before the call reaches the master or the worker.  A call
  without it fails with ``UNAUTHENTICATED`` (the caller raises
  ``tf.errors.UnauthenticatedError``), one with another token with
  ``PERMISSION_DENIED`` (``tf.errors.PermissionDeniedError``); the server
  keeps serving.  Tokens are compared in constant time.
* **TLS**: servers present a certificate (``add_secure_port``), callers check
  it against a CA (``grpc.secure_channel``).  Traffic is encrypted and a
  caller knows it talks to a task of the cluster.  Without TLS the token
  crosses the network in clear text: use both across untrusted networks.

One :class:`ClusterCredentials` holds both, and the environment of each
process gives it (TF1 has no such knob, so a TF1 script runs unchanged; a
launcher sets the variables per process):

=========================  ====================================================
``MINITF_CLUSTER_TOKEN``   the shared secret (unset or empty: no token)
``MINITF_TLS_CERT``        path of this server's certificate chain (PEM)
``MINITF_TLS_KEY``         path of its private key (PEM); set with the cert
``MINITF_TLS_CA``          path of the CA certificate(s) callers trust (PEM; a
                           self-signed certificate is its own CA).  Set: calls
                           use TLS.  Unset: they use plain gRPC
=========================  ====================================================

A ``tf.train.Server`` reads them when it is created, serves with them and
uses the same credentials for the calls it makes itself (master → worker,
worker → worker ``RecvTensor``); a ``tf.Session("grpc://...")`` reads them
when it connects.  In one process (tests, notebooks) a server can be given
its credentials instead: ``tf.train.Server(cluster, "ps", 0,
credentials=ClusterCredentials(token="s3cret"))`` — a minitf extension.

Example:
    >>> creds = ClusterCredentials(token="s3cret")
    >>> creds
    ClusterCredentials(token=<set>, tls=False)
    >>> creds.call_metadata()
    (('minitf-cluster-token', 's3cret'),)
    >>> ClusterCredentials.from_environment({}).call_metadata()
"""

import hmac
import os

import grpc

#: The gRPC metadata key that carries the token (gRPC keys are lower case).
TOKEN_METADATA_KEY = "minitf-cluster-token"

#: The environment variables :meth:`ClusterCredentials.from_environment` reads.
TOKEN_ENV = "MINITF_CLUSTER_TOKEN"
CERT_ENV = "MINITF_TLS_CERT"
KEY_ENV = "MINITF_TLS_KEY"
CA_ENV = "MINITF_TLS_CA"


class ClusterCredentials:
    """The token and TLS material of one process's servers and calls.

    Args:
        token: the cluster's shared secret (a str), or None for none.
        certificate_chain: this server's certificate chain, PEM bytes (serving
            with TLS needs it and ``private_key``).
        private_key: the certificate's private key, PEM bytes.
        root_certificates: PEM bytes of the CA(s) a caller trusts; given, the
            calls use TLS.

    Raises:
        ValueError: if only one of ``certificate_chain`` and ``private_key`` is
            given, or the token is not printable ASCII.
    """

    def __init__(self, token=None, certificate_chain=None, private_key=None,
                 root_certificates=None):
        if (certificate_chain is None) != (private_key is None):
            raise ValueError("A TLS certificate needs its private key, and the other way "
                             "round: give both (%s and %s) or neither" % (CERT_ENV, KEY_ENV))
        if token and not (token.isascii() and token.isprintable()):
            raise ValueError("A cluster token must be printable ASCII (it travels as gRPC "
                             "metadata)")
        self.token = token or None
        self.certificate_chain = certificate_chain
        self.private_key = private_key
        self.root_certificates = root_certificates

    @classmethod
    def from_environment(cls, environ=None):
        """The credentials ``MINITF_CLUSTER_TOKEN`` and ``MINITF_TLS_*`` describe.

        Args:
            environ: a mapping to read instead of ``os.environ``.

        Raises:
            ValueError: if a TLS file cannot be read, or only one of the
                certificate and its key is set.
        """
        environ = os.environ if environ is None else environ
        return cls(token=environ.get(TOKEN_ENV) or None,
                   certificate_chain=_read_pem(environ, CERT_ENV),
                   private_key=_read_pem(environ, KEY_ENV),
                   root_certificates=_read_pem(environ, CA_ENV))

    def __repr__(self):
        return "ClusterCredentials(token=%s, tls=%s)" % (
            "<set>" if self.token else None, self.serves_tls or self.calls_tls)

    @property
    def serves_tls(self):
        """Whether a server with these credentials listens with TLS."""
        return self.certificate_chain is not None

    @property
    def calls_tls(self):
        """Whether calls made with these credentials use TLS."""
        return self.root_certificates is not None

    # ---- the server's side -----------------------------------------------------------
    def add_port(self, server, address):
        """Makes the gRPC ``server`` listen at ``address``; returns the bound port.

        With a certificate the port speaks TLS (``add_secure_port``), else
        plain gRPC (``add_insecure_port``).
        """
        if not self.serves_tls:
            return server.add_insecure_port(address)
        tls = grpc.ssl_server_credentials([(self.private_key, self.certificate_chain)])
        return server.add_secure_port(address, tls)

    def server_interceptors(self):
        """The interceptors a server needs: a :class:`TokenChecker`, or none."""
        return [TokenChecker(self.token)] if self.token else []

    # ---- the caller's side -----------------------------------------------------------
    def channel(self, address, options):
        """A gRPC channel to ``address`` (TLS when a CA is given)."""
        if not self.calls_tls:
            return grpc.insecure_channel(address, options=options)
        tls = grpc.ssl_channel_credentials(root_certificates=self.root_certificates)
        return grpc.secure_channel(address, tls, options=options)

    def call_metadata(self):
        """The metadata every call sends: the token, or None."""
        return ((TOKEN_METADATA_KEY, self.token),) if self.token else None


class TokenChecker(grpc.ServerInterceptor):
    """Rejects every call that does not carry the cluster's token.

    A call without the ``minitf-cluster-token`` metadata is answered with
    ``UNAUTHENTICATED``, one with a different token with ``PERMISSION_DENIED``;
    neither reaches a service, and the server goes on serving.  The check
    runs before the request message is handed to any handler.

    Args:
        token: the expected token (a non-empty str).
    """

    def __init__(self, token):
        self._expected = token.encode()

    def intercept_service(self, continuation, handler_call_details):
        handler = continuation(handler_call_details)
        if handler is None:  # an unknown method: gRPC answers UNIMPLEMENTED
            return None
        sent = [value for key, value in handler_call_details.invocation_metadata or ()
                if key == TOKEN_METADATA_KEY]
        if not sent:
            return _rejecting(handler, grpc.StatusCode.UNAUTHENTICATED,
                              "the call carries no cluster token (set %s in the caller's "
                              "environment)" % TOKEN_ENV)
        value = sent[0] if isinstance(sent[0], bytes) else sent[0].encode()
        if not hmac.compare_digest(value, self._expected):  # constant time
            return _rejecting(handler, grpc.StatusCode.PERMISSION_DENIED,
                              "the call's cluster token is not this cluster's (%s)" % TOKEN_ENV)
        return handler


def _rejecting(handler, code, details):
    """A handler of ``handler``'s kind that fails every call with ``code``."""
    def reject(request, context):
        del request
        context.abort(code, details)

    if handler.request_streaming and handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(reject)
    if handler.request_streaming:
        return grpc.stream_unary_rpc_method_handler(reject)
    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(reject)
    return grpc.unary_unary_rpc_method_handler(reject)


def _read_pem(environ, name):
    path = environ.get(name)
    if not path:
        return None
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as error:
        raise ValueError("%s=%s cannot be read: %s" % (name, path, error)) from None
