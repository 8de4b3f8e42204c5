//! Drives the OpenSSL 3.5 command-line program (built by scripts/openssl35.sh) with pqgpu.so
//! loaded, next to the same program with only OpenSSL's default provider: the reference.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The OpenSSL 3.5 program: $PQGPU_OPENSSL, else scripts/openssl35.sh's install location.
pub fn openssl() -> Option<PathBuf> {
    let p = match std::env::var_os("PQGPU_OPENSSL") {
        Some(p) => PathBuf::from(p),
        None => {
            let cache = std::env::var_os("PQGPU_OPENSSL_CACHE")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                        .join(".cache/pqgpu/openssl-3.5")
                });
            cache.join("bin/openssl")
        }
    };
    p.is_file().then_some(p)
}

/// The provider module cargo built with this test: target/<profile>/deps/libpqgpu_provider.so
/// (cargo test refreshes the copy in deps/, next to the test executable, not the uplifted one).
pub fn module() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("target/<profile>/deps");
    let so = deps.join("libpqgpu_provider.so");
    assert!(
        so.is_file(),
        "provider module not built: {} (cargo test -p pqgpu_provider)",
        so.display()
    );
    so
}

/// One scratch directory with two configurations: `pq` (pqgpu preferred for every fetch, its
/// operations traced to a file) and `def` (OpenSSL's default provider only).
pub struct Env {
    pub dir: PathBuf,
    pub bin: PathBuf,
}

#[derive(Clone, Copy)]
pub enum Cfg {
    /// pqgpu loaded and preferred (`default_properties = ?provider=pqgpu`).
    Pq,
    /// Only OpenSSL's default provider.
    Def,
}

static SEQ: AtomicUsize = AtomicUsize::new(0);

/// Extra configuration shared by both files: req's sections, X.509 extensions, a small CA.
const COMMON: &str = r#"
[req]
distinguished_name = dn
[dn]
[v3_ca]
basicConstraints = critical,CA:true
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[v3_ee]
basicConstraints = critical,CA:false
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth,clientAuth,emailProtection
subjectAltName = DNS:localhost
[ca]
default_ca = ca_sect
[ca_sect]
dir = ./ca
database = $dir/index.txt
new_certs_dir = $dir/new
serial = $dir/serial
default_days = 30
default_md = default
policy = policy_any
x509_extensions = v3_ee
copy_extensions = none
[policy_any]
commonName = supplied
"#;

impl Env {
    /// A fresh environment, or `None` (with the reason printed) when OpenSSL 3.5 is not built.
    pub fn new(name: &str) -> Option<Env> {
        Env::with_default_sect(name, "")
    }

    /// Like `new`, with extra lines in the default provider's section of both files (e.g.
    /// `ml-dsa.output_formats = seed-only`).
    pub fn with_default_sect(name: &str, extra: &str) -> Option<Env> {
        let Some(bin) = openssl() else {
            println!("SKIPPED: OpenSSL 3.5 program not built (run scripts/openssl35.sh or set PQGPU_OPENSSL)");
            return None;
        };
        let dir = std::env::temp_dir().join(format!(
            "pqgpu-provider-{}-{}-{}",
            name,
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("ca/new")).unwrap();
        std::fs::write(dir.join("ca/index.txt"), "").unwrap();
        std::fs::write(dir.join("ca/serial"), "1000\n").unwrap();
        std::fs::copy(module(), dir.join("pqgpu.so")).unwrap();
        let d = dir.display();
        let pq = format!(
            "openssl_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\nalg_section = alg_sect\n\
             [alg_sect]\ndefault_properties = ?provider=pqgpu\n\
             [provider_sect]\ndefault = default_sect\npqgpu = pqgpu_sect\n\
             [default_sect]\nactivate = 1\n{extra}\n\
             [pqgpu_sect]\nmodule = {d}/pqgpu.so\nactivate = 1\nbackend = cpu\ntrace = {d}/trace.log\n{COMMON}"
        );
        let def = format!(
            "openssl_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\n\
             [provider_sect]\ndefault = default_sect\n[default_sect]\nactivate = 1\n{extra}\n{COMMON}"
        );
        std::fs::write(dir.join("pq.cnf"), pq).unwrap();
        std::fs::write(dir.join("def.cnf"), def).unwrap();
        Some(Env { dir, bin })
    }

    pub fn path(&self, f: &str) -> PathBuf {
        self.dir.join(f)
    }

    pub fn write(&self, f: &str, data: &[u8]) {
        std::fs::write(self.path(f), data).unwrap();
    }

    pub fn read(&self, f: &str) -> Vec<u8> {
        std::fs::read(self.path(f)).unwrap_or_else(|e| panic!("{f}: {e}"))
    }

    /// Runs `openssl args...` in the scratch directory under a configuration.
    pub fn run(&self, cfg: Cfg, args: &[&str]) -> Output {
        let cnf = match cfg {
            Cfg::Pq => "pq.cnf",
            Cfg::Def => "def.cnf",
        };
        Command::new(&self.bin)
            .args(args)
            .current_dir(&self.dir)
            .env("OPENSSL_CONF", self.path(cnf))
            .env_remove("OPENSSL_MODULES")
            .stdin(Stdio::null())
            .output()
            .expect("run openssl")
    }

    /// Runs and requires success; returns stdout.
    pub fn ok(&self, cfg: Cfg, args: &[&str]) -> String {
        let o = self.run(cfg, args);
        assert!(
            o.status.success(),
            "openssl {} failed:\n{}{}",
            args.join(" "),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Runs and requires success; returns stdout and stderr together.
    pub fn ok_with_stderr(&self, cfg: Cfg, args: &[&str]) -> String {
        let o = self.run(cfg, args);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            o.status.success(),
            "openssl {} failed:\n{text}",
            args.join(" ")
        );
        text
    }

    /// Runs and requires failure.
    pub fn fails(&self, cfg: Cfg, args: &[&str]) {
        let o = self.run(cfg, args);
        assert!(
            !o.status.success(),
            "openssl {} succeeded but must fail",
            args.join(" ")
        );
    }

    /// How many operations pqgpu traced whose line starts with `prefix` (e.g. "sign ML-DSA-44").
    pub fn traced(&self, prefix: &str) -> usize {
        std::fs::read_to_string(self.path("trace.log"))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.starts_with(prefix))
            .count()
    }

    /// Empties the trace.
    pub fn clear_trace(&self) {
        let _ = std::fs::write(self.path("trace.log"), "");
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

pub const SETS: [&str; 3] = ["ML-DSA-44", "ML-DSA-65", "ML-DSA-87"];
