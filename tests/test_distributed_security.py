"""Who may talk to a cluster: the shared-secret token, TLS, and where servers listen.

Every server here listens on 127.0.0.1 at a free port, in this process.  A
server's credentials are given explicitly (``Server(..., credentials=...)``);
a client session reads its own from the environment
(``MINITF_CLUSTER_TOKEN``, ``MINITF_TLS_CA``), which each test sets with
``monkeypatch``.  Expectations (the issue's "Security" section): a call
without the token fails with ``UnauthenticatedError``, one with another token
with ``PermissionDeniedError``, and the server goes on serving the clients
that have it; with TLS, a caller that trusts the server's certificate gets
through and one speaking plain gRPC does not.  The TLS certificate is
self-signed, made by the ``openssl`` program (the ``cryptography`` package
is not a test dependency); without it those tests skip and say why.
"""

import ipaddress
import shutil
import socket
import subprocess

import numpy as np
import pytest

pytest.importorskip("grpc", reason="the distributed runtime needs grpcio (minitf[distributed])")
pytest.importorskip("tensorboard.compat.proto.cluster_pb2",
                    reason="the distributed runtime needs TF's protos (minitf[distributed])")

import minitf as tf  # noqa: E402
from minitf.distributed import master, security  # noqa: E402
from minitf.distributed.rpc import Stub  # noqa: E402
from minitf.distributed.security import ClusterCredentials  # noqa: E402

TOKEN = "s3cret-cluster-token"
ENVIRONMENT = (security.TOKEN_ENV, security.CERT_ENV, security.KEY_ENV, security.CA_ENV)


@pytest.fixture(autouse=True)
def plain_environment(monkeypatch):
    """No MINITF_* variable leaks in from the shell running the tests."""
    for name in ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def start_servers():
    """``start_servers(credentials_of_task)`` -> [Server], all stopped after the test.

    The cluster is ``ps`` (one task) and ``worker`` (one task) on 127.0.0.1;
    ``credentials_of_task`` maps ``"ps"``/``"worker"`` to each task's credentials.
    """
    servers = []

    def start(credentials_of_task):
        cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:%d" % free_port()],
                                        "worker": ["127.0.0.1:%d" % free_port()]})
        for job in ("ps", "worker"):
            servers.append(tf.train.Server(cluster, job, 0,
                                           credentials=credentials_of_task[job]))
        return servers

    yield start
    for server in servers:
        server.stop()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_across_tasks(target):
    """A step spanning both tasks: client → master, master → worker (RunGraph),
    worker → worker (RecvTensor).  Returns the fetched value."""
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            w = tf.Variable(np.full((2, 2), 3.0, np.float32), name="w")
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [None, 2], name="x")
            y = tf.reduce_sum(tf.matmul(x, w))
        with tf.Session(target) as sess:
            sess.run(w.initializer)
            return sess.run(y, {x: np.ones((1, 2), np.float32)})


# ---- the token -------------------------------------------------------------------------
def test_a_call_with_the_token_is_served(start_servers, monkeypatch):
    creds = ClusterCredentials(token=TOKEN)
    _, worker = start_servers({"ps": creds, "worker": creds})
    monkeypatch.setenv(security.TOKEN_ENV, TOKEN)
    assert run_across_tasks(worker.target) == 12.0


def test_a_call_without_a_token_is_unauthenticated_and_the_server_serves_on(
        start_servers, monkeypatch):
    creds = ClusterCredentials(token=TOKEN)
    _, worker = start_servers({"ps": creds, "worker": creds})
    with pytest.raises(tf.errors.UnauthenticatedError, match="MINITF_CLUSTER_TOKEN"):
        run_across_tasks(worker.target)
    monkeypatch.setenv(security.TOKEN_ENV, TOKEN)
    assert run_across_tasks(worker.target) == 12.0


def test_a_wrong_token_is_permission_denied_and_the_server_serves_on(
        start_servers, monkeypatch):
    creds = ClusterCredentials(token=TOKEN)
    _, worker = start_servers({"ps": creds, "worker": creds})
    for wrong in ("not-the-token", TOKEN[:-1], TOKEN + "x"):
        monkeypatch.setenv(security.TOKEN_ENV, wrong)
        with pytest.raises(tf.errors.PermissionDeniedError, match="not this cluster's"):
            run_across_tasks(worker.target)
    monkeypatch.setenv(security.TOKEN_ENV, TOKEN)
    assert run_across_tasks(worker.target) == 12.0


def test_every_method_of_both_services_is_checked(start_servers):
    creds = ClusterCredentials(token=TOKEN)
    _, worker = start_servers({"ps": creds, "worker": creds})
    methods = {master.SERVICE: ["CreateSession", "RunStep", "ListDevices", "Reset"],
               "minitf.WorkerService": ["GetStatus", "RegisterGraph", "RunGraph",
                                        "RecvTensor", "CleanupGraph", "Reset"]}
    for service, names in methods.items():
        stub = Stub(worker.address, service, credentials=ClusterCredentials())
        try:
            for name in names:
                with pytest.raises(tf.errors.UnauthenticatedError):
                    stub.call(name, {}, timeout=10.0)
        finally:
            stub.close()


def test_a_task_with_another_token_is_refused_by_the_others(start_servers, monkeypatch):
    # The worker's master calls the ps task with the worker's (wrong) token.
    _, worker = start_servers({"ps": ClusterCredentials(token=TOKEN),
                               "worker": ClusterCredentials(token="another")})
    monkeypatch.setenv(security.TOKEN_ENV, "another")
    with pytest.raises(tf.errors.PermissionDeniedError):
        run_across_tasks(worker.target)


def test_servers_and_sessions_read_the_token_from_the_environment(start_servers, monkeypatch):
    monkeypatch.setenv(security.TOKEN_ENV, TOKEN)
    _, worker = start_servers({"ps": None, "worker": None})
    assert run_across_tasks(worker.target) == 12.0
    monkeypatch.delenv(security.TOKEN_ENV)
    with pytest.raises(tf.errors.UnauthenticatedError):
        run_across_tasks(worker.target)


def test_without_credentials_nothing_is_checked(start_servers):
    _, worker = start_servers({"ps": None, "worker": None})
    assert run_across_tasks(worker.target) == 12.0


def test_tokens_are_compared_in_constant_time(monkeypatch):
    compared = []

    def compare_digest(a, b):
        compared.append((a, b))
        return a == b
    monkeypatch.setattr(security.hmac, "compare_digest", compare_digest)
    checker = security.TokenChecker(TOKEN)
    details = type("Details", (), {"invocation_metadata": ((security.TOKEN_METADATA_KEY,
                                                             "guess"),),
                                   "method": "/minitf.MasterService/ListDevices"})()
    handler = security.grpc.unary_unary_rpc_method_handler(lambda request, context: b"")
    assert checker.intercept_service(lambda d: handler, details) is not handler
    assert compared == [(b"guess", TOKEN.encode())]


@pytest.mark.parametrize("token", ["tab\tinside", "naïve"])
def test_a_token_must_be_printable_ascii(token):
    with pytest.raises(ValueError, match="printable ASCII"):
        ClusterCredentials(token=token)


# ---- the environment -------------------------------------------------------------------
def test_no_variables_mean_no_token_and_no_tls():
    creds = ClusterCredentials.from_environment({})
    assert creds.token is None and not creds.serves_tls and not creds.calls_tls
    assert creds.call_metadata() is None and creds.server_interceptors() == []


def test_tls_files_are_read_from_the_paths_given(tmp_path):
    for name in ("cert", "key", "ca"):
        (tmp_path / name).write_bytes(b"PEM " + name.encode())
    creds = ClusterCredentials.from_environment({
        security.TOKEN_ENV: TOKEN, security.CERT_ENV: str(tmp_path / "cert"),
        security.KEY_ENV: str(tmp_path / "key"), security.CA_ENV: str(tmp_path / "ca")})
    assert (creds.token, creds.certificate_chain, creds.private_key, creds.root_certificates) \
        == (TOKEN, b"PEM cert", b"PEM key", b"PEM ca")
    assert TOKEN not in repr(creds)


def test_a_certificate_without_its_key_is_refused(tmp_path):
    (tmp_path / "cert").write_bytes(b"PEM")
    with pytest.raises(ValueError, match="MINITF_TLS_KEY"):
        ClusterCredentials.from_environment({security.CERT_ENV: str(tmp_path / "cert")})


def test_an_unreadable_tls_file_is_named(tmp_path):
    missing = str(tmp_path / "nowhere.pem")
    with pytest.raises(ValueError, match="MINITF_TLS_CA=.*nowhere.pem"):
        ClusterCredentials.from_environment({security.CA_ENV: missing})


# ---- TLS -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1 and localhost: (cert path, key path)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("TLS tests need the `openssl` program to make a self-signed certificate "
                    "(apt-get install openssl)")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    made = subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-days", "2", "-subj", "/CN=localhost", "-keyout", str(key), "-out", str(cert),
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
        capture_output=True, text=True, timeout=60)
    if made.returncode != 0:
        pytest.skip("openssl could not make a self-signed certificate: %s" % made.stderr[-500:])
    return cert, key


def tls_credentials(certificate, token=None):
    cert, key = certificate
    return ClusterCredentials(token=token, certificate_chain=cert.read_bytes(),
                              private_key=key.read_bytes(), root_certificates=cert.read_bytes())


def test_tls_cluster_serves_callers_that_trust_its_certificate(start_servers, certificate,
                                                               monkeypatch):
    creds = tls_credentials(certificate, token=TOKEN)
    _, worker = start_servers({"ps": creds, "worker": creds})
    monkeypatch.setenv(security.CA_ENV, str(certificate[0]))
    monkeypatch.setenv(security.TOKEN_ENV, TOKEN)
    assert run_across_tasks(worker.target) == 12.0
    monkeypatch.delenv(security.TOKEN_ENV)  # TLS does not replace the token
    with pytest.raises(tf.errors.UnauthenticatedError):
        run_across_tasks(worker.target)


def test_tls_from_the_environment(start_servers, certificate, monkeypatch):
    cert, key = certificate
    monkeypatch.setenv(security.CERT_ENV, str(cert))
    monkeypatch.setenv(security.KEY_ENV, str(key))
    monkeypatch.setenv(security.CA_ENV, str(cert))
    _, worker = start_servers({"ps": None, "worker": None})
    assert run_across_tasks(worker.target) == 12.0


def test_a_plain_caller_cannot_reach_a_tls_server(start_servers, certificate):
    creds = tls_credentials(certificate)
    _, worker = start_servers({"ps": creds, "worker": creds})
    stub = Stub(worker.address, master.SERVICE, credentials=ClusterCredentials())
    try:
        with pytest.raises((tf.errors.UnavailableError, tf.errors.DeadlineExceededError)):
            stub.call("ListDevices", timeout=10.0)
    finally:
        stub.close()


def test_a_tls_caller_cannot_reach_a_plain_server(start_servers, certificate):
    _, worker = start_servers({"ps": None, "worker": None})
    stub = Stub(worker.address, master.SERVICE,
                credentials=ClusterCredentials(root_certificates=certificate[0].read_bytes()))
    try:
        with pytest.raises((tf.errors.UnavailableError, tf.errors.DeadlineExceededError)):
            stub.call("ListDevices", timeout=10.0)
    finally:
        stub.close()


# ---- where servers listen --------------------------------------------------------------
def test_a_server_listens_only_at_its_address(start_servers):
    ps, worker = start_servers({"ps": None, "worker": None})
    for server in (ps, worker):
        host, port = server.address.rsplit(":", 1)
        assert host == "127.0.0.1" and server.target == "grpc://" + server.address
        listening = _listening_addresses(int(port))
        if listening is None:
            pytest.skip("/proc/net/tcp is not readable here: cannot list listening sockets")
        assert listening == {"127.0.0.1"}, "port %s listens on %s" % (port, listening)
    other = _non_loopback_address()
    if other is not None:  # and a connection to another interface is refused
        with pytest.raises(OSError):
            socket.create_connection((other, int(worker.address.rsplit(":", 1)[1])),
                                     timeout=2.0).close()


def _listening_addresses(port):
    """The local IPv4/IPv6 addresses with a socket listening on ``port`` (Linux)."""
    found = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            if table.endswith("tcp"):
                return None
            continue
        for row in rows:
            local, state = row.split()[1], row.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.add(_proc_address(address, width))
    return found


def _proc_address(hex_address, width):
    """An address of /proc/net/tcp{,6} (little-endian 32-bit words) as text."""
    raw = b"".join(bytes.fromhex(hex_address[i:i + 8])[::-1] for i in range(0, width, 8))
    address = ipaddress.ip_address(raw)
    mapped = getattr(address, "ipv4_mapped", None)  # gRPC listens on ::ffff:127.0.0.1
    return str(mapped or address)


def _non_loopback_address():
    """This host's IPv4 address on its default route, or None (no packet is sent)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed anywhere real
            address = s.getsockname()[0]
    except OSError:
        return None
    return None if address.startswith("127.") else address
