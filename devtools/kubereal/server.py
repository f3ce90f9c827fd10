"""Start etcd and kube-apiserver from `KUBEBUILDER_ASSETS` on free ports of 127.0.0.1, with their own
certificates, two users (an admin in `system:masters`, `kubewhy` in no group) and an audit log, and
the upstream CRDs of `crds/` Established."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from devtools.botenv import free_port
from devtools.kubereal.api import Api, ApiError

ASSETS = "KUBEBUILDER_ASSETS"
CRDS = Path(__file__).with_name("crds")
APISERVER = "kube-apiserver"
BINARIES = ("etcd", APISERVER)
READY_SECONDS = 120.0
"""How long the server may take to answer /readyz with every CRD Established: 3–25 s on two busy
cores; a server not ready by then is broken, not slow."""

_NOT_ADMITTED = "ServiceAccount,DefaultTolerationSeconds,TaintNodesByCondition,DefaultStorageClass"
_OLDER_APIS = "resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true"
"""DRA's beta versions, which 1.34 no longer serves by default: the corpus holds clusters of 1.32 and
1.33 too, whose objects are read in those versions."""
_GATES = "DRADeviceTaints=true"
"""Alpha in 1.34: without it the server drops the device taints that the corpus's DRA clusters set."""
_AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [
        {"level": "None", "users": ["admin", "system:apiserver"]},
        {"level": "None", "userGroups": ["system:masters"]},
        {"level": "None", "nonResourceURLs": ["/readyz*", "/healthz*", "/livez*"]},
        {"level": "Metadata"},
    ],
}


def missing() -> str | None:
    """Why the real API server cannot run here, or None when it can."""
    folder = os.environ.get(ASSETS)
    if not folder:
        return f"{ASSETS} is not set: no real kube-apiserver and etcd to test against (.ci/run sets it)"
    absent = [b for b in BINARIES if not os.access(Path(folder) / b, os.X_OK)]
    if absent:
        return f"{ASSETS}={folder} has no executable {' or '.join(absent)}"
    if shutil.which("openssl") is None:
        return "openssl is not installed: the real API server's certificates cannot be made"
    return None


@dataclass
class Server:
    """A running API server: its URL, its CA and the admin's connection."""

    folder: Path
    url: str
    ca: Path
    admin_token: str
    kubewhy_token: str
    etcd_url: str = ""
    admin: Api = field(init=False)
    _processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    _argv: dict[str, list[str]] = field(default_factory=dict)
    _stack: ExitStack = field(default_factory=ExitStack)

    def __post_init__(self) -> None:
        self.admin = Api(self.url, self.ca, self.admin_token)

    @property
    def admin_kubeconfig(self) -> Path:
        return self.kubeconfig("admin", self.admin_token)

    @property
    def audit_log(self) -> Path:
        return self.folder / "audit.log"

    def restart(self) -> None:
        """Stop kube-apiserver and start it again on the same port, over the same etcd (its objects,
        and their resourceVersions, stay); back when it answers /readyz."""
        _stop(self._processes[APISERVER])
        self._launch(APISERVER, self._argv[APISERVER])
        _wait_ready(self)

    def compact(self) -> int:
        """Compact etcd's history up to its current revision (through etcd's own HTTP gateway): a
        watch from any resourceVersion before it can no longer be resumed (410 Gone). Returns the
        revision."""
        with urllib.request.urlopen(f"{self.etcd_url}/v3/kv/range", b'{"key": "AA=="}', 30) as answer:
            revision = int(json.load(answer)["header"]["revision"])
        compaction = json.dumps({"revision": revision, "physical": True}).encode()
        with urllib.request.urlopen(f"{self.etcd_url}/v3/kv/compaction", compaction, 30):
            return revision

    def _launch(self, name: str, argv: list[str]) -> None:
        self._argv[name] = argv
        self._processes[name] = _start(self._stack, self.folder, name, argv)

    def kubeconfig(self, user: str, token: str, context: str | None = None) -> Path:
        """A kubeconfig file for `user` with `token`, its one context named `context` (default
        `USER@kube-real`), current."""
        context = context or f"{user}@kube-real"
        path = self.folder / f"{context}.kubeconfig"
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": "kube-real", "cluster": {"server": self.url, "certificate-authority": str(self.ca)}}
            ],
            "users": [{"name": user, "user": {"token": token}}],
            "contexts": [{"name": context, "context": {"cluster": "kube-real", "user": user}}],
            "current-context": context,
        }
        path.write_text(yaml.safe_dump(config))
        return path


@contextmanager
def serve(flags: Sequence[str] = ()) -> Iterator[Server]:
    """A fresh etcd and kube-apiserver for the block, stopped and removed after it; `flags` are added
    to kube-apiserver's (`--watch-cache-sizes=nodes#0`, say)."""
    reason = missing()
    if reason is not None:
        raise RuntimeError(reason)
    assets = Path(os.environ[ASSETS])
    with tempfile.TemporaryDirectory(prefix="kube-real-") as tmp, ExitStack() as stack:
        folder = Path(tmp)
        ca = _certificates(folder)
        etcd = free_port()
        server = Server(
            folder, f"https://127.0.0.1:{free_port()}", ca, *_tokens(folder), f"http://127.0.0.1:{etcd}"
        )
        stack.enter_context(server._stack)
        stack.callback(server.admin.close)
        server._launch("etcd", _etcd(assets, folder, etcd))
        server._launch(APISERVER, [*_apiserver(assets, folder, server.url, etcd), *flags])
        _wait_ready(server)
        _create_crds(server)
        yield server


def _certificates(folder: Path) -> Path:
    """A CA, the serving certificate for 127.0.0.1 and localhost, and the service-account key pair."""

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True, timeout=60)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-subj", "/CN=kube-real-ca",
            "-keyout", "ca.key", "-out", "ca.crt")  # fmt: skip
    (folder / "san.cnf").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"
    )
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=kube-apiserver",
            "-keyout", "apiserver.key", "-out", "apiserver.csr")  # fmt: skip
    openssl("x509", "-req", "-in", "apiserver.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "30", "-extfile", "san.cnf", "-out", "apiserver.crt")  # fmt: skip
    openssl("genrsa", "-out", "sa.key", "2048")
    openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub")
    return folder / "ca.crt"


def _tokens(folder: Path) -> tuple[str, str]:
    admin, kubewhy = secrets.token_hex(24), secrets.token_hex(24)
    path = folder / "tokens.csv"
    path.write_text(f'{admin},admin,admin-uid,"system:masters"\n{kubewhy},kubewhy,kubewhy-uid\n')
    path.chmod(0o600)
    return admin, kubewhy


def _etcd(assets: Path, folder: Path, port: int) -> list[str]:
    peer = free_port()
    return [
        str(assets / "etcd"),
        "--data-dir", str(folder / "etcd"),
        "--listen-client-urls", f"http://127.0.0.1:{port}",
        "--advertise-client-urls", f"http://127.0.0.1:{port}",
        "--listen-peer-urls", f"http://127.0.0.1:{peer}",
        "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
        "--initial-cluster", f"default=http://127.0.0.1:{peer}",
        "--unsafe-no-fsync", "--log-level", "warn",
        # etcd tells its watchers the newest revision every second (default: 10 minutes), so that the
        # API server's watch cache moves on, and its bookmarks with it, while nothing it holds changes.
        "--experimental-watch-progress-notify-interval", "1s",
    ]  # fmt: skip


def _apiserver(assets: Path, folder: Path, url: str, etcd: int) -> list[str]:
    (folder / "audit-policy.yaml").write_text(yaml.safe_dump(_AUDIT_POLICY))
    return [
        str(assets / "kube-apiserver"),
        "--etcd-servers", f"http://127.0.0.1:{etcd}",
        "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
        "--secure-port", url.rsplit(":", 1)[1],
        "--cert-dir", str(folder),
        "--tls-cert-file", str(folder / "apiserver.crt"),
        "--tls-private-key-file", str(folder / "apiserver.key"),
        "--client-ca-file", str(folder / "ca.crt"),
        "--token-auth-file", str(folder / "tokens.csv"),
        "--authorization-mode", "Node,RBAC",
        "--service-account-key-file", str(folder / "sa.pub"),
        "--service-account-signing-key-file", str(folder / "sa.key"),
        "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
        "--service-cluster-ip-range", "10.96.0.0/16",
        "--disable-admission-plugins", _NOT_ADMITTED,
        "--runtime-config", _OLDER_APIS,
        "--feature-gates", _GATES,
        "--endpoint-reconciler-type", "none",
        "--audit-policy-file", str(folder / "audit-policy.yaml"),
        "--audit-log-path", str(folder / "audit.log"),
        "--audit-log-mode", "blocking", "--audit-log-format", "json",
        "--profiling=false",
    ]  # fmt: skip


def _start(stack: ExitStack, folder: Path, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
    log = stack.enter_context((folder / f"{name}.log").open("ab"))
    process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=folder)
    stack.callback(_stop, process)
    return process


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _wait_ready(server: Server) -> None:
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        for name, process in server._processes.items():
            if process.poll() is not None:
                log = (server.folder / f"{name}.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"{name} exited with {process.returncode}:\n{log}")
        if server.admin.ready():
            return
        time.sleep(0.1)  # a server starting up: nothing to wait on but its answer
    raise RuntimeError(f"kube-apiserver not ready after {READY_SECONDS:.0f} s")


def _create_crds(server: Server) -> None:
    names = []
    for path in sorted(CRDS.glob("*.yaml")):
        for crd in yaml.safe_load_all(path.read_text()):
            if crd:
                server.admin.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
                names.append(crd["metadata"]["name"])
    deadline = time.monotonic() + READY_SECONDS
    for crd_name in names:
        while not _established(server.admin, crd_name) or not _discovered(server.admin, crd_name):
            if time.monotonic() > deadline:
                raise RuntimeError(f"CRD {crd_name} not Established after {READY_SECONDS:.0f} s")
            time.sleep(0.05)  # the server's CRD controller sets the condition; polled
    server.admin.forget_discovery()


def _discovered(api: Api, crd: str) -> bool:
    """The CRD's resource is in discovery: what kubectl and the loader look it up by."""
    plural, group = crd.split(".", 1)
    api.forget_discovery()
    try:
        found = api.call("GET", f"/apis/{group}")["preferredVersion"]["groupVersion"]
    except ApiError:
        return False
    return any(r.plural == plural for r in api.resources(found).values())


def _established(api: Api, crd: str) -> bool:
    got = api.call("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}")
    conditions = got.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)
