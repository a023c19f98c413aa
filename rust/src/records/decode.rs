//! Decoding runs of journal lines into index rows, in parallel, proving what it keeps.

use rayon::prelude::*;
use serde_json::{Map, Value};

use super::rules::{self, proves};
use super::schema::{Derive, Rule, Schema, IMPORTANCE_BAND, TIME_BUCKETS};
use crate::error::{CoreError, Result};

/// What a line of the run became.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line {
    /// The `i`-th row of the run.
    Row(u32),
    /// Left to the caller: bytes `start..end` of the run (the line and its `\n`).
    Deferred { start: usize, end: usize },
}

/// One proven episode, as the indexes take it.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub id: String,
    /// `(cue dimension, value)`, dimensions by their place in the schema's cues.
    pub cues: Vec<(u16, String)>,
    pub axes: Vec<f32>,
    pub confidence: f32,
    /// The reference time: midnight UTC of the day it occurred, in seconds since the epoch.
    pub t: f64,
    pub sources: Vec<String>,
    pub narrative: String,
    /// The kept fields' values (as strings), for the rows the decoder was asked to track.
    pub tracked: Option<Vec<String>>,
    /// Byte range of the line in the run (its `\n` included).
    pub start: usize,
    pub end: usize,
}

/// A decoded run: every line in order, and the rows of the proven ones.
#[derive(Debug, Default)]
pub struct Decoded {
    pub lines: Vec<Line>,
    pub rows: Vec<Row>,
}

/// The compiled schema plus what a run's lines are read for.
#[derive(Clone, Debug)]
pub struct Decoder {
    schema: Schema,
    /// The record kind that carries an episode (`{"op": op, "episode": {...}}`).
    op: String,
    /// Rows whose field (slot) holds the value are tracked: the string values of the kept fields.
    track: Option<(usize, String, Vec<usize>)>,
}

impl Decoder {
    /// A decoder of `op` records under `schema`, tracking rows whose field `track.0` is
    /// `track.1`: it keeps their fields `track.2`.
    ///
    /// # Errors
    /// [`CoreError::InvalidArgument`] when `track` names a field the schema lacks.
    pub fn new(schema: Schema, op: String, track: Option<(String, String, Vec<String>)>) -> Result<Decoder> {
        let slot = |field: &String| schema.index.get(field).copied().ok_or_else(|| CoreError::InvalidArgument { name: "track", reason: format!("the schema declares no field {field:?}") });
        let track = match track {
            None => None,
            Some((field, value, keep)) => Some((slot(&field)?, value, keep.iter().map(slot).collect::<Result<Vec<_>>>()?)),
        };
        Ok(Decoder { schema, op, track })
    }

    /// The schema it runs.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// Decodes `run`: whole lines, each ending in `\n` (a last line without one is deferred).
    pub fn decode(&self, run: &[u8]) -> Decoded {
        let mut spans = Vec::new();
        let mut start = 0;
        while start < run.len() {
            let end = run[start..].iter().position(|&b| b == b'\n').map_or(run.len(), |i| start + i + 1);
            spans.push((start, end));
            start = end;
        }
        let parsed: Vec<Option<Row>> = crate::pool::install(|| {
            spans.par_iter().with_min_len(256).map(|&(s, e)| if run[e - 1] == b'\n' { self.row(&run[s..e], s, e) } else { None }).collect()
        });
        let mut out = Decoded { lines: Vec::with_capacity(spans.len()), rows: Vec::with_capacity(spans.len()) };
        for ((s, e), row) in spans.into_iter().zip(parsed) {
            match row {
                Some(row) => {
                    out.lines.push(Line::Row(out.rows.len() as u32));
                    out.rows.push(row);
                }
                None => out.lines.push(Line::Deferred { start: s, end: e }),
            }
        }
        out
    }

    /// The row of one line, if it is an episode record the core can prove.
    fn row(&self, line: &[u8], start: usize, end: usize) -> Option<Row> {
        // Records are written with sorted keys: an episode record starts so.
        if !line.starts_with(b"{\"episode\":{") {
            return None;
        }
        let Value::Object(mut top) = serde_json::from_slice::<Value>(line).ok()? else { return None };
        if top.len() != 2 || top.get("op").and_then(Value::as_str) != Some(self.op.as_str()) {
            return None;
        }
        let Value::Object(episode) = top.remove("episode")? else { return None };
        self.episode(&episode, start, end)
    }

    fn episode(&self, ep: &Map<String, Value>, start: usize, end: usize) -> Option<Row> {
        let schema = &self.schema;
        let slots = &schema.slots;
        // Each field's value (given, or its default), by slot.
        let mut values: Vec<Option<&Value>> = vec![None; schema.fields.len()];
        for (key, value) in ep {
            match schema.index.get(key) {
                Some(&i) => values[i] = Some(value),
                None if key == TIME_BUCKETS || key == IMPORTANCE_BAND => {}
                None => return None,
            }
        }
        for (i, field) in schema.fields.iter().enumerate() {
            match values[i] {
                Some(v) => {
                    if !matches!(field.rule, Rule::Salience | Rule::Metadata) && !proves(&field.rule, v) {
                        return None;
                    }
                }
                None if field.required => return None,
                None => values[i] = field.default.as_ref(), // None: derived below
            }
        }
        let get = |slot: usize| values[slot];
        let id = get(slots.id)?.as_str()?;
        // Absent, occurred_at would be derived from recorded_at: left to the validator.
        let occurred = get(slots.occurred_at)?.as_str()?.to_owned();
        let occurred_day = rules::date(&occurred)?;
        let valid_from = match get(slots.valid_from) {
            Some(v) => rules::instant(v.as_str()?)?,
            None => occurred_day * 86_400_000_000,
        };
        if let Some(Value::String(end)) = get(slots.valid_to) {
            if rules::instant(end)? <= valid_from {
                return None;
            }
        }
        if get(slots.supersedes).and_then(Value::as_str) == Some(id) {
            return None;
        }
        // Derived keys, when present, agree.
        if let Some(given) = ep.get(TIME_BUCKETS) {
            let buckets = [&occurred[..4], &occurred[..7], &occurred[..]];
            let Value::Array(items) = given else { return None };
            if items.len() != 3 || items.iter().zip(buckets).any(|(v, b)| v.as_str() != Some(b)) {
                return None;
            }
        }
        let importance = rules::unit(get(slots.band_of)?)?;
        let band = schema.band().iter().find(|(floor, _)| importance >= *floor).map(|(_, name)| name.as_str())?;
        if let Some(given) = ep.get(IMPORTANCE_BAND) {
            if given.as_str() != Some(band) {
                return None;
            }
        }
        let axes = self.axes(&values)?;
        let mut cues: Vec<(u16, String)> = Vec::with_capacity(16);
        for (d, cue) in schema.cues.iter().enumerate() {
            let field = |k: usize| cue.fields.get(k).and_then(|name| schema.index.get(name)).and_then(|&slot| values[slot]);
            let mut found: Vec<String> = Vec::new();
            match &cue.derive {
                Derive::Value => {
                    if let Some(Value::String(s)) = field(0) {
                        if !s.is_empty() {
                            found.push(s.clone());
                        }
                    }
                }
                Derive::Values => {
                    if let Some(Value::Array(items)) = field(0) {
                        found.extend(items.iter().filter_map(Value::as_str).map(str::to_owned));
                    }
                }
                Derive::Buckets => found.extend([occurred[..4].to_owned(), occurred[..7].to_owned(), occurred.clone()]),
                Derive::Band(_) => found.push(band.to_owned()),
                Derive::Trust(marks) => {
                    if field(0) != Some(&Value::Bool(true)) {
                        found.push(marks[0].clone());
                    }
                    if field(1) != Some(&Value::Bool(false)) {
                        found.push(marks[1].clone());
                    }
                }
                Derive::Meta => match field(0) {
                    None | Some(Value::Null) => {}
                    Some(Value::Object(m)) if m.is_empty() => {}
                    Some(_) => return None, // the caller's own object: left to the validator
                },
            }
            if cue.folded {
                let mut folded: Vec<String> = Vec::with_capacity(found.len());
                for v in &found {
                    let f = rules::fold(v)?;
                    if !folded.contains(&f) {
                        folded.push(f);
                    }
                }
                found = folded;
            }
            cues.extend(found.into_iter().map(|v| (d as u16, v)));
        }
        let sources = match get(slots.sources) {
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
            _ => Vec::new(),
        };
        let tracked = match &self.track {
            Some((slot, want, keep)) if values[*slot].and_then(Value::as_str) == Some(want.as_str()) => {
                Some(keep.iter().map(|&k| values[k].and_then(Value::as_str).map(str::to_owned)).collect::<Option<Vec<String>>>()?)
            }
            _ => None,
        };
        Some(Row {
            id: id.to_owned(),
            cues,
            axes,
            confidence: rules::unit(get(slots.confidence)?)? as f32,
            t: occurred_day as f64 * 86_400.0,
            sources,
            narrative: get(slots.narrative)?.as_str()?.to_owned(),
            tracked,
            start,
            end,
        })
    }

    /// The salience axes: the given ones (each a unit number, no unknown axis), zero for
    /// the missing, and the fields of the same names (importance, risk), which a given
    /// axis must equal.
    fn axes(&self, values: &[Option<&Value>]) -> Option<Vec<f32>> {
        let schema = &self.schema;
        let mut axes = vec![0.0f64; schema.axes.len()];
        match values[schema.slots.salience] {
            None | Some(Value::Null) => {}
            Some(Value::Object(given)) => {
                for (axis, v) in given {
                    let a = schema.axes.iter().position(|name| name == axis)?;
                    axes[a] = rules::unit(v)?;
                }
                for &(field, a) in &schema.slots.axis_fields {
                    let value = rules::unit(values[field]?)?;
                    if given.contains_key(&schema.axes[a]) && axes[a] != value {
                        return None;
                    }
                }
            }
            Some(_) => return None,
        }
        for &(field, a) in &schema.slots.axis_fields {
            axes[a] = rules::unit(values[field]?)?;
        }
        Some(axes.into_iter().map(|x| x as f32).collect())
    }
}
