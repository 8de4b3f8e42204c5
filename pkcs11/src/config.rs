//! The module's configuration file: `key = value` lines, `#` comments. Its path is
//! `PQGPU_PKCS11_CONF`, else [`DEFAULT_PATH`]. A missing or malformed file fails `C_Initialize`.
//!
//! ```text
//! token_dir = /var/lib/pqgpu/token   # required: where token objects live
//! backend = auto                     # auto | cpu | gpu
//! token_label = pqgpu                # label of a token before C_InitToken names it
//! max_pin_failures = 10              # wrong PINs in a row that lock the PIN
//! import_private_keys = yes          # whether C_CreateObject accepts private keys
//! kdf_memory_kib = 19456             # Argon2id memory for PINs set from now on
//! kdf_iterations = 2                 # Argon2id passes for PINs set from now on
//! max_wait_us = 50                   # serving options, as pqg_context_set_option's
//! max_batch = 65536
//! cpu_crossover = 16
//! max_in_flight = 4
//! quiet_us = 50
//! ```

use pqgpu::backend::BackendKind;
use pqgpu::serve::Opt;
use std::path::{Path, PathBuf};

/// The module's longest wait for a forming batch, in microseconds, unless the file sets one
/// (the library's own default is 500). Many sessions that each sign one message at a time
/// refill the queue within microseconds: on the H200, 256 sessions signing with one ML-DSA-44
/// key reached 333 k signatures/s with 50 µs against 193 k/s with 500 µs.
pub const DEFAULT_MAX_WAIT_US: i64 = 50;

/// Where the configuration is read when `PQGPU_PKCS11_CONF` is unset.
pub const DEFAULT_PATH: &str = "/etc/pqgpu/pkcs11.conf";

#[derive(Clone, Debug)]
pub struct Config {
    pub token_dir: PathBuf,
    pub backend: BackendKind,
    pub token_label: String,
    pub max_pin_failures: u32,
    pub import_private_keys: bool,
    pub kdf_memory_kib: u32,
    pub kdf_iterations: u32,
    pub serve: Vec<(Opt, i64)>,
}

const SERVE_KEYS: [(&str, Opt); 5] = [
    ("max_wait_us", Opt::MaxWaitUs),
    ("max_batch", Opt::MaxBatch),
    ("cpu_crossover", Opt::CpuCrossover),
    ("max_in_flight", Opt::MaxInFlight),
    ("quiet_us", Opt::QuietUs),
];

/// The path in force.
pub fn path() -> PathBuf {
    std::env::var_os("PQGPU_PKCS11_CONF")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_PATH))
}

/// Reads and checks the file; the error says what is wrong, for the log.
pub fn load(path: &Path) -> Result<Config, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("configuration {}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("configuration {}: {e}", path.display()))
}

fn yes_no(v: &str) -> Result<bool, String> {
    match v {
        "yes" | "true" | "1" => Ok(true),
        "no" | "false" | "0" => Ok(false),
        _ => Err(format!("'{v}' is not yes or no")),
    }
}

fn number<T>(key: &str, v: &str, lo: T, hi: T) -> Result<T, String>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
{
    let n: T = v
        .parse()
        .map_err(|_| format!("{key}: '{v}' is not a number"))?;
    if n < lo || n > hi {
        return Err(format!("{key}: {n} is outside {lo}..={hi}"));
    }
    Ok(n)
}

pub fn parse(text: &str) -> Result<Config, String> {
    let mut token_dir = None;
    let mut c = Config {
        token_dir: PathBuf::new(),
        backend: BackendKind::Auto,
        token_label: "pqgpu".into(),
        max_pin_failures: 10,
        import_private_keys: true,
        kdf_memory_kib: 19456,
        kdf_iterations: 2,
        serve: vec![(Opt::MaxWaitUs, DEFAULT_MAX_WAIT_US)],
    };
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let (k, v) = line
            .split_once('=')
            .map(|(k, v)| (k.trim(), v.trim()))
            .ok_or_else(|| format!("line {}: expected key = value", i + 1))?;
        match k {
            "token_dir" if !v.is_empty() => token_dir = Some(PathBuf::from(v)),
            "backend" => {
                c.backend = match v {
                    "auto" => BackendKind::Auto,
                    "cpu" => BackendKind::Cpu,
                    "gpu" => BackendKind::Gpu,
                    _ => return Err(format!("backend: '{v}' is not auto, cpu or gpu")),
                }
            }
            "token_label" => c.token_label = v.to_string(),
            "max_pin_failures" => c.max_pin_failures = number(k, v, 1, 1000)?,
            "import_private_keys" => c.import_private_keys = yes_no(v)?,
            "kdf_memory_kib" => c.kdf_memory_kib = number(k, v, 8, 4 << 20)?,
            "kdf_iterations" => c.kdf_iterations = number(k, v, 1, 100)?,
            _ => match SERVE_KEYS.iter().find(|(name, _)| *name == k) {
                Some((_, opt)) => {
                    let n: i64 = v
                        .parse()
                        .map_err(|_| format!("{k}: '{v}' is not a number"))?;
                    // Checked against the dispatcher's own ranges now, so that a bad value
                    // fails C_Initialize rather than the first signature.
                    pqgpu::serve::Config::default()
                        .set(*opt, n)
                        .map_err(|_| format!("{k}: {n} is out of range"))?;
                    c.serve.retain(|(o, _)| o != opt);
                    c.serve.push((*opt, n));
                }
                None => return Err(format!("line {}: unknown key '{k}'", i + 1)),
            },
        }
    }
    c.token_dir = token_dir.ok_or("token_dir is not set")?;
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_key_and_refuses_bad_input() {
        let c = parse(
            "token_dir = /t # where\nbackend=cpu\nmax_wait_us = 100\nimport_private_keys = no\n",
        )
        .unwrap();
        assert_eq!(c.token_dir, PathBuf::from("/t"));
        assert_eq!(c.backend, BackendKind::Cpu);
        assert_eq!(c.serve, vec![(Opt::MaxWaitUs, 100)]);
        assert!(!c.import_private_keys);
        assert!(parse("backend = cpu\n").unwrap_err().contains("token_dir"));
        let c = parse("token_dir=/t\nquiet_us = 10\n").unwrap();
        assert_eq!(
            c.serve,
            vec![(Opt::MaxWaitUs, DEFAULT_MAX_WAIT_US), (Opt::QuietUs, 10)]
        );
        assert!(parse("token_dir=/t\nbackend = tpu\n").is_err());
        assert!(parse("token_dir=/t\nmax_batch = 0\n").is_err());
        assert!(parse("token_dir=/t\nbogus = 1\n").is_err());
        assert!(parse("token_dir=/t\njust words\n").is_err());
    }
}
