"""A throwaway certificate authority and a server certificate for Google's API hosts.

The fake Google presents a certificate for the real host names, signed by this CA; a client trusts
it only when SSL_CERT_FILE names the CA — exactly as a company's inspecting proxy works.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

GOOGLE_HOSTS = (
    "searchconsole.googleapis.com",
    "www.googleapis.com",
    "indexing.googleapis.com",
    "oauth2.googleapis.com",
)


@dataclass(frozen=True)
class Pki:
    ca_pem: Path  # give this to SSL_CERT_FILE
    cert_pem: Path  # server chain (leaf then CA)
    key_pem: Path


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def make_pki(folder: Path, label: str = "SearchDesk test CA", hosts: tuple[str, ...] = GOOGLE_HOSTS) -> Pki:
    """Write a CA and a leaf for ``hosts`` (plus 127.0.0.1) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    start, end = now - datetime.timedelta(days=1), now + datetime.timedelta(days=30)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(_name(label))
        .issuer_name(_name(label))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    leaf_key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [x509.DNSName(h) for h in hosts]
    names.append(x509.IPAddress(ipaddress.ip_address("127.0.0.1")))
    leaf = (
        x509.CertificateBuilder()
        .subject_name(_name(hosts[0]))
        .issuer_name(ca_cert.subject)
        .public_key(leaf_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    ca_path = folder / "ca.pem"
    cert_path = folder / "server.pem"
    key_path = folder / "server-key.pem"
    ca_bytes = ca_cert.public_bytes(serialization.Encoding.PEM)
    ca_path.write_bytes(ca_bytes)
    cert_path.write_bytes(leaf.public_bytes(serialization.Encoding.PEM) + ca_bytes)
    key_path.write_bytes(_pem(leaf_key))
    key_path.chmod(0o600)
    return Pki(ca_pem=ca_path, cert_pem=cert_path, key_pem=key_path)


def make_service_account_key() -> tuple[str, str]:
    """An RSA key as a service-account key file holds it: (private PKCS#8 PEM, public PEM)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public
