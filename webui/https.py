"""`serve --https`: a self-signed certificate for this machine, so that a phone's browser gives the /camera page
its camera (browsers give a camera only to a secure page: https, or http on the device's own loopback).

The certificate is made once and kept in the setup folder (`https/`), then reused while it still covers this
machine's names and addresses and has a month left; otherwise a new one is made (the phone then warns once
more). Its names: the loopback names, this machine's host name, "<name>.local" and fully qualified name, every
--allow-host, and every address of this machine's network interfaces. The private key is written readable by
its owner only. The phone's address and its QR code (`segno`) are made here too.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import os
import socket
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path

from calibration.errors import InputError

CERT_FILE = "tablesight-cert.pem"
KEY_FILE = "tablesight-key.pem"
VALID_DAYS = 397
"""How long a certificate made here is valid (the longest any browser accepts for a server certificate)."""
RENEW_DAYS = 30
"""A certificate with fewer days left than this is made again."""
_SIOCGIFADDR = 0x8915


class CertificateError(InputError):
    """The certificate cannot be made, kept or read (a folder that cannot be written, a damaged file)."""


@dataclass(frozen=True)
class ServerCertificate:
    """The certificate `serve --https` uses: its files, SHA-256 fingerprint ("AB:CD:..."), the names and
    addresses it covers, and whether it was made just now (False: reused from an earlier start)."""

    cert_file: Path
    key_file: Path
    sha256: str
    dns_names: tuple[str, ...]
    ip_addresses: tuple[str, ...]
    made: bool


def _interface_addresses() -> set[str]:
    """The IPv4 address of each network interface (Linux ioctl; nothing where that is not available)."""
    found: set[str] = set()
    try:
        import fcntl  # not on Windows: there the host name's addresses are all we know

        names = [name for _i, name in socket.if_nameindex()]
    except (ImportError, OSError):
        return found
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for name in names:
            try:
                packed = fcntl.ioctl(s.fileno(), _SIOCGIFADDR, struct.pack("256s", name.encode()[:15]))
            except OSError:
                continue  # an interface without an IPv4 address
            found.add(socket.inet_ntoa(packed[20:24]))
    return found


def machine_addresses() -> tuple[str, ...]:
    """This machine's IP addresses: interfaces and what its host name resolves to, loopback included."""
    found = _interface_addresses() | {"127.0.0.1", "::1"}
    with contextlib.suppress(OSError, UnicodeError):
        for info in socket.getaddrinfo(socket.gethostname(), None):
            found.add(str(info[4][0]).split("%")[0])
    out = []
    for a in found:
        try:
            ip = ipaddress.ip_address(a)
        except ValueError:
            continue
        if not (ip.is_link_local or ip.is_unspecified or ip.is_multicast):
            out.append(str(ip))
    return tuple(sorted(out, key=_address_rank))


def _address_rank(address: str) -> tuple[int, str]:
    """LAN IPv4 first (what a phone on the same Wi-Fi reaches), then other IPv4, IPv6, loopback last."""
    ip = ipaddress.ip_address(address)
    if ip.is_loopback:
        return 3, address
    if ip.version == 6:
        return 2, address
    return (0 if ip.is_private else 1), address


def machine_names(host: str, extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The DNS names the certificate covers: loopback's, this machine's, --host's (when a name), --allow-host's."""
    hostname = socket.gethostname().lower()
    names = ["localhost", hostname, f"{hostname}.local", socket.getfqdn().lower(), *[e.lower() for e in extra]]
    bare = host.strip("[]").lower()
    if bare and not _is_ip(bare):
        names.append(bare)
    return tuple(dict.fromkeys(n for n in names if n and not _is_ip(n)))


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def phone_host(host: str) -> str:
    """The address a phone on the same network opens: --host when it is one address, else this machine's first
    LAN address (a phone resolves no host names of a home network reliably), else "<host name>.local"."""
    bare = host.strip("[]")
    if bare not in ("0.0.0.0", "::") and bare:
        return f"[{bare}]" if ":" in bare else bare
    for a in machine_addresses():
        ip = ipaddress.ip_address(a)
        if not ip.is_loopback and ip.version == 4:
            return a
    return f"{socket.gethostname().lower()}.local"


def ensure_certificate(folder: Path, dns_names: tuple[str, ...], ip_addresses: tuple[str, ...],
                       now: dt.datetime | None = None) -> ServerCertificate:
    """The certificate in `folder` when it covers these names and addresses and has RENEW_DAYS left, else a new
    one written there. CertificateError (one sentence) when the folder cannot be written or the files read."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = now or dt.datetime.now(dt.UTC)
    cert_path, key_path = folder / CERT_FILE, folder / KEY_FILE
    wanted_ips = tuple(dict.fromkeys(str(ipaddress.ip_address(a)) for a in ip_addresses))
    if cert_path.is_file() and key_path.is_file() and not key_path.is_symlink():  # a linked key may be anyone's
        old: x509.Certificate | None
        try:
            old = x509.load_pem_x509_certificate(cert_path.read_bytes())
            old_key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
            san = old.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
            if old_key.public_key() != old.public_key():  # the TLS server would refuse to start with the pair
                old = None
        except (OSError, ValueError, TypeError, x509.ExtensionNotFound):
            old = None  # damaged, unreadable, no names, or a key of another certificate: a new one is made below
        if old is not None:
            has_dns = set(san.get_values_for_type(x509.DNSName))
            has_ips = {str(a) for a in san.get_values_for_type(x509.IPAddress)}
            if set(dns_names) <= has_dns and set(wanted_ips) <= has_ips and \
                    old.not_valid_after_utc - now > dt.timedelta(days=RENEW_DAYS) and _private(key_path):
                return ServerCertificate(cert_path, key_path, fingerprint(old.public_bytes(serialization.Encoding.DER)),
                                         tuple(sorted(has_dns)), tuple(sorted(has_ips)), made=False)

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"Tablesight on {socket.gethostname()}"[:64]),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Tablesight (self-signed)")])
    alt = [x509.DNSName(n) for n in dns_names] + [x509.IPAddress(ipaddress.ip_address(a)) for a in wanted_ips]
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=VALID_DAYS))
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=False, content_commitment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                     crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _write(key_path, key_pem, 0o600)
        _write(cert_path, cert.public_bytes(serialization.Encoding.PEM), 0o644)
    except OSError as err:
        raise CertificateError(f"The HTTPS certificate cannot be kept in {folder} ({err.strerror or err}); give a "
                               "--setup-dir this user can write.") from None
    return ServerCertificate(cert_path, key_path, fingerprint(cert.public_bytes(serialization.Encoding.DER)),
                             tuple(dns_names), wanted_ips, made=True)


def _private(key_path: Path) -> bool:
    """Make a kept private key readable by its owner alone (0600, whatever it was left at); False when that
    cannot be done, and a new key is made instead."""
    try:
        fd = os.open(key_path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        os.fchmod(fd, 0o600)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _write(path: Path, data: bytes, mode: int) -> None:
    """Write `path` whole, readable as `mode` says from the start: a new temporary file of a random name
    (created, never opened through a link someone left there) renamed over it."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), mode)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def fingerprint(der: bytes) -> str:
    """SHA-256 of a certificate's DER bytes as browsers show it: "AB:CD:...", 32 pairs."""
    import hashlib

    return ":".join(f"{b:02X}" for b in hashlib.sha256(der).digest())


def qr_terminal(text: str) -> str:
    """`text` as a QR code drawn in a terminal with half-block characters (dark on light, with its quiet zone)."""
    import io

    import segno

    out = io.StringIO()
    segno.make(text, error="m").terminal(out=out, compact=True, border=2)
    return out.getvalue()


def qr_svg(text: str) -> bytes:
    """`text` as a QR code in SVG: black on white, 4-module quiet zone, 5 px a module (shown at that size: a module
    scaled to a fraction of a pixel blurs, and one code in 400 then failed to decode)."""
    import io

    import segno

    out = io.BytesIO()
    segno.make(text, error="m").save(out, kind="svg", scale=5, border=4, dark="#000", light="#fff",
                                     title="The phone camera page's address")
    return out.getvalue()


BROWSER_WARNING = (
    "The phone's browser warns once that the connection is not private: the certificate is this machine's own, "
    "not one from an authority. Tap the warning's details and check that the fingerprint starts with {short}, "
    "then choose Advanced > Proceed (Chrome) or Show Details > visit this website (Safari)."
)
"""What a player is told about the one warning to accept ({short}: the fingerprint's first pairs)."""
