//! The token: its record (label, PINs as wrapped data keys, failure counters), its objects
//! (token objects from the store, session objects in memory), who is logged in, and the data
//! key while someone is. Every change to the store is made under its exclusive lock after a
//! reload, so changes made by other processes are seen first.

use crate::attr::{self, Template};
use crate::ck::*;
use crate::config::Config;
use crate::object::{self, Object, Secret};
use crate::seal::{self, Cost, DataKey, SealError, Wrapped};
use crate::store::{dir::DirStore, Store};
use std::collections::HashMap;
use std::sync::Arc;

pub const MIN_PIN: usize = 4;
pub const MAX_PIN: usize = 255;
const TOKEN_RECORD: &str = "token";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Login {
    Public,
    User,
    So,
}

/// The token record.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Meta {
    label: String,
    serial: String,
    so: Wrapped,
    user: Option<Wrapped>,
    user_failures: u32,
    so_failures: u32,
}

pub struct Token {
    store: Box<dyn Store>,
    default_label: String,
    max_failures: u32,
    cost: Cost,
    pub import_private_keys: bool,
    meta: Option<Meta>,
    generation: Option<u64>,
    dk: Option<DataKey>,
    pub login: Login,
    objects: HashMap<CK_OBJECT_HANDLE, Arc<Object>>,
    by_id: HashMap<String, CK_OBJECT_HANDLE>,
    next_handle: CK_OBJECT_HANDLE,
}

fn io_err(e: std::io::Error) -> CK_RV {
    crate::log(&format!("token storage: {e}"));
    CKR_DEVICE_ERROR
}

fn pin_len(pin: &[u8]) -> Rv {
    if (MIN_PIN..=MAX_PIN).contains(&pin.len()) {
        Ok(())
    } else {
        Err(CKR_PIN_LEN_RANGE)
    }
}

impl Token {
    pub fn open(cfg: &Config) -> Result<Token, String> {
        let store = DirStore::open(&cfg.token_dir)
            .map_err(|e| format!("token_dir {}: {e}", cfg.token_dir.display()))?;
        let mut t = Token {
            store: Box::new(store),
            default_label: cfg.token_label.clone(),
            max_failures: cfg.max_pin_failures,
            cost: Cost {
                memory_kib: cfg.kdf_memory_kib,
                iterations: cfg.kdf_iterations,
            },
            import_private_keys: cfg.import_private_keys,
            meta: None,
            generation: None,
            dk: None,
            login: Login::Public,
            objects: HashMap::new(),
            by_id: HashMap::new(),
            next_handle: 1,
        };
        t.refresh().map_err(|rv| {
            format!(
                "token_dir {}: unreadable (CKR {rv:#x})",
                cfg.token_dir.display()
            )
        })?;
        Ok(t)
    }

    // ---- loading -------------------------------------------------------------------------

    /// Reloads what other processes changed (cheap when nothing did: one small read).
    pub fn refresh(&mut self) -> Rv {
        let _g = self.store.lock(false).map_err(io_err)?;
        self.reload_locked()
    }

    fn reload_locked(&mut self) -> Rv {
        let g = self.store.generation().map_err(io_err)?;
        if self.generation == Some(g) {
            return Ok(());
        }
        self.meta = match self.store.read(TOKEN_RECORD).map_err(io_err)? {
            Some(b) => Some(parse_meta(&b).ok_or_else(|| {
                crate::log("token record is malformed");
                CKR_DEVICE_ERROR
            })?),
            None => None,
        };
        let names = self.store.list("obj-").map_err(io_err)?;
        let mut seen = std::collections::HashSet::new();
        for name in names {
            let Some(raw) = self.store.read(&name).map_err(io_err)? else {
                continue;
            };
            seen.insert(name.clone());
            if let Some(&h) = self.by_id.get(&name) {
                if self.objects.get(&h).is_some_and(|o| o.raw == raw) {
                    continue;
                }
            }
            let Some(o) = Object::from_record(&name, &raw) else {
                crate::log(&format!("skipping malformed object record {name}"));
                continue;
            };
            let mut o = Arc::new(o);
            if let Some(dk) = &self.dk {
                o = o.opened(dk)?;
            }
            let h = match self.by_id.get(&name) {
                Some(&h) => h,
                None => self.new_handle(),
            };
            self.by_id.insert(name, h);
            self.objects.insert(h, o);
        }
        let gone: Vec<String> = self
            .by_id
            .keys()
            .filter(|id| !seen.contains(*id))
            .cloned()
            .collect();
        for id in gone {
            if let Some(h) = self.by_id.remove(&id) {
                self.objects.remove(&h);
            }
        }
        self.generation = Some(g);
        Ok(())
    }

    fn new_handle(&mut self) -> CK_OBJECT_HANDLE {
        let h = self.next_handle;
        self.next_handle += 1;
        h
    }

    /// Runs a change under the store's exclusive lock, after a reload; then advances the
    /// generation.
    fn change<R>(&mut self, f: impl FnOnce(&mut Self) -> Rv<R>) -> Rv<R> {
        let store_lock = self.store.lock(true).map_err(io_err)?;
        self.reload_locked()?;
        let r = f(self);
        self.store.bump().map_err(io_err)?;
        self.generation = Some(self.store.generation().map_err(io_err)?);
        drop(store_lock);
        r
    }

    fn write_meta(&self, m: &Meta) -> Rv {
        self.store
            .write(TOKEN_RECORD, &meta_record(m))
            .map_err(io_err)
    }

    // ---- token state ---------------------------------------------------------------------

    pub fn initialized(&self) -> bool {
        self.meta.is_some()
    }

    pub fn label(&self) -> &str {
        self.meta
            .as_ref()
            .map_or(self.default_label.as_str(), |m| m.label.as_str())
    }

    pub fn serial(&self) -> &str {
        self.meta.as_ref().map_or("0", |m| m.serial.as_str())
    }

    pub fn flags(&self) -> CK_FLAGS {
        let mut f = CKF_RNG | CKF_LOGIN_REQUIRED;
        let Some(m) = &self.meta else {
            return f;
        };
        f |= CKF_TOKEN_INITIALIZED;
        if m.user.is_some() {
            f |= CKF_USER_PIN_INITIALIZED;
        }
        f |= failure_flags(
            m.user_failures,
            self.max_failures,
            [
                CKF_USER_PIN_COUNT_LOW,
                CKF_USER_PIN_FINAL_TRY,
                CKF_USER_PIN_LOCKED,
            ],
        );
        f |= failure_flags(
            m.so_failures,
            self.max_failures,
            [
                CKF_SO_PIN_COUNT_LOW,
                CKF_SO_PIN_FINAL_TRY,
                CKF_SO_PIN_LOCKED,
            ],
        );
        f
    }

    pub fn object_count(&self) -> usize {
        self.objects.len()
    }

    // ---- PINs and login ------------------------------------------------------------------

    /// C_InitToken: a new token (or, with the right SO PIN, the same token emptied): every
    /// token object is destroyed, a new data key is made, the user PIN is unset.
    pub fn init_token(&mut self, so_pin: &[u8], label: &str) -> Rv {
        pin_len(so_pin)?;
        let cost = self.cost;
        let max = self.max_failures;
        self.change(|t| {
            if let Some(m) = t.meta.clone() {
                if m.so_failures >= max {
                    return Err(CKR_PIN_LOCKED);
                }
                if let Err(e) = seal::unwrap(&m.so, so_pin, b"so") {
                    return t.failed_pin(e, Login::So);
                }
            }
            for name in t.store.list("obj-").map_err(io_err)? {
                t.store.remove(&name).map_err(io_err)?;
            }
            let dk = seal::new_data_key().map_err(|_| CKR_GENERAL_ERROR)?;
            let so = seal::wrap(&dk, so_pin, b"so", cost).map_err(|_| CKR_GENERAL_ERROR)?;
            let mut serial = [0u8; 8];
            getrandom::getrandom(&mut serial).map_err(|_| CKR_GENERAL_ERROR)?;
            let m = Meta {
                label: label.to_string(),
                serial: hex::encode(serial),
                so,
                user: None,
                user_failures: 0,
                so_failures: 0,
            };
            t.write_meta(&m)?;
            t.meta = Some(m);
            Ok(())
        })?;
        self.logout();
        self.refresh()
    }

    /// Counts a wrong PIN (persistently) and says so.
    fn failed_pin(&mut self, e: SealError, who: Login) -> Rv {
        if e != SealError::Open {
            return Err(CKR_GENERAL_ERROR);
        }
        if let Some(mut m) = self.meta.clone() {
            match who {
                Login::So => m.so_failures += 1,
                _ => m.user_failures += 1,
            }
            self.write_meta(&m)?;
            self.meta = Some(m);
        }
        Err(CKR_PIN_INCORRECT)
    }

    pub fn login(&mut self, who: Login, pin: &[u8]) -> Rv {
        let max = self.max_failures;
        let dk = self.change(|t| {
            let m = t.meta.clone().ok_or(CKR_USER_PIN_NOT_INITIALIZED)?;
            let (wrapped, failures, role): (&Wrapped, u32, &[u8]) = match who {
                Login::So => (&m.so, m.so_failures, b"so"),
                _ => (
                    m.user.as_ref().ok_or(CKR_USER_PIN_NOT_INITIALIZED)?,
                    m.user_failures,
                    b"user",
                ),
            };
            if failures >= max {
                return Err(CKR_PIN_LOCKED);
            }
            match seal::unwrap(wrapped, pin, role) {
                Ok(dk) => {
                    if failures > 0 {
                        let mut m2 = m.clone();
                        match who {
                            Login::So => m2.so_failures = 0,
                            _ => m2.user_failures = 0,
                        }
                        t.write_meta(&m2)?;
                        t.meta = Some(m2);
                    }
                    Ok(dk)
                }
                Err(e) => Err(t.failed_pin(e, who).unwrap_err()),
            }
        })?;
        self.login = who;
        if who == Login::User {
            for o in self.objects.values_mut() {
                *o = o.opened(&dk)?;
            }
        }
        self.dk = Some(dk);
        Ok(())
    }

    /// Forgets the data key and every secret opened with it (and the key handles made from
    /// them); session objects keep theirs.
    pub fn logout(&mut self) {
        self.login = Login::Public;
        self.dk = None;
        for o in self.objects.values_mut() {
            if matches!(o.secret, Secret::Clear(_)) && o.is_token() {
                if let Some(back) = Object::from_record(&o.id, &o.raw) {
                    *o = Arc::new(back);
                }
            }
        }
    }

    /// C_InitPIN (SO logged in): sets the user PIN and clears its failure count.
    pub fn init_pin(&mut self, pin: &[u8]) -> Rv {
        pin_len(pin)?;
        let dk = self.dk.clone().ok_or(CKR_USER_NOT_LOGGED_IN)?;
        let cost = self.cost;
        self.change(|t| {
            let mut m = t.meta.clone().ok_or(CKR_GENERAL_ERROR)?;
            m.user = Some(seal::wrap(&dk, pin, b"user", cost).map_err(|_| CKR_GENERAL_ERROR)?);
            m.user_failures = 0;
            t.write_meta(&m)?;
            t.meta = Some(m);
            Ok(())
        })
    }

    /// C_SetPIN: the SO's PIN when the SO is logged in, else the user's.
    pub fn set_pin(&mut self, old: &[u8], new: &[u8]) -> Rv {
        pin_len(new)?;
        let who = if self.login == Login::So {
            Login::So
        } else {
            Login::User
        };
        let max = self.max_failures;
        let cost = self.cost;
        self.change(|t| {
            let mut m = t.meta.clone().ok_or(CKR_USER_PIN_NOT_INITIALIZED)?;
            if who == Login::So {
                return t.set_so_pin(&mut m, old, new, cost, max);
            }
            let w = m.user.clone().ok_or(CKR_USER_PIN_NOT_INITIALIZED)?;
            if m.user_failures >= max {
                return Err(CKR_PIN_LOCKED);
            }
            let dk = match seal::unwrap(&w, old, b"user") {
                Ok(dk) => dk,
                Err(e) => return t.failed_pin(e, who),
            };
            m.user = Some(seal::wrap(&dk, new, b"user", cost).map_err(|_| CKR_GENERAL_ERROR)?);
            m.user_failures = 0;
            t.write_meta(&m)?;
            t.meta = Some(m);
            Ok(())
        })
    }

    fn set_so_pin(&mut self, m: &mut Meta, old: &[u8], new: &[u8], cost: Cost, max: u32) -> Rv {
        if m.so_failures >= max {
            return Err(CKR_PIN_LOCKED);
        }
        let dk = match seal::unwrap(&m.so, old, b"so") {
            Ok(dk) => dk,
            Err(e) => return self.failed_pin(e, Login::So),
        };
        m.so = seal::wrap(&dk, new, b"so", cost).map_err(|_| CKR_GENERAL_ERROR)?;
        m.so_failures = 0;
        self.write_meta(m)?;
        self.meta = Some(m.clone());
        Ok(())
    }

    // ---- objects -------------------------------------------------------------------------

    /// Whether the current login may see `o`.
    pub fn visible(&self, o: &Object) -> bool {
        !o.is_private() || self.login == Login::User
    }

    /// An object by handle, if it exists (visible or not).
    pub fn get(&self, h: CK_OBJECT_HANDLE) -> Option<&Arc<Object>> {
        self.objects.get(&h)
    }

    /// Adds an object: a token object is written to the store first (sealing its secrets).
    pub fn add(&mut self, mut o: Object, session: CK_SESSION_HANDLE) -> Rv<CK_OBJECT_HANDLE> {
        if o.is_token() {
            o.id = object::new_id()?;
            let rec = o.record(self.dk.as_ref())?;
            o.raw = rec.clone();
            let id = o.id.clone();
            return self.change(|t| {
                t.store.write(&id, &rec).map_err(io_err)?;
                let h = t.new_handle();
                t.by_id.insert(id, h);
                t.objects.insert(h, Arc::new(o));
                Ok(h)
            });
        }
        o.session = Some(session);
        let h = self.new_handle();
        self.objects.insert(h, Arc::new(o));
        Ok(h)
    }

    /// Replaces an object's attributes (C_SetAttributeValue), in the store too.
    pub fn replace(&mut self, h: CK_OBJECT_HANDLE, mut o: Object) -> Rv {
        if o.is_token() {
            let rec = o.record(self.dk.as_ref())?;
            o.raw = rec.clone();
            let id = o.id.clone();
            return self.change(|t| {
                if !t.by_id.contains_key(&id) {
                    return Err(CKR_OBJECT_HANDLE_INVALID);
                }
                t.store.write(&id, &rec).map_err(io_err)?;
                t.objects.insert(h, Arc::new(o));
                Ok(())
            });
        }
        self.objects.insert(h, Arc::new(o));
        Ok(())
    }

    pub fn destroy(&mut self, h: CK_OBJECT_HANDLE) -> Rv {
        let o = self
            .objects
            .get(&h)
            .cloned()
            .ok_or(CKR_OBJECT_HANDLE_INVALID)?;
        if o.is_token() {
            self.change(|t| {
                t.store.remove(&o.id).map_err(io_err)?;
                t.by_id.remove(&o.id);
                t.objects.remove(&h);
                Ok(())
            })
        } else {
            self.objects.remove(&h);
            Ok(())
        }
    }

    /// The session objects of a closed session go.
    pub fn drop_session_objects(&mut self, s: CK_SESSION_HANDLE) {
        self.objects.retain(|_, o| o.session != Some(s));
    }

    /// Handles of the visible objects that match `t` (every given attribute equal).
    pub fn find(&self, t: &Template) -> Vec<CK_OBJECT_HANDLE> {
        let mut v: Vec<CK_OBJECT_HANDLE> = self
            .objects
            .iter()
            .filter(|(_, o)| self.visible(o) && attr::matches(&o.attrs, t) && secret_matches(o, t))
            .map(|(h, _)| *h)
            .collect();
        v.sort_unstable();
        v
    }
}

/// A search naming a secret attribute (CKA_VALUE of a private key) matches only where it may
/// be read; objects whose secret is not in the clear never match it.
fn secret_matches(o: &Object, t: &Template) -> bool {
    t.iter()
        .filter(|(ty, _)| object::SECRET_ATTRS.contains(ty) && !o.attrs.contains_key(ty))
        .all(|(ty, v)| {
            !o.flag(CKA_SENSITIVE)
                && o.flag(CKA_EXTRACTABLE)
                && o.secret_value(*ty) == Some(v.as_slice())
        })
}

fn failure_flags(failures: u32, max: u32, [low, final_try, locked]: [CK_FLAGS; 3]) -> CK_FLAGS {
    if failures >= max {
        locked
    } else if failures + 1 == max {
        final_try | low
    } else if failures > 0 {
        low
    } else {
        0
    }
}

fn wrapped_json(w: &Wrapped) -> serde_json::Value {
    serde_json::json!({
        "memory_kib": w.cost.memory_kib,
        "iterations": w.cost.iterations,
        "salt": hex::encode(&w.salt),
        "sealed": hex::encode(&w.sealed),
    })
}

fn parse_wrapped(v: &serde_json::Value) -> Option<Wrapped> {
    Some(Wrapped {
        cost: Cost {
            memory_kib: u32::try_from(v.get("memory_kib")?.as_u64()?).ok()?,
            iterations: u32::try_from(v.get("iterations")?.as_u64()?).ok()?,
        },
        salt: hex::decode(v.get("salt")?.as_str()?).ok()?,
        sealed: hex::decode(v.get("sealed")?.as_str()?).ok()?,
    })
}

fn meta_record(m: &Meta) -> Vec<u8> {
    let v = serde_json::json!({
        "label": m.label,
        "serial": m.serial,
        "so": wrapped_json(&m.so),
        "user": m.user.as_ref().map(wrapped_json),
        "user_failures": m.user_failures,
        "so_failures": m.so_failures,
    });
    v.to_string().into_bytes()
}

fn parse_meta(b: &[u8]) -> Option<Meta> {
    let v: serde_json::Value = serde_json::from_slice(b).ok()?;
    Some(Meta {
        label: v.get("label")?.as_str()?.to_string(),
        serial: v.get("serial")?.as_str()?.to_string(),
        so: parse_wrapped(v.get("so")?)?,
        user: match v.get("user")? {
            serde_json::Value::Null => None,
            u => Some(parse_wrapped(u)?),
        },
        user_failures: u32::try_from(v.get("user_failures")?.as_u64()?).ok()?,
        so_failures: u32::try_from(v.get("so_failures")?.as_u64()?).ok()?,
    })
}
