//! rantcp-config: loading a config — TOML text, `--set path=value` overrides, typed
//! deserialisation with the failing field's path, and range validation — for scenarios
//! (rantcp-scenario) and network functions (rantcp-functions) alike. Every error is one line
//! naming the field path and what is allowed; [`reads`] says which fields a run reads and
//! warns of the values set that it does not. [`units`] holds the quantities written with
//! units in config values.

pub mod reads;
pub mod units;

use serde::de::DeserializeOwned;
use std::fmt;

/// A config problem: the dotted field path (empty for whole-file problems) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub path: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        // Always one line.
        let msg = self.message.replace('\n', " ");
        if self.path.is_empty() {
            write!(f, "{msg}")
        } else {
            write!(f, "{}: {msg}", self.path)
        }
    }
}

impl std::error::Error for ConfigError {}

/// Parse TOML text into a table; syntax errors become `source:line:col: message`.
pub fn parse_toml(text: &str, source: &str) -> Result<toml::Table, ConfigError> {
    text.parse::<toml::Table>().map_err(|e| {
        let (line, col) = match e.span() {
            Some(span) => {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                (line, col)
            }
            None => (0, 0),
        };
        ConfigError::new(
            "",
            format!(
                "{source}:{line}:{col}: invalid TOML: {}",
                e.message().trim()
            ),
        )
    })
}

/// Interpret an override's text as a TOML value (`1e-3`, `true`, `"x"`, `[1, 2]`), or as a
/// plain string when it is not one (`50Mbps`).
pub fn override_value(text: &str) -> toml::Value {
    let doc = format!("v = {text}");
    match doc.parse::<toml::Table>() {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| toml::Value::String(text.to_string())),
        Err(_) => toml::Value::String(text.to_string()),
    }
}

/// Set `path` (dotted) in `table` to `value`, creating intermediate tables.
pub fn set_path(
    table: &mut toml::Table,
    path: &str,
    value: toml::Value,
) -> Result<(), ConfigError> {
    let parts: Vec<&str> = path.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(ConfigError::new(
            path,
            "override path must be dotted field names like bottleneck.rate",
        ));
    }
    let mut cur = table;
    for (i, p) in parts[..parts.len() - 1].iter().enumerate() {
        let entry = cur
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        cur = match entry {
            toml::Value::Table(t) => t,
            _ => {
                return Err(ConfigError::new(
                    parts[..=i].join("."),
                    "is not a table, cannot set a field inside it",
                ))
            }
        };
    }
    cur.insert(parts[parts.len() - 1].to_string(), value);
    Ok(())
}

/// Deserialise a typed config from a table, reporting the failing field's path.
pub fn from_table<T: DeserializeOwned>(table: toml::Table) -> Result<T, ConfigError> {
    let v = toml::Value::Table(table);
    serde_path_to_error::deserialize::<_, T>(v).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let mut msg = e.inner().to_string();
        // toml adds a trailing newline and sometimes a span preamble; keep the message only.
        msg = msg
            .lines()
            .filter(|l| !l.trim().is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        // The toml deserializer appends " in `path`"; the path is already in front.
        if let Some(i) = msg.rfind(" in `") {
            if msg.ends_with('`') {
                msg.truncate(i);
            }
        }
        ConfigError::new(path, msg)
    })
}

/// Range check helper: `Err` naming `path` unless `ok`.
pub fn check(ok: bool, path: &str, allowed: impl Into<String>) -> Result<(), ConfigError> {
    if ok {
        Ok(())
    } else {
        Err(ConfigError::new(path, allowed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn override_values_are_typed_when_they_can_be() {
        assert_eq!(override_value("1e-3"), toml::Value::Float(1e-3));
        assert_eq!(override_value("1400"), toml::Value::Integer(1400));
        assert_eq!(override_value("true"), toml::Value::Boolean(true));
        assert_eq!(
            override_value("50Mbps"),
            toml::Value::String("50Mbps".into())
        );
        assert_eq!(
            override_value("\"cubic\""),
            toml::Value::String("cubic".into())
        );
    }
    #[test]
    fn set_path_creates_tables_and_refuses_scalars() {
        let mut t = parse_toml("a = 1\n[b]\nc = 2\n", "x").unwrap();
        set_path(&mut t, "b.d.e", toml::Value::Integer(3)).unwrap();
        assert_eq!(t["b"]["d"]["e"].as_integer(), Some(3));
        let e = set_path(&mut t, "a.x", toml::Value::Integer(3)).unwrap_err();
        assert_eq!(e.path, "a");
    }
    #[test]
    fn syntax_errors_are_one_line_with_position() {
        let e = parse_toml("a = 1\nb = = 2\n", "f.toml").unwrap_err();
        let s = e.to_string();
        assert!(s.starts_with("f.toml:2:"), "{s}");
        assert!(!s.contains('\n'));
    }
}
