"""Token storage across processes: a writer killed mid-store loses nothing it had stored and
leaves a token that opens; two processes see each other's objects; a missing or malformed
configuration is a clear C_Initialize error."""

import os
import signal
import struct
import subprocess
import sys
import tempfile
import time

import PyKCS11
import pytest

from conftest import MODULE, USER_PIN, init_token, write_config

WRITER = f"""
import PyKCS11, struct, sys, os
lib = PyKCS11.PyKCS11Lib(); lib.load({MODULE!r})
s = lib.openSession(lib.getSlotList()[0], PyKCS11.CKF_RW_SESSION | PyKCS11.CKF_SERIAL_SESSION)
s.login({USER_PIN!r})
i = 0
while True:
    label = "k%d-%d" % (os.getpid(), i)
    s.generateKeyPair(
        [(PyKCS11.CKA_CLASS, PyKCS11.CKO_PUBLIC_KEY), (PyKCS11.CKA_TOKEN, True),
         (0x61d, struct.pack("L", 1)), (PyKCS11.CKA_LABEL, label)],
        [(PyKCS11.CKA_CLASS, PyKCS11.CKO_PRIVATE_KEY), (PyKCS11.CKA_TOKEN, True),
         (PyKCS11.CKA_LABEL, label)],
        PyKCS11.Mechanism(0x1c))
    print(label, flush=True)
    i += 1
"""

LISTER = f"""
import PyKCS11, sys
lib = PyKCS11.PyKCS11Lib(); lib.load({MODULE!r})
s = lib.openSession(lib.getSlotList()[0], PyKCS11.CKF_RW_SESSION | PyKCS11.CKF_SERIAL_SESSION)
s.login({USER_PIN!r})
for o in s.findObjects([(PyKCS11.CKA_CLASS, PyKCS11.CKO_PRIVATE_KEY)]):
    label = s.getAttributeValue(o, [PyKCS11.CKA_LABEL])[0]
    pub = s.findObjects([(PyKCS11.CKA_CLASS, PyKCS11.CKO_PUBLIC_KEY), (PyKCS11.CKA_LABEL, label)])
    sig = s.sign(o, b"after the crash", PyKCS11.Mechanism(0x1d))
    assert len(pub) == 1 and s.verify(pub[0], b"after the crash", sig, PyKCS11.Mechanism(0x1d))
    print(label)
"""


def fresh_token():
    d = tempfile.mkdtemp(prefix="pqgpu-p11-store-")
    conf = write_config(d)
    init_token(conf)
    return d, conf


def test_writer_killed_mid_store_loses_nothing_stored():
    d, conf = fresh_token()
    env = dict(os.environ, PQGPU_PKCS11_CONF=conf)
    stored = []
    for _ in range(3):  # three kills at different moments
        w = subprocess.Popen([sys.executable, "-c", WRITER], env=env, stdout=subprocess.PIPE, text=True)
        target = len(stored) + 3
        while len(stored) < target:
            line = w.stdout.readline()
            assert line, "the writer died on its own"
            stored.append(line.strip())
        time.sleep(0.003 * len(stored))  # let it be somewhere inside the next store
        w.send_signal(signal.SIGKILL)
        w.wait()
        w.stdout.close()
    r = subprocess.run([sys.executable, "-c", LISTER], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "malformed" not in r.stderr
    survivors = set(r.stdout.split())
    assert set(stored) <= survivors  # every pair the writer was told is stored is there, whole
    assert not [f for f in os.listdir(os.path.join(d, "token")) if f.startswith(".tmp-")]


def test_two_processes_see_each_others_objects():
    d, conf = fresh_token()
    os.environ["PQGPU_PKCS11_CONF"] = conf
    lib = PyKCS11.PyKCS11Lib()
    lib.load(MODULE)
    try:
        s = lib.openSession(lib.getSlotList()[0], PyKCS11.CKF_RW_SESSION | PyKCS11.CKF_SERIAL_SESSION)
        s.login(USER_PIN)
        assert not s.findObjects([(PyKCS11.CKA_LABEL, "from the other")])
        make = f"""
import PyKCS11, struct
lib = PyKCS11.PyKCS11Lib(); lib.load({MODULE!r})
s = lib.openSession(lib.getSlotList()[0], PyKCS11.CKF_RW_SESSION | PyKCS11.CKF_SERIAL_SESSION)
s.login({USER_PIN!r})
s.generateKeyPair(
    [(PyKCS11.CKA_CLASS, PyKCS11.CKO_PUBLIC_KEY), (PyKCS11.CKA_TOKEN, True),
     (0x61d, struct.pack("L", 2)), (PyKCS11.CKA_LABEL, "from the other")],
    [(PyKCS11.CKA_CLASS, PyKCS11.CKO_PRIVATE_KEY), (PyKCS11.CKA_TOKEN, True),
     (PyKCS11.CKA_LABEL, "from the other")], PyKCS11.Mechanism(0x1c))
"""
        subprocess.run([sys.executable, "-c", make], check=True, env=dict(os.environ))
        found = s.findObjects([(PyKCS11.CKA_LABEL, "from the other"), (PyKCS11.CKA_CLASS, PyKCS11.CKO_PRIVATE_KEY)])
        assert len(found) == 1
        assert s.sign(found[0], b"m", PyKCS11.Mechanism(0x1d))
        for o in s.findObjects([(PyKCS11.CKA_LABEL, "from the other")]):
            s.destroyObject(o)
        count = f"""
import PyKCS11
lib = PyKCS11.PyKCS11Lib(); lib.load({MODULE!r})
s = lib.openSession(lib.getSlotList()[0], PyKCS11.CKF_SERIAL_SESSION)
print(len(s.findObjects([(PyKCS11.CKA_LABEL, "from the other")])))
"""
        out = subprocess.run([sys.executable, "-c", count], check=True, capture_output=True, text=True, env=dict(os.environ))
        assert out.stdout.strip() == "0"
    finally:
        lib.unload()


def test_private_key_material_never_on_disk_in_the_clear():
    d, conf = fresh_token()
    env = dict(os.environ, PQGPU_PKCS11_CONF=conf)
    code = f"""
import PyKCS11, struct
lib = PyKCS11.PyKCS11Lib(); lib.load({MODULE!r})
s = lib.openSession(lib.getSlotList()[0], PyKCS11.CKF_RW_SESSION | PyKCS11.CKF_SERIAL_SESSION)
s.login({USER_PIN!r})
pub, priv = s.generateKeyPair(
    [(PyKCS11.CKA_CLASS, PyKCS11.CKO_PUBLIC_KEY), (PyKCS11.CKA_TOKEN, True), (0x61d, struct.pack("L", 1))],
    [(PyKCS11.CKA_CLASS, PyKCS11.CKO_PRIVATE_KEY), (PyKCS11.CKA_TOKEN, True),
     (PyKCS11.CKA_SENSITIVE, False), (PyKCS11.CKA_EXTRACTABLE, True)], PyKCS11.Mechanism(0x1c))
sk = bytes(s.getAttributeValue(priv, [PyKCS11.CKA_VALUE], allAsBinary=True)[0])
seed = bytes(s.getAttributeValue(priv, [0x637], allAsBinary=True)[0])
print(sk.hex(), seed.hex())
"""
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True).stdout
    sk_hex, seed_hex = out.split()
    assert len(sk_hex) == 2 * 2560 and len(seed_hex) == 64
    blob = b"".join(open(os.path.join(d, "token", f), "rb").read() for f in os.listdir(os.path.join(d, "token")))
    for secret in (bytes.fromhex(sk_hex)[:64], bytes.fromhex(seed_hex)):
        assert secret not in blob and secret.hex().encode() not in blob
    assert USER_PIN.encode() not in blob


@pytest.mark.parametrize("content", [None, "backend = cpu\n", "token_dir = /tmp/x\nbackend = tpu\n", "nonsense\n"])
def test_missing_or_malformed_configuration_fails_initialize(content):
    d = tempfile.mkdtemp(prefix="pqgpu-p11-conf-")
    conf = os.path.join(d, "pkcs11.conf")
    if content is not None:
        with open(conf, "w") as f:
            f.write(content)
    code = f"""
import PyKCS11, sys
lib = PyKCS11.PyKCS11Lib()
try:
    lib.load({MODULE!r})
except PyKCS11.PyKCS11Error as e:
    print(e.value); sys.exit(0)
print("loaded")
"""
    r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PQGPU_PKCS11_CONF=conf),
                       capture_output=True, text=True)
    assert r.stdout.strip() == str(PyKCS11.CKR_GENERAL_ERROR), (r.stdout, r.stderr)
    assert "pqgpu-pkcs11: configuration" in r.stderr


def test_gpu_backend_keys_load_without_the_gpu_and_a_refused_gpu_is_a_device_error():
    """backend = gpu: C_Initialize, token set-up and key generation never reach for the GPU
    (they run on the CPU); the first signature does. Where no GPU is usable that is
    CKR_DEVICE_ERROR with the reason on stderr; where one is, the signature verifies."""
    d = tempfile.mkdtemp(prefix="pqgpu-p11-gpu-")
    conf = write_config(d, backend="gpu")
    init_token(conf)
    code = f"""
import PyKCS11, struct
lib = PyKCS11.PyKCS11Lib(); lib.load({MODULE!r})
s = lib.openSession(lib.getSlotList()[0], PyKCS11.CKF_RW_SESSION | PyKCS11.CKF_SERIAL_SESSION)
s.login({USER_PIN!r})
pub, priv = s.generateKeyPair(
    [(PyKCS11.CKA_CLASS, PyKCS11.CKO_PUBLIC_KEY), (0x61d, struct.pack("L", 1))],
    [(PyKCS11.CKA_CLASS, PyKCS11.CKO_PRIVATE_KEY)], PyKCS11.Mechanism(0x1c))
print("keys made", flush=True)
try:
    sig = s.sign(priv, b"m", PyKCS11.Mechanism(0x1d))
    print("verified" if s.verify(pub, b"m", sig, PyKCS11.Mechanism(0x1d)) else "bad")
except PyKCS11.PyKCS11Error as e:
    print("rv", e.value)
"""
    r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PQGPU_PKCS11_CONF=conf),
                       capture_output=True, text=True)
    lines = r.stdout.split()
    assert r.stdout.startswith("keys made"), (r.stdout, r.stderr)
    if "verified" not in lines:
        assert r.stdout.split("\n")[1] == f"rv {PyKCS11.CKR_DEVICE_ERROR}", (r.stdout, r.stderr)
        assert "pqgpu-pkcs11: backend Gpu unavailable:" in r.stderr
