"""SLH-DSA through PyKCS11's raw mechanism interface (python-pkcs11 0.10 has no SLH-DSA key
type or mechanisms): key pairs, pure and HashSLH-DSA signatures checked by OpenSSL 3.5's
default provider (an independent FIPS 205 implementation), keys made by OpenSSL imported and
used, and the return codes for bad input. 'f' sets, and one 's' set once (its signing is slow
on a small CPU)."""

import hashlib
import os
import struct
import subprocess
import tempfile

import PyKCS11
import pytest

from conftest import MODULE, USER_PIN, der_len, hash_sign_context, openssl, sign_context

CKA_PARAMETER_SET = 0x61D
CKK_SLH_DSA = 0x4B
CKM_SLH_DSA_KEY_PAIR_GEN = 0x2D
CKM_SLH_DSA = 0x2E
CKM_HASH_SLH_DSA = 0x34
CKM_HASH_SLH_DSA_SHA256 = 0x37
CKM_HASH_SLH_DSA_SHAKE256 = 0x3F
CKH_DETERMINISTIC_REQUIRED = 2
CKR_PARAMETER_SET_NOT_SUPPORTED = 0x209

# CKP_SLH_DSA_* -> (OpenSSL name, n, last arc of the OID 2.16.840.1.101.3.4.3.x), from
# PKCS#11 3.2 (pkcs11t.h), FIPS 205 Table 2 and the NIST algorithm registry.
SETS = {
    1: ("SLH-DSA-SHA2-128s", 16, 20),
    3: ("SLH-DSA-SHA2-128f", 16, 21),
    4: ("SLH-DSA-SHAKE-128f", 16, 27),
    7: ("SLH-DSA-SHA2-192f", 24, 23),
}
# FIPS 205 Table 2 signature sizes.
SIG_LEN = {1: 7856, 3: 17088, 4: 17088, 7: 35664}


def ulong(v):
    return struct.pack("L", v)


@pytest.fixture(scope="module")
def session(token_conf):
    lib = PyKCS11.PyKCS11Lib()
    lib.load(MODULE)
    s = lib.openSession(lib.getSlotList()[0], PyKCS11.CKF_RW_SESSION | PyKCS11.CKF_SERIAL_SESSION)
    s.login(USER_PIN)
    return s


def rv(f, *a):
    with pytest.raises(PyKCS11.PyKCS11Error) as e:
        f(*a)
    return e.value.value


def gen(session, ps):
    pub_t = [(PyKCS11.CKA_CLASS, PyKCS11.CKO_PUBLIC_KEY), (PyKCS11.CKA_TOKEN, False),
             (CKA_PARAMETER_SET, ulong(ps))]
    priv_t = [(PyKCS11.CKA_CLASS, PyKCS11.CKO_PRIVATE_KEY), (PyKCS11.CKA_TOKEN, False)]
    return session.generateKeyPair(pub_t, priv_t, PyKCS11.Mechanism(CKM_SLH_DSA_KEY_PAIR_GEN))


def value(session, h):
    return bytes(session.getAttributeValue(h, [PyKCS11.CKA_VALUE], allAsBinary=True)[0])


def spki_der(ps, pk):
    """SubjectPublicKeyInfo of an SLH-DSA public key (RFC 9909: the OID, no parameters)."""
    arc = SETS[ps][2]
    alg = bytes([0x30, 0x0B, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, arc])
    bits = b"\x00" + pk
    body = alg + b"\x03" + der_len(len(bits)) + bits
    return b"\x30" + der_len(len(body)) + body


def openssl_verify(ps, pk, msg, sig, *opts):
    o = openssl()
    with tempfile.TemporaryDirectory() as d:
        paths = {n: os.path.join(d, n) for n in ("pub.der", "msg", "sig")}
        for n, b in (("pub.der", spki_der(ps, pk)), ("msg", msg), ("sig", sig)):
            with open(paths[n], "wb") as f:
                f.write(b)
        args = [o, "pkeyutl", "-verify", "-pubin", "-keyform", "DER", "-inkey", paths["pub.der"],
                "-rawin", "-in", paths["msg"], "-sigfile", paths["sig"]]
        for opt in opts:
            args += ["-pkeyopt", opt]
        r = subprocess.run(args, capture_output=True, text=True)
        return r.returncode == 0 and "Verified Successfully" in r.stdout


@pytest.mark.parametrize("ps", [3, 4, 7, 1])
def test_openssl_verifies_token_signatures(session, ps):
    pub, priv = gen(session, ps)
    n = SETS[ps][1]
    pk = value(session, pub)
    assert len(pk) == 2 * n
    msg = b"firmware image signed on the token"
    sig = bytes(session.sign(priv, msg, PyKCS11.Mechanism(CKM_SLH_DSA)))
    assert len(sig) == SIG_LEN[ps]
    assert session.verify(pub, msg, sig, PyKCS11.Mechanism(CKM_SLH_DSA))
    assert openssl_verify(ps, pk, msg, sig)
    assert not openssl_verify(ps, pk, msg + b"!", sig)
    if ps == 1:
        return  # one slow 's' signature is enough
    raw, keep = sign_context(b"ctx-9")
    sig = bytes(session.sign(priv, msg, PyKCS11.Mechanism(CKM_SLH_DSA, raw)))
    assert openssl_verify(ps, pk, msg, sig, "hexcontext-string:" + b"ctx-9".hex())
    assert not openssl_verify(ps, pk, msg, sig)
    # Deterministic signing (PK.seed as opt_rand) gives one signature, as OpenSSL's does.
    det, keep2 = sign_context(b"", CKH_DETERMINISTIC_REQUIRED)
    s1 = bytes(session.sign(priv, msg, PyKCS11.Mechanism(CKM_SLH_DSA, det)))
    s2 = bytes(session.sign(priv, msg, PyKCS11.Mechanism(CKM_SLH_DSA, det)))
    assert s1 == s2
    assert openssl_verify(ps, pk, msg, s1)


def hash_m_prime(name, digest_len, arc, msg, ctx=b""):
    """FIPS 205 Algorithm 23's M' = 1 || |ctx| || ctx || OID(PH) || PH(M)."""
    h = hashlib.new(name, msg)
    digest = h.digest(digest_len) if name.startswith("shake") else h.digest()
    oid = bytes([0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, arc])
    return b"\x01" + bytes([len(ctx)]) + ctx + oid + digest


@pytest.mark.parametrize("mech,h", [(CKM_HASH_SLH_DSA_SHA256, ("sha256", 32, 0x01)),
                                    (CKM_HASH_SLH_DSA_SHAKE256, ("shake_256", 64, 0x0C))])
def test_hash_slh_dsa_checked_by_openssl(session, mech, h):
    """OpenSSL verifies HashSLH-DSA as SLH-DSA over M' (message-encoding 0: the internal
    interface)."""
    ps = 3
    pub, priv = gen(session, ps)
    pk = value(session, pub)
    msg = b"pre-hashed " * 20
    raw, keep = sign_context(b"h")
    sig = bytes(session.sign(priv, msg, PyKCS11.Mechanism(mech, raw)))
    assert session.verify(pub, msg, sig, PyKCS11.Mechanism(mech, raw))
    assert openssl_verify(ps, pk, hash_m_prime(*h, msg, b"h"), sig, "message-encoding:0")
    assert not openssl_verify(ps, pk, hash_m_prime(*h, msg, b"x"), sig, "message-encoding:0")
    # CKM_HASH_SLH_DSA on the caller's digest gives a signature of the same M'.
    digest = hashlib.sha256(msg).digest()
    hraw, keep2 = hash_sign_context(0x250, b"h")  # CKM_SHA256
    sig = bytes(session.sign(priv, digest, PyKCS11.Mechanism(CKM_HASH_SLH_DSA, hraw)))
    assert openssl_verify(ps, pk, hash_m_prime("sha256", 32, 0x01, msg, b"h"), sig, "message-encoding:0")
    assert rv(session.sign, priv, digest[:31], PyKCS11.Mechanism(CKM_HASH_SLH_DSA, hraw)) == PyKCS11.CKR_DATA_LEN_RANGE


@pytest.mark.parametrize("ps", [3, 7])
def test_openssl_key_imported_and_used(session, ps):
    o = openssl()
    name, n, _ = SETS[ps]
    with tempfile.TemporaryDirectory() as d:
        pem = os.path.join(d, "k.pem")
        subprocess.run([o, "genpkey", "-algorithm", name, "-out", pem], check=True)
        der = subprocess.run([o, "pkey", "-in", pem, "-outform", "DER"], check=True, capture_output=True).stdout
        spki = subprocess.run([o, "pkey", "-in", pem, "-pubout", "-outform", "DER"], check=True, capture_output=True).stdout
    # PKCS#8's privateKey and the SPKI's BIT STRING hold FIPS 205's encodings, last.
    assert der[-4 * n - 2:-4 * n] == bytes([0x04, 4 * n])
    sk, pk = der[-4 * n:], spki[-2 * n:]
    common = [(PyKCS11.CKA_KEY_TYPE, CKK_SLH_DSA), (CKA_PARAMETER_SET, ulong(ps))]
    priv = session.createObject([(PyKCS11.CKA_CLASS, PyKCS11.CKO_PRIVATE_KEY), *common, (PyKCS11.CKA_VALUE, sk)])
    pub = session.createObject([(PyKCS11.CKA_CLASS, PyKCS11.CKO_PUBLIC_KEY), *common, (PyKCS11.CKA_VALUE, pk)])
    msg = b"signed with a key OpenSSL made"
    sig = bytes(session.sign(priv, msg, PyKCS11.Mechanism(CKM_SLH_DSA)))
    assert session.verify(pub, msg, sig, PyKCS11.Mechanism(CKM_SLH_DSA))
    assert openssl_verify(ps, pk, msg, sig)
    # A private key whose PK.root is not its seeds' root is refused.
    bad = sk[:-1] + bytes([sk[-1] ^ 1])
    assert rv(session.createObject, [(PyKCS11.CKA_CLASS, PyKCS11.CKO_PRIVATE_KEY), *common,
                                     (PyKCS11.CKA_VALUE, bad)]) == PyKCS11.CKR_ATTRIBUTE_VALUE_INVALID


def test_return_codes_for_bad_input(session):
    pub, priv = gen(session, 3)
    mech = PyKCS11.Mechanism(CKM_SLH_DSA)
    assert rv(gen, session, 13) == CKR_PARAMETER_SET_NOT_SUPPORTED
    assert rv(gen, session, 0) == CKR_PARAMETER_SET_NOT_SUPPORTED
    assert rv(session.sign, pub, b"m", mech) == PyKCS11.CKR_KEY_TYPE_INCONSISTENT
    # An ML-DSA mechanism with an SLH-DSA key, and the other way round.
    assert rv(session.sign, priv, b"m", PyKCS11.Mechanism(0x1D)) == PyKCS11.CKR_KEY_TYPE_INCONSISTENT
    mpub, mpriv = session.generateKeyPair(
        [(PyKCS11.CKA_CLASS, PyKCS11.CKO_PUBLIC_KEY), (CKA_PARAMETER_SET, ulong(1))],
        [(PyKCS11.CKA_CLASS, PyKCS11.CKO_PRIVATE_KEY)], PyKCS11.Mechanism(0x1C))
    assert rv(session.sign, mpriv, b"m", mech) == PyKCS11.CKR_KEY_TYPE_INCONSISTENT
    assert rv(session.sign, priv, b"m", PyKCS11.Mechanism(CKM_SLH_DSA, b"\x00" * 5)) == PyKCS11.CKR_MECHANISM_PARAM_INVALID
    long_ctx, keep = sign_context(b"c" * 256)
    assert rv(session.sign, priv, b"m", PyKCS11.Mechanism(CKM_SLH_DSA, long_ctx)) == PyKCS11.CKR_MECHANISM_PARAM_INVALID
    assert rv(session.verify, pub, b"m", b"x" * 100, mech) == PyKCS11.CKR_SIGNATURE_LEN_RANGE
    assert session.verify(pub, b"m", b"x" * SIG_LEN[3], mech) is False
    pk = value(session, pub)
    common = [(PyKCS11.CKA_CLASS, PyKCS11.CKO_PUBLIC_KEY), (PyKCS11.CKA_KEY_TYPE, CKK_SLH_DSA)]
    # A 128-bit set's key under a 192-bit set.
    assert rv(session.createObject, [*common, (CKA_PARAMETER_SET, ulong(7)), (PyKCS11.CKA_VALUE, pk)]) == PyKCS11.CKR_ATTRIBUTE_VALUE_INVALID


def test_mechanism_info(token_conf):
    """The mechanism list names the SLH-DSA mechanisms, with the public key sizes."""
    lib = PyKCS11.PyKCS11Lib()
    lib.load(MODULE)
    slot = lib.getSlotList()[0]
    mechs = lib.getMechanismList(slot)
    for m in ("CKM_SLH_DSA_KEY_PAIR_GEN", "CKM_SLH_DSA", "CKM_HASH_SLH_DSA", "CKM_HASH_SLH_DSA_SHAKE256"):
        assert m in mechs, mechs
    info = lib.getMechanismInfo(slot, "CKM_SLH_DSA")
    assert (info.ulMinKeySize, info.ulMaxKeySize) == (32, 64)
    assert info.flags & PyKCS11.CKF_SIGN and info.flags & PyKCS11.CKF_VERIFY
