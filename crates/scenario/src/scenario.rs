//! What every scenario shares: the [`Common`] fields at the top level of every scenario file
//! (scenario, duration, seed, output, functions), the [`Scenario`] trait each kind of scenario
//! implements, and the loading of a file into a [`ScenarioConfig`].
//!
//! A scenario file is read as: the built-in scenario it names gives the defaults (its TOML file,
//! over which the user's table is merged), the common keys are split off into [`Common`], and
//! the rest goes to the kind's own type (unknown keys refused in both).

use crate::common::{FlowConfig, OutputConfig};
use crate::config::reads::{set_leaves, FieldUse, Unreads};
use crate::config::{check, from_table, ConfigError};
use crate::units::Dur;
use crate::{Builtin, BUILTINS};
use rantcp_core::{Duration, Time};
use rantcp_functions::{BuildEnv, FunctionsConfig, RadioFacts};
use rantcp_net::{FlowKind, FlowSpec, Sim};
use rantcp_nf::{FlowKey, NetworkFunction, Site};
use rantcp_wire::{PROTO_TCP, PROTO_UDP};
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;

/// The built-in scenario a file configures, by name (one of [`BUILTINS`]).
#[derive(Clone, Copy)]
pub struct ScenarioName(pub &'static Builtin);

impl ScenarioName {
    fn allowed() -> String {
        let names: Vec<&str> = BUILTINS.iter().map(|b| b.name).collect();
        names.join(", ")
    }
    /// The built-in named `name`.
    pub fn find(name: &str) -> Result<ScenarioName, String> {
        BUILTINS
            .iter()
            .find(|b| b.name == name)
            .map(ScenarioName)
            .ok_or_else(|| format!("unknown scenario {name:?}; allowed: {}", Self::allowed()))
    }
}
impl fmt::Debug for ScenarioName {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{:?}", self.0.name)
    }
}
impl PartialEq for ScenarioName {
    fn eq(&self, o: &Self) -> bool {
        self.0.name == o.0.name
    }
}
impl Serialize for ScenarioName {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.name)
    }
}
impl<'de> Deserialize<'de> for ScenarioName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        ScenarioName::find(&s).map_err(de::Error::custom)
    }
}
impl JsonSchema for ScenarioName {
    fn schema_name() -> Cow<'static, str> {
        "ScenarioName".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let names: Vec<&str> = BUILTINS.iter().map(|b| b.name).collect();
        json_schema!({ "description": "A built-in scenario", "type": "string", "enum": names })
    }
}

/// Largest seed: TOML integers are i64, so seeds span 0..=2^63-1 everywhere (sweeps derive
/// them so too).
pub const MAX_SEED: u64 = i64::MAX as u64;

fn seed_de<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    struct V;
    impl de::Visitor<'_> for V {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "an integer from 0 to {MAX_SEED}")
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
            u64::try_from(v)
                .map_err(|_| E::custom(format!("{v} is out of range (allowed: 0 to {MAX_SEED})")))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
            if v <= MAX_SEED {
                Ok(v)
            } else {
                Err(E::custom(format!(
                    "{v} is out of range (allowed: 0 to {MAX_SEED})"
                )))
            }
        }
        fn visit_str<E: de::Error>(self, s: &str) -> Result<u64, E> {
            // `--set seed=N` with N beyond i64 arrives as text.
            match s.trim().parse::<u64>() {
                Ok(v) => self.visit_u64(v),
                Err(_) => Err(E::custom(format!(
                    "{s:?} is not an integer from 0 to {MAX_SEED}"
                ))),
            }
        }
    }
    d.deserialize_any(V)
}

fn d_seed() -> u64 {
    1
}

/// The fields every scenario has. Defaults: the named built-in's file.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Common {
    /// The built-in scenario this file configures; its file gives every default.
    pub scenario: ScenarioName,
    /// Simulated time.
    pub duration: Dur,
    /// Run seed (`--seed` overrides it).
    #[serde(default = "d_seed", deserialize_with = "seed_de")]
    #[schemars(range(max = 9_223_372_036_854_775_807u64))]
    pub seed: u64,
    /// What a run writes besides summary.json.
    #[serde(default)]
    pub output: OutputConfig,
    /// Network functions, one table per kind, all off by default.
    #[serde(default)]
    pub functions: FunctionsConfig,
}

/// Every common field is read; what their tables read is said table by table.
impl FieldUse for Common {
    const ALWAYS: &'static [&'static str] = &COMMON_KEYS;
    const CONDITIONAL: &'static [&'static str] = &[];
}

/// The keys of [`Common`] at the top level of a scenario file.
const COMMON_KEYS: [&str; 5] = ["scenario", "duration", "seed", "output", "functions"];

impl Common {
    /// Simulated end of the run.
    pub fn end(&self) -> Time {
        Time::ZERO + self.duration.d()
    }
    /// The output and function fields the run does not read.
    pub fn unread(&self, out: &mut Unreads) {
        self.output.unread("output", out);
        self.functions.unread("functions", out);
    }
    fn validate(&self, max_duration: Duration) -> Result<(), ConfigError> {
        check(
            self.duration.0 > Duration::ZERO && self.duration.0 <= max_duration,
            "duration",
            format!("must be > 0 and <= {}", Dur(max_duration)),
        )?;
        self.output.validate("output")?;
        self.functions.validate("functions")
    }
}

/// One network a scenario built, labelled ("" when the scenario builds one).
pub struct Network {
    pub label: String,
    pub sim: Sim,
}

impl Network {
    /// The only network of a scenario.
    pub fn single(sim: Sim) -> Vec<Network> {
        vec![Network {
            label: String::new(),
            sim,
        }]
    }
}

/// A kind of scenario: its own config fields, checked and built.
pub trait Scenario: fmt::Debug + Send + Sync {
    /// Longest run allowed.
    fn max_duration(&self) -> Duration {
        Duration::from_secs(86_400)
    }
    /// Range checks of the scenario's own fields (`common` is already checked), whether or
    /// not the run reads them.
    fn validate(&self, common: &Common) -> Result<(), ConfigError>;
    /// The scenario's own fields (paths from the top of the file) that this config does not
    /// read, with the setting that makes it so (see [`crate::config::reads`]).
    fn unread(&self, common: &Common, out: &mut Unreads);
    /// Build the networks with the functions `common.functions` asks for. Errors are
    /// function configs naming what the network lacks.
    fn build(&self, common: &Common) -> Result<Vec<Network>, ConfigError>;
    /// The scenario's own fields as a JSON object, in declaration order.
    fn to_json(&self) -> serde_json::Value;
}

/// A scenario type as the registry reads it.
pub trait ScenarioKind: Scenario + JsonSchema + Sized + 'static {
    /// Read the scenario's own keys (the common keys are already removed).
    fn from_table(t: toml::Table) -> Result<Self, ConfigError>;
}

/// How to read and describe one kind of scenario ([`kind`] makes one).
#[derive(Clone, Copy)]
pub struct Kind {
    parse: fn(toml::Table) -> Result<Box<dyn Scenario>, ConfigError>,
    schema: fn(&mut SchemaGenerator) -> Schema,
    name: fn() -> Cow<'static, str>,
}

/// The registry entry of scenario type `T`.
pub const fn kind<T: ScenarioKind>() -> Kind {
    fn parse<T: ScenarioKind>(t: toml::Table) -> Result<Box<dyn Scenario>, ConfigError> {
        Ok(Box::new(T::from_table(t)?))
    }
    Kind {
        parse: parse::<T>,
        schema: full_schema::<T>,
        name: T::schema_name,
    }
}

/// The schema of a whole file of scenario type `T`: the common fields and `T`'s.
fn full_schema<T: ScenarioKind>(g: &mut SchemaGenerator) -> Schema {
    let common = Common::json_schema(g);
    let own = T::json_schema(g);
    let obj = |s: &Schema, k: &str| s.get(k).cloned().unwrap_or(serde_json::json!({}));
    let (cp, op) = (obj(&common, "properties"), obj(&own, "properties"));
    let mut props = serde_json::Map::new();
    // The order of a file: scenario, duration, seed, the scenario's own, output, functions.
    for (k, v) in cp.as_object().into_iter().flatten().take(3) {
        props.insert(k.clone(), v.clone());
    }
    for (k, v) in op.as_object().into_iter().flatten() {
        props.insert(k.clone(), v.clone());
    }
    for (k, v) in cp.as_object().into_iter().flatten().skip(3) {
        props.insert(k.clone(), v.clone());
    }
    // Only `scenario` is required in a file: the named built-in's file gives every other field.
    let mut s = json_schema!({
        "type": "object",
        "properties": props,
        "additionalProperties": false,
        "required": ["scenario"],
    });
    if let Some(d) = own.get("description") {
        s.insert("description".into(), d.clone());
    }
    s
}

/// A loaded, validated scenario config.
#[derive(Debug)]
pub struct ScenarioConfig {
    pub common: Common,
    pub spec: Box<dyn Scenario>,
    /// One line per value the user set that the run does not read (`rantcp run` prints them,
    /// summary.json lists them under `warnings` when there are any).
    pub warnings: Vec<String>,
}

impl ScenarioConfig {
    /// The built-in scenario's name.
    pub fn name(&self) -> &'static str {
        self.common.scenario.0.name
    }
    pub fn seed(&self) -> u64 {
        self.common.seed
    }
    pub fn duration(&self) -> Duration {
        self.common.duration.d()
    }
    pub fn output(&self) -> &OutputConfig {
        &self.common.output
    }
    /// The effective config as JSON (units written back as strings), echoed in summary.json:
    /// scenario, duration, seed, the scenario's own fields, output, functions.
    pub fn to_json(&self) -> serde_json::Value {
        let c = serde_json::to_value(&self.common).expect("config serialises");
        let mut m = serde_json::Map::new();
        let c = c.as_object().expect("an object");
        for k in ["scenario", "duration", "seed"] {
            m.insert(k.into(), c[k].clone());
        }
        if let serde_json::Value::Object(own) = self.spec.to_json() {
            m.extend(own);
        }
        for k in ["output", "functions"] {
            m.insert(k.into(), c[k].clone());
        }
        serde_json::Value::Object(m)
    }
    /// Every field this config does not read, with why.
    pub fn unread(&self) -> Unreads {
        let mut out = Unreads::default();
        self.common.unread(&mut out);
        self.spec.unread(&self.common, &mut out);
        out
    }
    /// Build the networks and their functions.
    pub fn build(&self) -> Result<Vec<Network>, ConfigError> {
        self.spec.build(&self.common)
    }
}

/// Parse, merge over the named built-in, override and validate a config. `overrides` are
/// (dotted path, value text) pairs; `seed` replaces the config's seed.
pub fn load(
    text: &str,
    source: &str,
    overrides: &[(String, String)],
    seed: Option<u64>,
) -> Result<ScenarioConfig, ConfigError> {
    let mut table = crate::config::parse_toml(text, source)?;
    for (path, value) in overrides {
        crate::config::set_path(&mut table, path, crate::config::override_value(value))?;
    }
    if let Some(s) = seed {
        let s = i64::try_from(s).map_err(|_| {
            ConfigError::new(
                "seed",
                format!("{s} is out of range (allowed: 0 to {MAX_SEED})"),
            )
        })?;
        table.insert("seed".into(), toml::Value::Integer(s));
    }
    load_table(table, true)
}

/// [`load`] from the user's table (file, overrides and seed applied). `warn`: work out the
/// warnings for values set but not read ([`ScenarioConfig::warnings`]).
fn load_table(table: toml::Table, warn: bool) -> Result<ScenarioConfig, ConfigError> {
    let builtin = match table.get("scenario") {
        Some(toml::Value::String(s)) => {
            ScenarioName::find(s).map_err(|e| ConfigError::new("scenario", e))?
        }
        Some(_) => {
            return Err(ConfigError::new(
                "scenario",
                format!("must be a string; allowed: {}", ScenarioName::allowed()),
            ))
        }
        None => {
            return Err(ConfigError::new(
                "scenario",
                format!("missing; allowed: {}", ScenarioName::allowed()),
            ))
        }
    };
    // The built-in file gives the defaults: the user's table is merged over it.
    let b = builtin.0;
    let mut full = crate::config::parse_toml(b.toml, &format!("builtin:{}", b.name))?;
    // What the user set: the values of their table that the built-in's file does not hold.
    let set = set_leaves(&table, &full);
    let user = (warn && !set.is_empty()).then(|| table.clone());
    merge_tables(&mut full, table);
    let mut common = toml::Table::new();
    for k in COMMON_KEYS {
        if let Some(v) = full.remove(k) {
            common.insert(k.into(), v);
        }
    }
    let common: Common = from_table(common)?;
    let spec = (b.kind.parse)(full)?;
    common.validate(spec.max_duration())?;
    spec.validate(&common)?;
    let mut cfg = ScenarioConfig {
        common,
        spec,
        warnings: Vec::new(),
    };
    let functions = &cfg.common.functions;
    if functions.any_enabled() || functions.off_needs_network() {
        // Resolve the functions' node and flow names against the network now (those of a
        // function that is off too), so that `rantcp validate` and sweeps catch them before
        // any run.
        cfg.build()?;
    }
    if let Some(user) = user {
        cfg.warnings = unread_settings(&cfg, user, set);
    }
    Ok(cfg)
}

/// The warnings for the values the user set (`set`: the leaves of their table `user` whose
/// value is not the built-in file's) that the run does not read. A leaf counts as set only if
/// its effective value differs from what it would be had the user not written it (the config
/// loaded without those leaves): a default written out (an echoed config run again, where
/// `flow.stack = "rfc"` brings its own defaults) or in other units (`"0.02s"` for `"20ms"`) is
/// not a setting. If the config without them does not load, they all count.
fn unread_settings(cfg: &ScenarioConfig, mut user: toml::Table, set: Vec<String>) -> Vec<String> {
    let unread = cfg.unread();
    let candidates: Vec<String> = set
        .into_iter()
        .filter(|p| !unread.warnings(std::iter::once(p.as_str())).is_empty())
        .collect();
    if candidates.is_empty() {
        return Vec::new();
    }
    for p in &candidates {
        remove_path(&mut user, p);
    }
    let set = match load_table(user, false) {
        Ok(without) => {
            let (mine, base) = (cfg.to_json(), without.to_json());
            candidates
                .into_iter()
                .filter(|p| match (config_at(&mine, p), config_at(&base, p)) {
                    (Some(a), Some(b)) => a != b,
                    _ => true,
                })
                .collect()
        }
        Err(_) => candidates,
    };
    unread.warnings(set.iter().map(String::as_str))
}

/// The value at a dotted config path (`flow.cc`) of a config's JSON
/// ([`ScenarioConfig::to_json`]), if it is there.
pub fn config_at<'a>(cfg: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    path.split('.').try_fold(cfg, |v, k| v.get(k))
}

/// Remove the leaf at a dotted path (and nothing else) if it is there.
fn remove_path(t: &mut toml::Table, path: &str) {
    match path.split_once('.') {
        None => {
            t.remove(path);
        }
        Some((k, rest)) => {
            if let Some(toml::Value::Table(sub)) = t.get_mut(k) {
                remove_path(sub, rest);
            }
        }
    }
}

/// Merge `over` into `base` (tables recursively; other values replaced).
pub fn merge_tables(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge_tables(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// The JSON Schema of every scenario config: one object schema per kind of scenario.
pub fn config_schema() -> serde_json::Value {
    let mut g = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let mut refs: Vec<serde_json::Value> = Vec::new();
    let mut seen: Vec<Cow<'static, str>> = Vec::new();
    for b in BUILTINS {
        let name = (b.kind.name)();
        if seen.contains(&name) {
            continue;
        }
        let s = (b.kind.schema)(&mut g);
        g.definitions_mut().insert(name.to_string(), s.to_value());
        refs.push(serde_json::json!({ "$ref": format!("#/$defs/{name}") }));
        seen.push(name);
    }
    let defs = g.take_definitions(true);
    serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "ScenarioConfig",
        "description": "A rantcp scenario file: the common fields (scenario, duration, seed, output, functions) and the scenario's own. Every field but `scenario` defaults to the named built-in's value.",
        "anyOf": refs,
        "$defs": defs,
    })
}

/// The first check of every flow: it starts before the end of the run.
pub fn check_flow_start(flow: &FlowConfig, common: &Common) -> Result<(), ConfigError> {
    check(
        flow.start.0 < common.duration.0,
        "flow.start",
        format!(
            "must be before the end of the run (duration = {})",
            common.duration
        ),
    )
}

/// The largest IP packet a flow sends over a path: a full data segment (MSS payload, 20-byte IP
/// and TCP headers, 12 bytes of timestamp option with its padding when timestamps are on,
/// RFC 7323 §3 / Appendix A) or its UDP datagram.
pub fn flow_ip_packet(flow: &FlowConfig, udp_packet: Option<u64>) -> u64 {
    match udp_packet {
        Some(p) => p,
        None => flow.mss as u64 + 40 + if flow.timestamps { 12 } else { 0 },
    }
}

/// Every packet the flows send must fit the path's MTU (RFC 791: an IP datagram larger than a
/// link's MTU is fragmented or, with DF set as TCP does under PMTUD (RFC 1191), dropped; rantcp
/// does neither and refuses the configuration instead).
pub fn check_mtu(
    mtu: u64,
    mtu_path: &str,
    packet: u64,
    packet_field: &str,
) -> Result<(), ConfigError> {
    check(
        packet <= mtu,
        packet_field,
        format!("gives {packet}-byte IP packets, more than {mtu_path} = {mtu} bytes; raise {mtu_path} or lower {packet_field}"),
    )
}

/// A link that cannot carry one `packet_bytes` packet within the run is nonsense: its rate
/// must serialise one in less than the run, its one-way delay be shorter than the run.
pub fn check_link(
    rate_bps: u64,
    delay: Duration,
    path: &str,
    packet_bytes: u64,
    common: &Common,
) -> Result<(), ConfigError> {
    let run = common.duration.d();
    check(
        Duration::transmission(packet_bytes, rate_bps.max(1)) < run,
        &format!("{path}rate"),
        format!(
            "must carry one {packet_bytes}-byte packet within the run (duration = {})",
            common.duration
        ),
    )?;
    check(
        delay < run,
        &format!("{path}delay"),
        format!(
            "must be shorter than the run (duration = {})",
            common.duration
        ),
    )
}

/// What the functions' factories get: the seed, the end of the run, the network's nodes and
/// its flows' 5-tuples (data direction), and the radio's facts.
pub fn build_env(
    sim: &Sim,
    common: &Common,
    flows: &[FlowSpec],
    radio: Option<RadioFacts>,
) -> BuildEnv {
    BuildEnv {
        seed: common.seed,
        end: common.end(),
        nodes: (0..sim.node_count())
            .map(|n| (sim.node_name(n).to_string(), n))
            .collect(),
        flows: flows
            .iter()
            .map(|f| {
                let proto = match f.kind {
                    FlowKind::UdpCbr { .. } => PROTO_UDP,
                    _ => PROTO_TCP,
                };
                let key = FlowKey {
                    src: sim.node_addr(f.src),
                    dst: sim.node_addr(f.dst),
                    src_port: f.src_port,
                    dst_port: f.dst_port,
                    proto,
                };
                (f.name.clone(), key)
            })
            .collect(),
        radio,
        addrs: (0..sim.node_count()).map(|n| sim.node_addr(n)).collect(),
        flow_tcp: flows
            .iter()
            .map(|f| (f.tcp_sender.clone(), f.tcp_receiver.clone()))
            .collect(),
    }
}

/// Build `common.functions` for a network and attach the node functions to `sim`. Returns the
/// functions for the radio access network ([`Site::Ran`]) for the caller to attach there.
pub fn attach_functions(
    sim: &mut Sim,
    common: &Common,
    env: &BuildEnv,
) -> Result<Vec<Box<dyn NetworkFunction>>, ConfigError> {
    let mut ran = Vec::new();
    for a in common.functions.build("functions", env)? {
        match a.site {
            Site::Node(n) => sim.add_function(n, a.function),
            Site::Ran => ran.push(a.function),
        }
    }
    Ok(ran)
}
