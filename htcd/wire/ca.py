"""The pool's certificate authority and the certificates it issues.

As HTCondor 9+ does on a central manager, the CA (``TRUST_DOMAIN_CAFILE`` and its key
``TRUST_DOMAIN_CAKEY``) is created at the first start of a master that runs a collector; it signs
host certificates (``AUTH_SSL_SERVER_CERTFILE``/``_KEYFILE``), which clients check against the CA
(and the host name, unless ``SSL_SKIP_HOST_CHECK``), and optionally client certificates for the
SSL method.  Keys are ECDSA P-256: every TLS library speaks it.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import socket

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from htcd.wire.tokens import TokenError, write_file, write_secret

CA_DAYS = 3650
CERT_DAYS = 825


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def create_ca(cert_path: str, key_path: str, trust_domain: str) -> None:
    """A self-signed CA for the pool ``trust_domain``: certificate 0644, key 0600."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "htcd"),
                      x509.NameAttribute(NameOID.COMMON_NAME, f"htcd pool CA {trust_domain}")])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(_now() - datetime.timedelta(minutes=5))
            .not_valid_after(_now() + datetime.timedelta(days=CA_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False,
                                         encipher_only=False, decipher_only=False), critical=True)
            .sign(key, hashes.SHA256()))
    write_secret(key_path, _key_pem(key))
    write_file(cert_path, cert.public_bytes(serialization.Encoding.PEM), 0o644)


def _load_ca(cert_path: str, key_path: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    try:
        with open(cert_path, "rb") as f:
            cert = x509.load_pem_x509_certificate(f.read())
        with open(key_path, "rb") as f:
            key = serialization.load_pem_private_key(f.read(), None)
    except OSError as exc:
        raise TokenError(f"cannot read the pool CA: {exc.filename}: {exc.strerror}") from None
    except ValueError as exc:
        raise TokenError(f"the pool CA ({cert_path}, {key_path}) is unreadable: {exc}") from None
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise TokenError(f"{key_path} is not an ECDSA key")
    return cert, key


def issue(ca_cert: str, ca_key: str, cert_path: str, key_path: str, common_name: str,
          hosts: list[str] | None = None, client: bool = False, days: int = CERT_DAYS) -> None:
    """A certificate signed by the pool CA: a host certificate for ``hosts`` (names or IP
    addresses, the subject alternative names clients check) or, with ``client``, a client
    certificate whose CN is the identity it maps to."""
    issuer_cert, issuer_key = _load_ca(ca_cert, ca_key)
    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = []
    for h in hosts or []:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            sans.append(x509.DNSName(h))
    builder = (x509.CertificateBuilder()
               .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
               .issuer_name(issuer_cert.subject).public_key(key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(_now() - datetime.timedelta(minutes=5))
               .not_valid_after(_now() + datetime.timedelta(days=days))
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH] if client else
                                                    [ExtendedKeyUsageOID.SERVER_AUTH,
                                                     ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False))
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    cert = builder.sign(issuer_key, hashes.SHA256())
    write_secret(key_path, _key_pem(key))
    write_file(cert_path, cert.public_bytes(serialization.Encoding.PEM), 0o644)


def host_names(full_hostname: str, extra: list[str] | None = None) -> list[str]:
    """What a host certificate should name: the host's names and addresses, and loopback."""
    names = [full_hostname, socket.gethostname(), "localhost", "127.0.0.1", *(extra or [])]
    with contextlib.suppress(OSError):
        names += socket.gethostbyname_ex(socket.gethostname())[2]
    seen: list[str] = []
    for n in names:
        if n and n not in seen:
            seen.append(n)
    return seen


def describe(cert_path: str) -> dict[str, str]:
    """Subject, issuer, validity and names of a certificate (``htcd ca show``)."""
    with open(cert_path, "rb") as f:
        cert = x509.load_pem_x509_certificate(f.read())
    try:
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        names = [str(v) for v in sans.get_values_for_type(x509.DNSName)] + \
                [str(v) for v in sans.get_values_for_type(x509.IPAddress)]
    except x509.ExtensionNotFound:
        names = []
    return {"subject": cert.subject.rfc4514_string(), "issuer": cert.issuer.rfc4514_string(),
            "not_after": cert.not_valid_after_utc.isoformat(), "names": ", ".join(names)}
