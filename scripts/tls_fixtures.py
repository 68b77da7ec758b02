"""Certificates for Errand's TLS integration tests, made fresh for each run (in no system store).

    python tls_fixtures.py DIR

writes into DIR:

- `client.pem`: the run's certificate authority (the name trustme's command line gives it: the
  file clients trust); `server.pem` and `server.key`: its certificate for 127.0.0.1 and
  localhost, served by the main TLS httpbin.
- `other-ca.pem`, `other-server.pem`, `other-server.key`: a second authority and its own
  certificate for the same names (another key), for a server that a client pinned to the first
  server's key must refuse.
- `client-ca.pem`: the authority a mutual-TLS server trusts for client certificates;
  `client-cert.pem` with `client-key.pem` (PEM, encrypted with the passphrase in
  `passphrase.txt`), the same identity as `client.p12` (PKCS#12, same passphrase), and
  `client-key-plain.pem` (the same key, not encrypted); `rogue-cert.pem` and `rogue-key.pem`, a
  client certificate from an authority that server does not trust.
- `server.spki`, `other-server.spki`: each server key's SHA-256 pin (base64 of the SHA-256
  digest of its SubjectPublicKeyInfo), computed here with `cryptography`, independently of
  Errand.
"""

import base64
import hashlib
import pathlib
import sys

import trustme
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

PASSPHRASE = b"errand test passphrase"


def pin(cert_pem: bytes) -> str:
    cert = x509.load_pem_x509_certificate(cert_pem)
    spki = cert.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(hashlib.sha256(spki).digest()).decode()


def server(ca: trustme.CA, directory: pathlib.Path, name: str) -> None:
    issued = ca.issue_cert("127.0.0.1", "localhost")
    issued.private_key_and_cert_chain_pem.write_to_path(str(directory / f"{name}.pem"))
    issued.private_key_pem.write_to_path(str(directory / f"{name}.key"))
    (directory / f"{name}.spki").write_text(pin(issued.cert_chain_pems[0].bytes()) + "\n")


def main() -> None:
    directory = pathlib.Path(sys.argv[1])
    directory.mkdir(parents=True, exist_ok=True)

    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(directory / "client.pem"))
    server(ca, directory, "server")

    other = trustme.CA()
    other.cert_pem.write_to_path(str(directory / "other-ca.pem"))
    server(other, directory, "other-server")

    client_ca = trustme.CA()
    client_ca.cert_pem.write_to_path(str(directory / "client-ca.pem"))
    client = client_ca.issue_cert("client.errand.test")
    cert_pem = client.cert_chain_pems[0].bytes()
    (directory / "client-cert.pem").write_bytes(cert_pem)
    key = serialization.load_pem_private_key(client.private_key_pem.bytes(), password=None)
    (directory / "client-key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(PASSPHRASE),
        )
    )
    client.private_key_pem.write_to_path(str(directory / "client-key-plain.pem"))
    (directory / "client.p12").write_bytes(
        pkcs12.serialize_key_and_certificates(
            b"errand-test-client",
            key,
            x509.load_pem_x509_certificate(cert_pem),
            None,
            serialization.BestAvailableEncryption(PASSPHRASE),
        )
    )
    (directory / "passphrase.txt").write_bytes(PASSPHRASE)

    rogue = trustme.CA().issue_cert("client.errand.test")
    rogue.cert_chain_pems[0].write_to_path(str(directory / "rogue-cert.pem"))
    rogue.private_key_pem.write_to_path(str(directory / "rogue-key.pem"))


if __name__ == "__main__":
    main()
