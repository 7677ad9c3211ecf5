//! Which config fields a run reads, and the warning for a value the user set that it does not.
//!
//! A field is either always read or read only under a condition on other fields (a parameter
//! of a function that is off, a traffic-model knob of another `flow.app`, …). Each config
//! table says which of its fields are which ([`FieldUse`]: the two lists together must be its
//! fields, which a test of each table checks against its JSON Schema with [`classified`]), and
//! its `unread` function reports, for the values at hand, the conditional fields the run will
//! not read and why ([`Unreads`]). Values are range-checked whether or not they are read; an
//! unread value the user set is a warning, not an error, because sweeps toggle a function with
//! its parameters fixed.
//!
//! What "the user set" means: a key of the user's table (their file, `--set`) whose value
//! differs from the built-in scenario's own file ([`set_leaves`]); a shipped scenario's
//! template keys are defaults, not settings.

use schemars::JsonSchema;
use std::collections::BTreeSet;

/// A config field the run does not read with these values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unread {
    /// Dotted path of the field (or of a whole table, e.g. `flow.video`).
    pub path: String,
    /// The setting that makes it so, e.g. `functions.proxy.mode = "off"`.
    pub because: String,
}

/// The unread fields of a config, collected table by table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unreads(pub Vec<Unread>);

impl Unreads {
    /// Unless `read`, the `fields` of table `prefix` are not read, because of `because()`.
    pub fn unless(
        &mut self,
        read: bool,
        prefix: &str,
        fields: &[&str],
        because: impl FnOnce() -> String,
    ) {
        if read || fields.is_empty() {
            return;
        }
        let because = because();
        for f in fields {
            self.0.push(Unread {
                path: join(prefix, f),
                because: because.clone(),
            });
        }
    }
    /// Forget what was said of `path` (a caller that reads it after all, e.g. a scenario that
    /// runs a UDP reference from `flow.udp_rate` whatever `flow.app`).
    pub fn read_after_all(&mut self, path: &str) {
        self.0.retain(|u| u.path != path);
    }
    /// The warnings for the `set` leaves (dotted paths) that fall in an unread field: one per
    /// leaf, in the order of `set`, each naming the leaf and the first reason found.
    pub fn warnings<'a>(&self, set: impl IntoIterator<Item = &'a str>) -> Vec<String> {
        let mut out = Vec::new();
        let mut seen = BTreeSet::new();
        for leaf in set {
            let hit = self.0.iter().find(|u| {
                leaf == u.path
                    || leaf
                        .strip_prefix(u.path.as_str())
                        .is_some_and(|r| r.starts_with('.'))
            });
            if let Some(u) = hit {
                if seen.insert(leaf.to_string()) {
                    out.push(format!("{leaf} is set but {}: it has no effect", u.because));
                }
            }
        }
        out
    }
}

fn join(prefix: &str, field: &str) -> String {
    if prefix.is_empty() {
        field.to_string()
    } else {
        format!("{prefix}.{field}")
    }
}

/// Which fields of a config table are always read and which only under a condition (the
/// ones its `unread` may name). Together they are the table's fields ([`classified`]).
pub trait FieldUse {
    const ALWAYS: &'static [&'static str];
    const CONDITIONAL: &'static [&'static str];
}

/// The field lists `parts` one after the other, for a [`FieldUse::CONDITIONAL`] made of named
/// groups that `unread` also names (`N`: their total length, e.g.
/// `{ A.len() + B.len() }`; a wrong `N` fails to compile).
pub const fn concat<const N: usize>(parts: &[&[&'static str]]) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut i, mut n) = (0, 0);
    while i < parts.len() {
        let mut j = 0;
        while j < parts[i].len() {
            out[n] = parts[i][j];
            n += 1;
            j += 1;
        }
        i += 1;
    }
    assert!(n == N, "concat: N is not the total length of the parts");
    out
}

/// `Err` naming the fields of `T`'s JSON Schema that `T`'s [`FieldUse`] does not classify
/// (or classifies twice, or that are not fields): the drift check of each table's test.
pub fn classified<T: FieldUse + JsonSchema>() -> Result<(), String> {
    let schema = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
    let fields: BTreeSet<String> = schema
        .get("properties")
        .and_then(|p| p.as_object())
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let always: BTreeSet<String> = T::ALWAYS.iter().map(|s| s.to_string()).collect();
    let cond: BTreeSet<String> = T::CONDITIONAL.iter().map(|s| s.to_string()).collect();
    let mut errs = Vec::new();
    let listed: BTreeSet<String> = always.union(&cond).cloned().collect();
    for f in fields.difference(&listed) {
        errs.push(format!("{f} is neither ALWAYS nor CONDITIONAL"));
    }
    for f in listed.difference(&fields) {
        errs.push(format!("{f} is listed but is no field"));
    }
    for f in always.intersection(&cond) {
        errs.push(format!("{f} is both ALWAYS and CONDITIONAL"));
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(format!("{}: {}", T::schema_name(), errs.join("; ")))
    }
}

/// The leaves (dotted paths) of `user` whose value differs from `defaults` at the same path or
/// that `defaults` lacks: what the user set. Arrays are leaves.
pub fn set_leaves(user: &toml::Table, defaults: &toml::Table) -> Vec<String> {
    let mut out = Vec::new();
    walk(user, Some(defaults), "", &mut out);
    out
}

fn walk(user: &toml::Table, defaults: Option<&toml::Table>, prefix: &str, out: &mut Vec<String>) {
    for (k, v) in user {
        let path = join(prefix, k);
        let d = defaults.and_then(|t| t.get(k));
        match v {
            toml::Value::Table(t) => walk(t, d.and_then(|d| d.as_table()), &path, out),
            _ => {
                if d != Some(v) {
                    out.push(path);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concat_lists_the_groups_in_order() {
        const A: &[&str] = &["a", "b"];
        const B: &[&str] = &["c"];
        const AB: [&str; A.len() + B.len()] = concat(&[A, B]);
        assert_eq!(AB, ["a", "b", "c"]);
    }

    #[test]
    fn set_leaves_are_the_values_that_differ_from_the_defaults() {
        let d = crate::parse_toml("a = 1\n[t]\nb = 2\nc = \"x\"\n", "d").unwrap();
        let u =
            crate::parse_toml("a = 1\nz = 0\n[t]\nb = 3\nc = \"x\"\n[n]\nm = [1]\n", "u").unwrap();
        assert_eq!(set_leaves(&u, &d), ["n.m", "t.b", "z"]);
    }

    #[test]
    fn a_warning_names_the_leaf_under_an_unread_table_once() {
        let mut u = Unreads::default();
        u.unless(false, "flow", &["video"], || "flow.app = \"bulk\"".into());
        u.unless(true, "flow", &["bytes"], || unreachable!());
        u.unless(false, "f", &["x"], || "f.on = false".into());
        let w = u.warnings(["flow.video.preset", "flow.bytes", "f.x", "f.xy", "f.x"]);
        assert_eq!(
            w,
            [
                "flow.video.preset is set but flow.app = \"bulk\": it has no effect",
                "f.x is set but f.on = false: it has no effect",
            ]
        );
    }
}
