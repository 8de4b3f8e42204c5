//! tls_bench (provider/bench/tls_bench.c), the multi-threaded TLS 1.3 test server behind the
//! issue's handshake figures: built against scripts/openssl35.sh's static OpenSSL 3.5, its
//! server run with pqgpu signing (CPU backend; blocking calls, and SSL_MODE_ASYNC with jobs
//! woken by descriptors and by callbacks) and its client on OpenSSL's default provider for
//! about a second each. Handshakes complete, none fails (a job the provider never wakes again
//! fails its handshake), the client verified an ML-DSA-44 server signature, and pqgpu's trace
//! holds exactly one signature and one ML-KEM-768 encapsulation (the X25519MLKEM768 key
//! exchange) per completed server handshake.

mod common;

use common::{Cfg, Env};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Builds tls_bench into the scratch directory, or `None` (with the reason printed) when there
/// is no C compiler or the OpenSSL program has no static libraries and headers next to it.
fn build(e: &Env) -> Option<PathBuf> {
    // scripts/openssl35.sh's layout: <cache>/bin/openssl, <cache>/include, <cache>/lib.
    let cache = e.bin.parent().and_then(Path::parent)?;
    if !cache.join("include/openssl/ssl.h").is_file() || !cache.join("lib/libssl.a").is_file() {
        println!(
            "SKIPPED: no OpenSSL 3.5 headers and static libraries in {} (run scripts/openssl35.sh)",
            cache.display()
        );
        return None;
    }
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    if Command::new(&cc).arg("--version").output().is_err() {
        println!("SKIPPED: no C compiler ({cc})");
        return None;
    }
    let out = e.path("tls_bench");
    let o = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/build.sh"))
        .arg(&out)
        .env("PQGPU_OPENSSL_CACHE", cache)
        .output()
        .expect("run bench/build.sh");
    assert!(
        o.status.success(),
        "building tls_bench failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some(out)
}

/// The number after `key` in `text` (e.g. "handshakes/s " -> 123.4).
fn number_after(text: &str, key: &str) -> f64 {
    let i = text
        .find(key)
        .unwrap_or_else(|| panic!("no {key:?} in:\n{text}"));
    text[i + key.len()..]
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number after {key:?} in:\n{text}"))
}

#[test]
fn tls_bench_server_signs_through_pqgpu() {
    let Some(e) = Env::new("tls_bench") else {
        return;
    };
    let Some(bench) = build(&e) else { return };
    e.ok(
        Cfg::Def,
        &[
            "req",
            "-x509",
            "-newkey",
            "ML-DSA-44",
            "-noenc",
            "-keyout",
            "tls.key",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost",
            "-days",
            "2",
            "-out",
            "tls.crt",
        ],
    );
    for mode in ["", "--async", "--async-callback"] {
        let async_mode = !mode.is_empty();
        e.clear_trace();
        let mut args = vec![
            "server",
            "--cert",
            "tls.crt",
            "--key",
            "tls.key",
            "--port",
            "0",
            "--threads",
            "8",
        ];
        if async_mode {
            args.push(mode);
        }
        let mut server = Command::new(&bench)
            .args(&args)
            .current_dir(&e.dir)
            .env("OPENSSL_CONF", e.path("pq.cnf"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the tls_bench server");
        let mut out = BufReader::new(server.stdout.take().unwrap());
        let mut head = String::new();
        let mut line = String::new();
        while !line.contains("listening on") {
            line.clear();
            if out.read_line(&mut line).unwrap() == 0 {
                let mut err = String::new();
                server
                    .stderr
                    .take()
                    .unwrap()
                    .read_to_string(&mut err)
                    .unwrap();
                panic!("tls_bench server did not start:\n{head}{err}");
            }
            head.push_str(&line);
        }
        assert!(
            head.contains("signatures from provider pqgpu"),
            "the server's signatures are not pqgpu's:\n{head}"
        );
        let port = number_after(&line, "127.0.0.1:").to_string();
        let client = Command::new(&bench)
            .args([
                "client",
                "--port",
                &port,
                "--ca",
                "tls.crt",
                "--host",
                "localhost",
                "--threads",
                "4",
                "--warmup",
                "0.2",
                "--seconds",
                "1",
            ])
            .current_dir(&e.dir)
            .env("OPENSSL_CONF", e.path("def.cnf"))
            .output()
            .expect("run the tls_bench client");
        // SAFETY: kill(2) on the server's pid (a child not yet waited for) with SIGTERM,
        // which it catches to stop and print its counts.
        unsafe { libc::kill(server.id() as libc::pid_t, libc::SIGTERM) };
        let mut rest = String::new();
        out.read_to_string(&mut rest).unwrap();
        let mut server_err = String::new();
        server
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut server_err)
            .unwrap();
        let status = server.wait().unwrap();
        let text = String::from_utf8_lossy(&client.stdout).into_owned();
        let all = format!(
            "{head}{rest}{server_err}{text}{}",
            String::from_utf8_lossy(&client.stderr)
        );
        println!("server {mode}:\n{all}");
        assert!(client.status.success(), "client failed:\n{all}");
        assert!(status.success(), "server failed:\n{all}");
        assert!(
            text.contains("TLSv1.3") && text.contains("server key ML-DSA-44"),
            "{all}"
        );
        assert!(text.contains("server signature mldsa44"), "{all}");
        assert!(text.contains("verify ok"), "{all}");
        assert_eq!(number_after(&text, "; failed "), 0.0, "{all}");
        let measured = number_after(&text, "handshakes/s ");
        assert!(measured > 0.0, "{all}");
        let served = number_after(&rest, "handshakes ") as usize;
        assert_eq!(number_after(&rest, " ok, "), 0.0, "server failures:\n{all}");
        assert!(served > 0, "{all}");
        // Every handshake the server completed signed once, through pqgpu: in the calling
        // thread with blocking calls, on pqgpu's helper threads inside async jobs. The server
        // signed once more before listening (its warm-up, outside any job).
        let place = if async_mode { "helper" } else { "caller" };
        assert_eq!(
            e.traced(&format!("sign ML-DSA-44 Cpu {place}")),
            served + usize::from(!async_mode),
            "pqgpu's trace vs the server's handshakes ({mode})"
        );
        assert_eq!(e.traced("sign "), served + 1, "signatures elsewhere");
        // The key exchange (OpenSSL's default group, X25519MLKEM768): pqgpu encapsulated
        // once per handshake, inside the jobs too.
        assert!(text.contains("group X25519MLKEM768"), "{all}");
        assert_eq!(
            e.traced(&format!("encaps ML-KEM-768 Cpu {place}")),
            served,
            "pqgpu's encapsulations vs the server's handshakes ({mode})"
        );
    }
}
