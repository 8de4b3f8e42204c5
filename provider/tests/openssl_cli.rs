//! The provider under the real `openssl` program (OpenSSL 3.5): listing, key generation from a
//! seed, signatures against OpenSSL's own ML-DSA, a small PKI, and every private-key layout.
//! OpenSSL's default provider is the independent reference; pqgpu's trace file proves that
//! pqgpu, not the default provider, did each operation it is credited with.

mod common;
use common::{Cfg, Env, SETS};

const SEED: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

#[test]
fn list_shows_pqgpu_algorithms() {
    let Some(e) = Env::new("list") else { return };
    let providers = e.ok(Cfg::Pq, &["list", "-providers", "-verbose"]);
    assert!(providers.contains("pqgpu"), "{providers}");
    let after = &providers[providers.find("  pqgpu").expect("pqgpu listed")..];
    assert!(after.contains("status: active"), "{providers}");
    let sigs = e.ok(Cfg::Pq, &["list", "-signature-algorithms"]);
    let keys = e.ok(Cfg::Pq, &["list", "-key-managers"]);
    for (i, set) in SETS.iter().enumerate() {
        let oid = format!("2.16.840.1.101.3.4.3.{}", 17 + i);
        let line = sigs
            .lines()
            .find(|l| l.contains(set) && l.contains("@ pqgpu"))
            .unwrap_or_else(|| panic!("{set} @ pqgpu not listed:\n{sigs}"));
        assert!(
            line.contains(&oid) && line.contains(&format!("id-ml-dsa-{}", &set[7..])),
            "{line}"
        );
        assert!(
            keys.lines()
                .any(|l| l.contains(set) && l.contains("@ pqgpu")),
            "{keys}"
        );
    }
}

#[test]
fn genpkey_from_seed_equals_default_provider() {
    let Some(e) = Env::new("genpkey") else { return };
    for set in SETS {
        let seed = format!("hexseed:{SEED}");
        e.ok(
            Cfg::Pq,
            &[
                "genpkey",
                "-algorithm",
                set,
                "-pkeyopt",
                &seed,
                "-out",
                "pq.pem",
            ],
        );
        e.ok(
            Cfg::Def,
            &[
                "genpkey",
                "-algorithm",
                set,
                "-pkeyopt",
                &seed,
                "-out",
                "def.pem",
            ],
        );
        assert!(
            e.read("pq.pem") == e.read("def.pem"),
            "{set}: private keys differ"
        );
        e.ok(
            Cfg::Pq,
            &["pkey", "-in", "pq.pem", "-pubout", "-out", "pq.pub"],
        );
        e.ok(
            Cfg::Def,
            &["pkey", "-in", "def.pem", "-pubout", "-out", "def.pub"],
        );
        assert!(
            e.read("pq.pub") == e.read("def.pub"),
            "{set}: public keys differ"
        );
        assert_eq!(
            e.traced(&format!("keygen {set}")),
            1,
            "{set}: pqgpu did not generate the key"
        );
        e.clear_trace();
        // Fresh random keys from pqgpu are valid keys for OpenSSL's own check.
        e.ok(Cfg::Pq, &["genpkey", "-algorithm", set, "-out", "rnd.pem"]);
        e.ok(Cfg::Def, &["pkey", "-in", "rnd.pem", "-check", "-noout"]);
        assert!(e.traced(&format!("keygen {set}")) >= 1);
        // pqgpu's own key check accepts it too (the seed re-expands to the same key).
        e.ok(Cfg::Pq, &["pkey", "-in", "rnd.pem", "-check", "-noout"]);
        e.clear_trace();
    }
}

fn sign(e: &Env, cfg: Cfg, key: &str, input: &str, ctx: &str, det: bool, out: &str) {
    let ctx = format!("context-string:{ctx}");
    let mut args = vec![
        "pkeyutl", "-sign", "-rawin", "-inkey", key, "-in", input, "-pkeyopt", &ctx,
    ];
    if det {
        args.extend(["-pkeyopt", "deterministic:1"]);
    }
    args.extend(["-out", out]);
    e.ok(cfg, &args);
}

fn verify_args<'a>(key: &'a str, input: &'a str, ctx: &'a str, sig: &'a str) -> Vec<&'a str> {
    vec![
        "pkeyutl", "-verify", "-rawin", "-inkey", key, "-in", input, "-pkeyopt", ctx, "-sigfile",
        sig,
    ]
}

#[test]
fn signatures_match_openssl() {
    let Some(e) = Env::new("sign") else { return };
    let msg: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
    e.write("msg", &msg);
    let mut bad = msg.clone();
    bad[500] ^= 1;
    e.write("bad", &bad);
    for set in SETS {
        e.ok(Cfg::Def, &["genpkey", "-algorithm", set, "-out", "k.pem"]);
        e.clear_trace();
        // Deterministic with a context string: byte for byte OpenSSL's signature.
        sign(&e, Cfg::Pq, "k.pem", "msg", "pqgpu test", true, "det.pq");
        sign(&e, Cfg::Def, "k.pem", "msg", "pqgpu test", true, "det.def");
        assert_eq!(
            e.traced(&format!("sign {set}")),
            1,
            "{set}: pqgpu did not sign"
        );
        assert!(
            e.read("det.pq") == e.read("det.def"),
            "{set}: deterministic signatures differ"
        );
        // Hedged: different each time, and each provider accepts the other's.
        sign(&e, Cfg::Pq, "k.pem", "msg", "pqgpu test", false, "h1.pq");
        sign(&e, Cfg::Pq, "k.pem", "msg", "pqgpu test", false, "h2.pq");
        assert_ne!(
            e.read("h1.pq"),
            e.read("h2.pq"),
            "{set}: hedged signatures repeat"
        );
        sign(&e, Cfg::Def, "k.pem", "msg", "pqgpu test", false, "h.def");
        let ctx = "context-string:pqgpu test";
        e.ok(Cfg::Def, &verify_args("k.pem", "msg", ctx, "h1.pq"));
        e.clear_trace();
        e.ok(Cfg::Pq, &verify_args("k.pem", "msg", ctx, "h.def"));
        assert_eq!(
            e.traced(&format!("verify {set}")),
            1,
            "{set}: pqgpu did not verify"
        );
        // Wrong context, changed message, flipped signature byte: both providers refuse.
        let mut flipped = e.read("h.def");
        flipped[17] ^= 0x40;
        e.write("flip.sig", &flipped);
        for cfg in [Cfg::Pq, Cfg::Def] {
            let pq = matches!(cfg, Cfg::Pq);
            e.clear_trace();
            let run = |args: Vec<&str>| {
                let o = e.run(if pq { Cfg::Pq } else { Cfg::Def }, &args);
                assert!(!o.status.success(), "{set}: {args:?} verified");
            };
            run(verify_args(
                "k.pem",
                "msg",
                "context-string:pqgpu tesT",
                "h1.pq",
            ));
            run(verify_args("k.pem", "bad", ctx, "h1.pq"));
            run(verify_args("k.pem", "msg", ctx, "flip.sig"));
            if pq {
                assert_eq!(
                    e.traced(&format!("verify {set}")),
                    3,
                    "{set}: pqgpu did not reject"
                );
            }
        }
    }
}

#[test]
fn small_pki() {
    let Some(e) = Env::new("pki") else { return };
    // CA: ML-DSA-87, self-signed by pqgpu.
    e.ok(
        Cfg::Pq,
        &[
            "req",
            "-x509",
            "-newkey",
            "ML-DSA-87",
            "-keyout",
            "ca.key",
            "-noenc",
            "-subj",
            "/CN=pqgpu test CA",
            "-days",
            "30",
            "-extensions",
            "v3_ca",
            "-out",
            "ca.pem",
        ],
    );
    assert!(e.traced("sign ML-DSA-87") >= 1);
    // End entity ML-DSA-44: req -new, x509 -req -CA.
    e.ok(
        Cfg::Pq,
        &[
            "req",
            "-new",
            "-newkey",
            "ML-DSA-44",
            "-keyout",
            "ee44.key",
            "-noenc",
            "-subj",
            "/CN=localhost",
            "-out",
            "ee44.csr",
        ],
    );
    e.ok(
        Cfg::Pq,
        &[
            "x509",
            "-req",
            "-in",
            "ee44.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-days",
            "30",
            "-extfile",
            "pq.cnf",
            "-extensions",
            "v3_ee",
            "-out",
            "ee44.pem",
        ],
    );
    // End entity ML-DSA-65 through `ca -batch`.
    e.ok(
        Cfg::Pq,
        &[
            "req",
            "-new",
            "-newkey",
            "ML-DSA-65",
            "-keyout",
            "ee65.key",
            "-noenc",
            "-subj",
            "/CN=ee65",
            "-out",
            "ee65.csr",
        ],
    );
    e.ok(
        Cfg::Pq,
        &[
            "ca", "-batch", "-config", "pq.cnf", "-cert", "ca.pem", "-keyfile", "ca.key", "-in",
            "ee65.csr", "-out", "ee65.pem",
        ],
    );
    assert!(e.traced("sign ML-DSA-44") >= 1 && e.traced("sign ML-DSA-65") >= 1);
    // Both providers accept the chain; pqgpu verifies the 87 signatures itself.
    e.clear_trace();
    for ee in ["ee44.pem", "ee65.pem"] {
        assert!(e
            .ok(Cfg::Pq, &["verify", "-CAfile", "ca.pem", ee])
            .contains("OK"));
        assert!(e
            .ok(Cfg::Def, &["verify", "-CAfile", "ca.pem", ee])
            .contains("OK"));
        e.ok(Cfg::Def, &["x509", "-in", ee, "-noout", "-text"]);
    }
    assert!(
        e.traced("verify ML-DSA-87") >= 2,
        "pqgpu did not verify the chain"
    );
    // A certificate from someone else's CA fails.
    e.ok(
        Cfg::Def,
        &[
            "req",
            "-x509",
            "-newkey",
            "ML-DSA-87",
            "-keyout",
            "ca2.key",
            "-noenc",
            "-subj",
            "/CN=pqgpu test CA",
            "-days",
            "30",
            "-extensions",
            "v3_ca",
            "-out",
            "ca2.pem",
        ],
    );
    e.fails(Cfg::Pq, &["verify", "-CAfile", "ca2.pem", "ee44.pem"]);
    // CMS (SHA-512 digest, RFC 9882; OpenSSL 3.5 has no default digest for ML-DSA in CMS):
    // signed by pqgpu, verified by both; a changed content fails.
    e.write("doc.txt", b"a document to sign\n");
    e.clear_trace();
    e.ok(
        Cfg::Pq,
        &[
            "cms",
            "-sign",
            "-md",
            "sha512",
            "-binary",
            "-in",
            "doc.txt",
            "-signer",
            "ee44.pem",
            "-inkey",
            "ee44.key",
            "-outform",
            "DER",
            "-out",
            "doc.p7s",
            "-nodetach",
        ],
    );
    assert!(
        e.traced("sign ML-DSA-44") >= 1,
        "pqgpu did not sign the CMS"
    );
    for cfg in [Cfg::Pq, Cfg::Def] {
        e.ok(
            cfg,
            &[
                "cms", "-verify", "-binary", "-inform", "DER", "-in", "doc.p7s", "-CAfile",
                "ca.pem", "-out", "doc.out",
            ],
        );
        assert_eq!(e.read("doc.out"), b"a document to sign\n");
    }
    e.ok(
        Cfg::Pq,
        &[
            "cms", "-sign", "-md", "sha512", "-binary", "-in", "doc.txt", "-signer", "ee65.pem",
            "-inkey", "ee65.key", "-outform", "DER", "-out", "det.p7s",
        ],
    );
    e.write("doc2.txt", b"a document to sign!\n");
    e.ok(
        Cfg::Def,
        &[
            "cms",
            "-verify",
            "-binary",
            "-inform",
            "DER",
            "-in",
            "det.p7s",
            "-content",
            "doc.txt",
            "-CAfile",
            "ca.pem",
            "-out",
            "/dev/null",
        ],
    );
    e.fails(
        Cfg::Pq,
        &[
            "cms",
            "-verify",
            "-binary",
            "-inform",
            "DER",
            "-in",
            "det.p7s",
            "-content",
            "doc2.txt",
            "-CAfile",
            "ca.pem",
            "-out",
            "/dev/null",
        ],
    );
    // dgst: one-shot ML-DSA through EVP_DigestSign.
    e.clear_trace();
    e.ok(
        Cfg::Pq,
        &["dgst", "-sign", "ee65.key", "-out", "doc.sig", "doc.txt"],
    );
    assert_eq!(e.traced("sign ML-DSA-65"), 1);
    e.ok(
        Cfg::Def,
        &["pkey", "-in", "ee65.key", "-pubout", "-out", "ee65.pub"],
    );
    assert!(e
        .ok(
            Cfg::Def,
            &[
                "dgst",
                "-verify",
                "ee65.pub",
                "-signature",
                "doc.sig",
                "doc.txt"
            ]
        )
        .contains("Verified OK"));
    assert!(e
        .ok(
            Cfg::Pq,
            &[
                "dgst",
                "-verify",
                "ee65.pub",
                "-signature",
                "doc.sig",
                "doc.txt"
            ]
        )
        .contains("Verified OK"));
    let o = e.run(
        Cfg::Pq,
        &[
            "dgst",
            "-verify",
            "ee65.pub",
            "-signature",
            "doc.sig",
            "doc2.txt",
        ],
    );
    assert!(!o.status.success());
    // PKCS#12: export, read back, and sign with the key that came out.
    e.ok(
        Cfg::Pq,
        &[
            "pkcs12",
            "-export",
            "-in",
            "ee44.pem",
            "-inkey",
            "ee44.key",
            "-certfile",
            "ca.pem",
            "-passout",
            "pass:pw",
            "-out",
            "ee44.p12",
        ],
    );
    e.ok(
        Cfg::Pq,
        &[
            "pkcs12", "-in", "ee44.p12", "-passin", "pass:pw", "-nocerts", "-noenc", "-out",
            "p12.key",
        ],
    );
    e.ok(
        Cfg::Def,
        &["pkcs12", "-in", "ee44.p12", "-passin", "pass:pw", "-noout"],
    );
    e.write("msg", b"pkcs12");
    sign(&e, Cfg::Pq, "p12.key", "msg", "", true, "p12.sig");
    sign(&e, Cfg::Def, "ee44.key", "msg", "", true, "ee.sig");
    assert!(e.read("p12.sig") == e.read("ee.sig"));
}

#[test]
fn every_private_key_layout_loads_and_signs() {
    let layouts = [
        "seed-priv",
        "seed-only",
        "priv-only",
        "oqskeypair",
        "bare-seed",
        "bare-priv",
    ];
    for layout in layouts {
        let extra = format!("ml-dsa.output_formats = {layout}");
        let Some(e) = Env::with_default_sect(layout, &extra) else {
            return;
        };
        let mut seen = Vec::new();
        for set in SETS {
            let seed = format!("hexseed:{SEED}");
            e.ok(
                Cfg::Def,
                &[
                    "genpkey",
                    "-algorithm",
                    set,
                    "-pkeyopt",
                    &seed,
                    "-outform",
                    "DER",
                    "-out",
                    "k.der",
                ],
            );
            seen.push(e.read("k.der").len());
            e.write("msg", layout.as_bytes());
            e.clear_trace();
            let sign_args = |out: &'static str| -> Vec<String> {
                [
                    "pkeyutl",
                    "-sign",
                    "-rawin",
                    "-keyform",
                    "DER",
                    "-inkey",
                    "k.der",
                    "-in",
                    "msg",
                    "-pkeyopt",
                    "deterministic:1",
                    "-out",
                    out,
                ]
                .map(String::from)
                .to_vec()
            };
            let a: Vec<String> = sign_args("pq.sig");
            e.ok(Cfg::Pq, &a.iter().map(String::as_str).collect::<Vec<_>>());
            assert_eq!(
                e.traced(&format!("sign {set}")),
                1,
                "{layout} {set}: pqgpu did not sign"
            );
            let a: Vec<String> = sign_args("def.sig");
            e.ok(Cfg::Def, &a.iter().map(String::as_str).collect::<Vec<_>>());
            assert!(e.read("pq.sig") == e.read("def.sig"), "{layout} {set}");
        }
        println!("{layout}: DER private keys of {seen:?} bytes");
    }
}

/// s_server (also with -async) and s_client -verify_return_error: a TLS 1.3 handshake with an
/// ML-DSA-44 certificate, the server's CertificateVerify signed by pqgpu.
#[test]
fn tls13_handshake_with_pqgpu_certificate() {
    use std::io::{BufRead, BufReader};
    let Some(e) = Env::new("tls") else { return };
    e.ok(
        Cfg::Pq,
        &[
            "req",
            "-x509",
            "-newkey",
            "ML-DSA-87",
            "-keyout",
            "ca.key",
            "-noenc",
            "-subj",
            "/CN=pqgpu test CA",
            "-days",
            "30",
            "-extensions",
            "v3_ca",
            "-out",
            "ca.pem",
        ],
    );
    e.ok(
        Cfg::Pq,
        &[
            "req",
            "-new",
            "-newkey",
            "ML-DSA-44",
            "-keyout",
            "srv.key",
            "-noenc",
            "-subj",
            "/CN=localhost",
            "-out",
            "srv.csr",
        ],
    );
    e.ok(
        Cfg::Pq,
        &[
            "x509",
            "-req",
            "-in",
            "srv.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-days",
            "30",
            "-extfile",
            "pq.cnf",
            "-extensions",
            "v3_ee",
            "-out",
            "srv.pem",
        ],
    );
    for async_mode in [false, true] {
        e.clear_trace();
        // A free port: bind, read it, release; s_server takes it a moment later.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let accept = format!("127.0.0.1:{port}");
        let mut args = vec![
            "s_server", "-accept", &accept, "-naccept", "1", "-www", "-tls1_3", "-cert", "srv.pem",
            "-key", "srv.key",
        ];
        if async_mode {
            args.push("-async");
        }
        let mut server = std::process::Command::new(&e.bin)
            .args(&args)
            .current_dir(&e.dir)
            .env("OPENSSL_CONF", e.path("pq.cnf"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(server.stdout.take().unwrap());
        let mut line = String::new();
        while out.read_line(&mut line).unwrap() > 0 && !line.contains("ACCEPT") {
            line.clear();
        }
        assert!(line.contains("ACCEPT"), "s_server did not start");
        let client = std::process::Command::new(&e.bin)
            .args([
                "s_client",
                "-connect",
                &accept,
                "-servername",
                "localhost",
                "-tls1_3",
                "-verify_return_error",
                "-CAfile",
                "ca.pem",
                "-ign_eof",
            ])
            .current_dir(&e.dir)
            .env("OPENSSL_CONF", e.path("pq.cnf"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        let mut stdin = client.stdin.as_ref().unwrap();
        stdin.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
        let o = client.wait_with_output().unwrap();
        let status = server.wait().unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success() && status.success(),
            "handshake failed (async {async_mode}):\n{text}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(text.contains("Peer signature type: mldsa44"), "{text}");
        assert!(text.contains("Verify return code: 0 (ok)"), "{text}");
        assert!(text.contains("Protocol: TLSv1.3"), "{text}");
        let place = if async_mode { "helper" } else { "caller" };
        assert_eq!(
            e.traced(&format!("sign ML-DSA-44 Cpu {place}")),
            1,
            "pqgpu did not sign the handshake (async {async_mode})"
        );
        assert!(
            e.traced("verify ML-DSA-44") >= 1,
            "pqgpu did not verify the handshake"
        );
    }
}

/// `openssl speed -async_jobs 1100 ML-DSA-44` under pqgpu completes, and every operation it
/// counted went through pqgpu (inside async jobs the work runs on helper threads). Over 1,024
/// jobs: speed select()s on every job's wait descriptor and gives up past FD_SETSIZE, so this
/// fails if the provider spends a descriptor per job.
#[test]
fn speed_with_async_jobs() {
    let Some(e) = Env::new("speed") else { return };
    let o = e.ok_with_stderr(
        Cfg::Pq,
        &[
            "speed",
            "-seconds",
            "1",
            "-elapsed",
            "-async_jobs",
            "1100",
            "-propquery",
            "provider=pqgpu",
            "ML-DSA-44",
        ],
    );
    let ops = |what: &str| -> usize {
        let line = o
            .lines()
            .find(|l| l.contains(&format!("ML-DSA-44 signature {what} ops")))
            .unwrap_or_else(|| panic!("{o}"));
        line.split(": ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{line}"))
    };
    for (what, op) in [("keygen", "keygen"), ("sign", "sign"), ("verify", "verify")] {
        let n = ops(what);
        assert!(n > 0, "{o}");
        // The trace holds more: speed also signs and verifies once per job while setting up.
        let t = e.traced(&format!("{op} ML-DSA-44"));
        assert!(t >= n, "{what}: speed counted {n}, pqgpu traced {t}");
        // The counted operations ran inside async jobs: on helper threads, not the jobs'
        // small stacks (the setup, outside any job, runs on the caller).
        let on_helpers = e.traced(&format!("{op} ML-DSA-44 Cpu helper"));
        assert!(
            on_helpers >= n,
            "{what}: {on_helpers} of {n} on helper threads"
        );
    }
    // Forked workers (-multi) each start their own helper threads and backend.
    let multi = e.ok_with_stderr(
        Cfg::Pq,
        &[
            "speed",
            "-seconds",
            "1",
            "-elapsed",
            "-multi",
            "2",
            "-async_jobs",
            "16",
            "-propquery",
            "provider=pqgpu",
            "ML-DSA-44",
        ],
    );
    let row = multi
        .lines()
        .find(|l| l.trim_start().starts_with("ML-DSA-44 0"))
        .unwrap_or_else(|| panic!("{multi}"));
    let signs: f64 = row
        .split_whitespace()
        .nth(5)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    assert!(signs > 0.0, "forked workers signed nothing: {row}");
    // Concurrent jobs' requests were coalesced: some backend batch held more than one.
    let trace = std::fs::read_to_string(e.path("trace.log")).unwrap();
    for op in ["sign", "verify"] {
        let sizes: Vec<usize> = trace
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("batch {op} ML-DSA-44 Cpu n=")))
            .map(|n| n.parse().unwrap())
            .collect();
        let items: usize = sizes.iter().sum();
        assert_eq!(
            items,
            e.traced(&format!("{op} ML-DSA-44")),
            "{op}: batches cover every item"
        );
        let max = sizes.iter().max().copied().unwrap_or(0);
        println!(
            "{op}: {} batches, {items} items, largest {max}",
            sizes.len()
        );
        assert!(max > 1, "{op}: no batch of more than one item");
    }
}

/// The serving options in the provider's section reach the dispatcher's checks: valid values
/// load (and the provider works), a value out of range or not a number stops the load.
#[test]
fn serving_options_are_checked_at_load() {
    let Some(e) = Env::new("opts") else { return };
    let pq = String::from_utf8(e.read("pq.cnf")).unwrap();
    for (opts, loads) in [
        (
            "cpu_crossover = 0\nmax_wait_us = 200\nquiet_us = 10\n",
            true,
        ),
        ("cpu_crossover = many\n", false),
        ("max_in_flight = 0\n", false),
        ("max_wait_us = 2000000\n", false),
    ] {
        let cnf = pq.replace("backend = cpu\n", &format!("backend = cpu\n{opts}"));
        assert_ne!(cnf, pq);
        e.write("opt.cnf", cnf.as_bytes());
        let run = |args: &[&str]| {
            std::process::Command::new(&e.bin)
                .args(args)
                .current_dir(&e.dir)
                .env("OPENSSL_CONF", e.path("opt.cnf"))
                .output()
                .unwrap()
        };
        let listed = String::from_utf8_lossy(&run(&["list", "-providers"]).stdout).into_owned();
        assert_eq!(listed.contains("pqgpu"), loads, "{opts}: {listed}");
        if loads {
            e.clear_trace();
            let o = run(&["genpkey", "-algorithm", "ML-DSA-44", "-out", "opt.pem"]);
            assert!(o.status.success());
            assert_eq!(e.traced("keygen ML-DSA-44"), 1);
        }
    }
}
