"""A local certificate authority and the cockpit's server certificate (``freelook certs new``).

A phone's browser offers the Gamepad API and WebXR only to a secure page, and a page served
off loopback is secure only over HTTPS with a certificate the phone trusts. A public CA cannot
sign for a robot's LAN address, so freelook makes a CA of its own: the operator installs its
certificate on the phone once, and each server certificate it signs is trusted from then on.

Both keys are ECDSA P-256 (what phones and browsers take everywhere). The CA is a root for
server certificates only (path length 0, signing certificates and CRLs); the server
certificate names every host and address it will be reached by (subject alternative names:
browsers read only those), is for TLS servers only, and lasts 397 days by default: Apple's
platforms refuse a server certificate valid for longer than 825 days even under a root the
user installed, and browsers' limit for public ones is 398.
"""

from __future__ import annotations

import datetime
import ipaddress
import socket
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # cryptography loads when a certificate is made
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec

__all__ = ["CertificateSet", "default_hosts", "make_certificates"]

#: days the CA is valid (its certificate is installed on each phone once)
CA_DAYS = 3650
#: days the server certificate is valid by default (under Apple's 825 and browsers' 398)
SERVER_DAYS = 397


class CertificateSet(NamedTuple):
    """The four PEM files: the CA's certificate (for the phones) and key, the server's
    certificate (followed by the CA's: the chain a TLS server sends) and key."""

    ca_cert: bytes
    ca_key: bytes
    server_cert: bytes
    server_key: bytes


def default_hosts() -> list[str]:
    """localhost, 127.0.0.1 and this machine's host name (what a phone on the LAN may use)."""
    hosts = ["localhost", "127.0.0.1"]
    name = socket.gethostname()
    if name and name not in hosts:
        hosts.append(name)
    return hosts


def _names(hosts: list[str]) -> list[x509.GeneralName]:
    """Each host as a subject alternative name: an IP address as one, else a DNS name."""
    from cryptography import x509

    names: list[x509.GeneralName] = []
    for host in hosts:
        text = host.strip().strip("[]")
        if not text:
            raise ValueError("an empty host name")
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(text)))
        except ValueError:
            if any(c.isspace() or c in "/\\@:" for c in text):
                raise ValueError(f"{host!r} is neither a host name nor an IP address") from None
            names.append(x509.DNSName(text.lower()))
    return names


def _key_usage(*, ca: bool) -> x509.KeyUsage:
    from cryptography import x509

    return x509.KeyUsage(
        digital_signature=True, content_commitment=False, key_encipherment=False,
        data_encipherment=False, key_agreement=False, key_cert_sign=ca, crl_sign=ca,
        encipher_only=False, decipher_only=False,
    )  # fmt: skip


def make_certificates(
    hosts: list[str],
    *,
    ca_name: str = "freelook local CA",
    days: int = SERVER_DAYS,
    now: datetime.datetime | None = None,
) -> CertificateSet:
    """A new CA and a server certificate it signs for ``hosts`` (names or IP addresses),
    valid from ``now`` (UTC; default: the current time) for ``days``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    if not hosts:
        raise ValueError("no host to certify")
    if not 1 <= days <= 825:
        raise ValueError(f"{days} days: a server certificate lasts 1…825 days (Apple's limit)")
    names = _names(hosts)
    start = (now or datetime.datetime.now(datetime.UTC)) - datetime.timedelta(minutes=5)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    server_key = ec.generate_private_key(ec.SECP256R1())
    ca_subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, ca_name)])
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_subject)
        .issuer_name(ca_subject)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + datetime.timedelta(days=CA_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(ca=True), critical=True)
        .add_extension(ca_ski, critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    common = hosts[0].strip().strip("[]")
    server = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)]))
        .issuer_name(ca_subject)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(ca=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(server_key.public_key()), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    ca_pem = ca.public_bytes(serialization.Encoding.PEM)
    return CertificateSet(
        ca_pem,
        _key_pem(ca_key),
        server.public_bytes(serialization.Encoding.PEM) + ca_pem,
        _key_pem(server_key),
    )


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
