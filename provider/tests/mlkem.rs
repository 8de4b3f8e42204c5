//! ML-KEM and X25519MLKEM768 from pqgpu under the real `openssl` program (OpenSSL 3.5), against
//! OpenSSL's default provider as the independent implementation: keys generated from a seed
//! are the same, an encapsulation by either provider decapsulates in the other (fresh and with
//! given coins, where both must give the same ciphertext and secret), a modified ciphertext
//! gives both the same implicit-rejection secret, and TLS 1.3 handshakes in each group
//! complete with pqgpu on either side and only the default provider on the other. pqgpu's
//! trace proves pqgpu did the operations credited to it.

mod common;
use common::{Cfg, Env};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

/// (OpenSSL name, ciphertext bytes).
const SETS: [(&str, usize); 3] = [
    ("ML-KEM-512", 768),
    ("ML-KEM-768", 1088),
    ("ML-KEM-1024", 1568),
];

const SEED: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\
                    202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f";
const IKME: &str = "5555555555555555555555555555555555555555555555555555555555555555";

#[test]
fn listed_from_pqgpu() {
    let Some(e) = Env::new("mlkem-list") else {
        return;
    };
    let kems = e.ok(Cfg::Pq, &["list", "-kem-algorithms"]);
    let keys = e.ok(Cfg::Pq, &["list", "-key-managers"]);
    for name in ["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024", "X25519MLKEM768"] {
        for (what, text) in [("kem", &kems), ("keymgmt", &keys)] {
            assert!(
                text.lines()
                    .any(|l| l.contains(name) && l.contains("@ pqgpu")),
                "{what} {name} @ pqgpu not listed:\n{text}"
            );
        }
    }
}

/// Seeded key generation through pqgpu writes (through the default provider's encoder, after
/// export) the same key files as the default provider's own generation from the same seed.
#[test]
fn seeded_keys_equal_default_provider() {
    let Some(e) = Env::new("mlkem-seed") else {
        return;
    };
    for (name, _) in SETS {
        e.clear_trace();
        let seed = format!("hexseed:{SEED}");
        for (cfg, out) in [(Cfg::Pq, "pq.der"), (Cfg::Def, "def.der")] {
            e.ok(
                cfg,
                &[
                    "genpkey",
                    "-algorithm",
                    name,
                    "-pkeyopt",
                    &seed,
                    "-outform",
                    "DER",
                    "-out",
                    out,
                ],
            );
        }
        assert_eq!(
            e.traced(&format!("keygen {name} ")),
            1,
            "pqgpu did not generate {name}"
        );
        assert_eq!(e.read("pq.der"), e.read("def.der"), "{name}: keys differ");
    }
}

/// Encapsulation by one provider, decapsulation by the other, both ways; with given coins both
/// providers make the same ciphertext and secret; a modified ciphertext gives both the same
/// implicit-rejection secret; a ciphertext of the wrong length is refused.
#[test]
fn encapsulation_interoperates_with_default_provider() {
    let Some(e) = Env::new("mlkem-interop") else {
        return;
    };
    for (name, ct_len) in SETS {
        e.ok(Cfg::Def, &["genpkey", "-algorithm", name, "-out", "k.pem"]);
        e.ok(
            Cfg::Def,
            &["pkey", "-in", "k.pem", "-pubout", "-out", "pub.pem"],
        );
        let encap = |cfg, ct: &str, ss: &str, coins: bool| {
            let mut a = vec![
                "pkeyutl", "-encap", "-pubin", "-inkey", "pub.pem", "-out", ct, "-secret", ss,
            ];
            let ikme = format!("hexikme:{IKME}");
            if coins {
                a.extend(["-pkeyopt", &ikme]);
            }
            e.ok(cfg, &a);
        };
        let decap = |cfg, ct: &str, ss: &str| {
            e.ok(
                cfg,
                &[
                    "pkeyutl", "-decap", "-inkey", "k.pem", "-in", ct, "-secret", ss,
                ],
            );
        };
        e.clear_trace();
        // pqgpu encapsulates, the default provider decapsulates.
        encap(Cfg::Pq, "ct1", "ss1", false);
        assert_eq!(
            e.traced(&format!("encaps {name} ")),
            1,
            "pqgpu did not encapsulate"
        );
        assert_eq!(e.read("ct1").len(), ct_len);
        decap(Cfg::Def, "ct1", "ss1d");
        assert_eq!(e.read("ss1").len(), 32);
        assert_eq!(e.read("ss1"), e.read("ss1d"), "{name}: pqgpu -> default");
        // The default provider encapsulates, pqgpu decapsulates.
        encap(Cfg::Def, "ct2", "ss2", false);
        decap(Cfg::Pq, "ct2", "ss2p");
        assert_eq!(
            e.traced(&format!("decaps {name} ")),
            1,
            "pqgpu did not decapsulate"
        );
        assert_eq!(e.read("ss2"), e.read("ss2p"), "{name}: default -> pqgpu");
        assert_ne!(e.read("ss1"), e.read("ss2"));
        // Given coins: the same ciphertext and secret from both.
        encap(Cfg::Pq, "ct3", "ss3", true);
        encap(Cfg::Def, "ct3d", "ss3d", true);
        assert_eq!(e.read("ct3"), e.read("ct3d"), "{name}: ikme ciphertexts");
        assert_eq!(e.read("ss3"), e.read("ss3d"), "{name}: ikme secrets");
        // Implicit rejection: a flipped bit gives another secret, the same in both.
        let mut bad = e.read("ct2");
        bad[ct_len / 2] ^= 0x10;
        e.write("bad.ct", &bad);
        decap(Cfg::Pq, "bad.ct", "rej");
        decap(Cfg::Def, "bad.ct", "rejd");
        assert_ne!(e.read("rej"), e.read("ss2"), "{name}: tampered ct accepted");
        assert_eq!(
            e.read("rej"),
            e.read("rejd"),
            "{name}: rejection secrets differ"
        );
        // The wrong length is refused.
        e.write("short.ct", &bad[1..]);
        e.fails(
            Cfg::Pq,
            &[
                "pkeyutl", "-decap", "-inkey", "k.pem", "-in", "short.ct", "-secret", "x",
            ],
        );
        // pqgpu's own keys: generated, written, read back, pairwise-checked.
        e.ok(Cfg::Pq, &["genpkey", "-algorithm", name, "-out", "kp.pem"]);
        e.ok(Cfg::Pq, &["pkey", "-in", "kp.pem", "-check", "-noout"]);
        e.ok(Cfg::Def, &["pkey", "-in", "kp.pem", "-check", "-noout"]);
    }
}

/// One TLS 1.3 handshake: `s_server` under `server`, `s_client` under `client`, both limited
/// to `group`. Returns the client's output.
fn handshake(e: &Env, server: Cfg, client: Cfg, group: &str) -> String {
    let cnf = |c: &Cfg| match c {
        Cfg::Pq => e.path("pq.cnf"),
        Cfg::Def => e.path("def.cnf"),
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let accept = format!("127.0.0.1:{port}");
    let mut srv = Command::new(&e.bin)
        .args([
            "s_server", "-accept", &accept, "-naccept", "1", "-www", "-tls1_3", "-groups", group,
            "-cert", "srv.pem", "-key", "srv.key",
        ])
        .current_dir(&e.dir)
        .env("OPENSSL_CONF", cnf(&server))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(srv.stdout.take().unwrap());
    let mut line = String::new();
    while out.read_line(&mut line).unwrap() > 0 && !line.contains("ACCEPT") {
        line.clear();
    }
    assert!(line.contains("ACCEPT"), "s_server did not start");
    let cl = Command::new(&e.bin)
        .args([
            "s_client",
            "-connect",
            &accept,
            "-tls1_3",
            "-groups",
            group,
            "-CAfile",
            "srv.pem",
            "-verify_return_error",
            "-ign_eof",
        ])
        .current_dir(&e.dir)
        .env("OPENSSL_CONF", cnf(&client))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    cl.stdin
        .as_ref()
        .unwrap()
        .write_all(b"GET / HTTP/1.0\r\n\r\n")
        .unwrap();
    let o = cl.wait_with_output().unwrap();
    let status = srv.wait().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.status.success() && status.success(),
        "{group} handshake failed:\n{text}"
    );
    assert!(text.contains("Protocol: TLSv1.3"), "{text}");
    assert!(text.contains("Verify return code: 0 (ok)"), "{text}");
    assert!(
        text.contains(&format!("Negotiated TLS1.3 group: {group}")),
        "{group} not negotiated:\n{text}"
    );
    text
}

/// TLS 1.3 in each group, pqgpu on one side and only the default provider on the other, both
/// ways: the server's encapsulation and the client's key generation and decapsulation are
/// pqgpu's on its side.
#[test]
fn tls13_groups_interoperate_with_default_provider() {
    let Some(e) = Env::new("mlkem-tls") else {
        return;
    };
    e.ok(
        Cfg::Def,
        &[
            "req",
            "-x509",
            "-newkey",
            "ML-DSA-44",
            "-keyout",
            "srv.key",
            "-noenc",
            "-subj",
            "/CN=localhost",
            "-days",
            "2",
            "-out",
            "srv.pem",
        ],
    );
    for (group, kem) in [
        ("MLKEM512", "ML-KEM-512"),
        ("MLKEM768", "ML-KEM-768"),
        ("MLKEM1024", "ML-KEM-1024"),
        ("X25519MLKEM768", "ML-KEM-768"),
    ] {
        e.clear_trace();
        handshake(&e, Cfg::Pq, Cfg::Def, group);
        assert_eq!(
            e.traced(&format!("encaps {kem} ")),
            1,
            "{group}: server did not encaps"
        );
        assert_eq!(e.traced("decaps "), 0, "{group}");
        e.clear_trace();
        handshake(&e, Cfg::Def, Cfg::Pq, group);
        assert_eq!(
            e.traced(&format!("keygen {kem} ")),
            1,
            "{group}: client did not keygen"
        );
        assert_eq!(
            e.traced(&format!("decaps {kem} ")),
            1,
            "{group}: client did not decaps"
        );
        assert_eq!(e.traced("encaps "), 0, "{group}");
    }
    // Switched off, pqgpu only signs: the default provider does the key exchange.
    let off = std::fs::read_to_string(e.path("pq.cnf"))
        .unwrap()
        .replace("backend = cpu\n", "backend = cpu\nml_kem = no\n");
    std::fs::write(e.path("pq.cnf"), off).unwrap();
    e.clear_trace();
    handshake(&e, Cfg::Pq, Cfg::Def, "X25519MLKEM768");
    assert_eq!(e.traced("encaps "), 0, "ml_kem = no still encapsulated");
    assert_eq!(e.traced("sign ML-DSA-44 "), 1, "pqgpu did not sign");
    let kems = e.ok(Cfg::Pq, &["list", "-kem-algorithms"]);
    assert!(
        !kems
            .lines()
            .any(|l| l.contains("ML-KEM") && l.contains("@ pqgpu")),
        "{kems}"
    );
}
