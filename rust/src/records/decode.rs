//! Decoding runs of journal lines into index rows, in parallel, proving what it keeps.

use rayon::prelude::*;

use super::rules::{self, proves};
use super::schema::{Derive, Rule, Schema, IMPORTANCE_BAND, TIME_BUCKETS};
use super::value::{self, Members, Val};
use crate::error::{CoreError, Result};

/// Lines from which a run is decoded in parallel, in chunks of half as many.
const PARALLEL_LINES: usize = 512;

/// What a line of the run became.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line {
    /// The `i`-th row of the run.
    Row(u32),
    /// Left to the caller: bytes `start..end` of the run (the line and its `\n`).
    Deferred { start: usize, end: usize },
}

/// One proven episode, as the indexes take it.
#[derive(Clone, Debug, Default, PartialEq)]
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
    /// By slot: the field is written only when set (an encoded write leaves it out when null).
    sparse: Vec<bool>,
    /// The keys of an encoded episode, sorted.
    order: Vec<(String, super::encode::Emit)>,
}

impl Decoder {
    /// A decoder of `op` records under `schema`, tracking rows whose field `track.0` is
    /// `track.1`: it keeps their fields `track.2`.
    ///
    /// # Errors
    /// [`CoreError::InvalidArgument`] when `track` names a field the schema lacks.
    pub fn new(
        schema: Schema,
        op: String,
        track: Option<(String, String, Vec<String>)>,
    ) -> Result<Decoder> {
        let slot = |field: &String| {
            schema
                .slot(field)
                .ok_or_else(|| CoreError::InvalidArgument {
                    name: "track",
                    reason: format!("the schema declares no field {field:?}"),
                })
        };
        let track = match track {
            None => None,
            Some((field, value, keep)) => Some((
                slot(&field)?,
                value,
                keep.iter().map(slot).collect::<Result<Vec<_>>>()?,
            )),
        };
        let sparse = vec![false; schema.fields.len()];
        let order = super::encode::order(&schema);
        Ok(Decoder {
            schema,
            op,
            track,
            sparse,
            order,
        })
    }

    /// The same decoder, whose encoded writes leave out the fields `names` when they are null.
    ///
    /// # Errors
    /// [`CoreError::InvalidArgument`] when a name is not a field of the schema.
    pub fn with_sparse(mut self, names: &[String]) -> Result<Decoder> {
        for name in names {
            let slot = self
                .schema
                .slot(name)
                .ok_or_else(|| CoreError::InvalidArgument {
                    name: "sparse",
                    reason: format!("the schema declares no field {name:?}"),
                })?;
            self.sparse[slot] = true;
        }
        Ok(self)
    }

    /// The journal line of a write's episode, `values` by slot (`null`: left out), when
    /// the core proves it ([`super::encode`]); `None` leaves it to the full validator.
    pub fn encode(&self, values: &[Val<'_>]) -> Option<Vec<u8>> {
        super::encode::encode(&self.schema, &self.op, &self.sparse, &self.order, values)
    }

    /// The schema it runs.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// Decodes `run`: whole lines, each ending in `\n` (a last line without one is deferred).
    ///
    /// With `narratives_only`, a row is any line of the record kind, and holds its id and
    /// narrative only (what a text index needs of rows another pass has proved).
    pub fn decode(&self, run: &[u8], narratives_only: bool) -> Decoded {
        let mut spans = Vec::new();
        let mut start = 0;
        while start < run.len() {
            let end = memchr::memchr(b'\n', &run[start..]).map_or(run.len(), |i| start + i + 1);
            spans.push((start, end));
            start = end;
        }
        let row_of = |&(s, e): &(usize, usize)| {
            if run[e - 1] == b'\n' {
                self.row(&run[s..e], s, e, narratives_only)
            } else {
                None
            }
        };
        // A short run (a live write's line, a small catch-up) is decoded on the calling
        // thread: handing it to the pool costs more than decoding it.
        let parsed: Vec<Option<Row>> = if spans.len() < PARALLEL_LINES {
            spans.iter().map(row_of).collect()
        } else {
            crate::pool::install(|| {
                spans
                    .par_iter()
                    .with_min_len(PARALLEL_LINES / 2)
                    .map(row_of)
                    .collect()
            })
        };
        let mut out = Decoded {
            lines: Vec::with_capacity(spans.len()),
            rows: Vec::with_capacity(spans.len()),
        };
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
    fn row(&self, line: &[u8], start: usize, end: usize, narratives_only: bool) -> Option<Row> {
        // Records are written with sorted keys: an episode record starts so.
        if !line.starts_with(b"{\"episode\":{") {
            return None;
        }
        let text = std::str::from_utf8(line).ok()?;
        let (episode, op) = value::carrier(text)?;
        if op != self.op.as_str() {
            return None;
        }
        if narratives_only {
            let mut cursor = 0;
            let (mut id, mut narrative) = (None, None);
            for (key, v) in episode {
                match self.schema.slot_of(&key, &mut cursor) {
                    Some(slot) if slot == self.schema.slots.id => id = Some(v),
                    Some(slot) if slot == self.schema.slots.narrative => narrative = Some(v),
                    _ => {}
                }
            }
            let (Some(Val::Str(id)), Some(Val::Str(narrative))) = (id, narrative) else {
                return None;
            };
            return Some(Row {
                id: id.into_owned(),
                narrative: narrative.into_owned(),
                start,
                end,
                ..Row::default()
            });
        }
        self.episode(episode, start, end)
    }

    fn episode(&self, ep: Members<'_>, start: usize, end: usize) -> Option<Row> {
        let schema = &self.schema;
        let slots = &schema.slots;
        // Each field's value (given, or its default), by slot; the derived keys' raw values.
        let mut values: Vec<Option<Val<'_>>> = vec![None; schema.fields.len()];
        let (mut buckets_given, mut band_given) = (None, None);
        let mut cursor = 0;
        for (key, v) in ep {
            match schema.slot_of(&key, &mut cursor) {
                Some(i) => values[i] = Some(v),
                None if key == TIME_BUCKETS => buckets_given = Some(v),
                None if key == IMPORTANCE_BAND => band_given = Some(v),
                None => return None,
            }
        }
        for (i, field) in schema.fields.iter().enumerate() {
            match &values[i] {
                Some(v) => {
                    if !matches!(field.rule, Rule::Salience | Rule::Metadata)
                        && !proves(&field.rule, v)
                    {
                        return None;
                    }
                }
                None if field.required => return None,
                None => values[i] = schema.defaults[i].as_ref().map(Val::reborrow), // None: derived below
            }
        }
        let get = |slot: usize| values[slot].as_ref();
        let id = get(slots.id)?.as_str()?;
        // Absent, occurred_at would be derived from recorded_at: left to the validator.
        let occurred = get(slots.occurred_at)?.as_str()?;
        let occurred_day = rules::date(occurred)?;
        let valid_from = match get(slots.valid_from) {
            Some(v) => rules::instant(v.as_str()?)?,
            None => occurred_day * 86_400_000_000,
        };
        if let Some(Val::Str(end)) = get(slots.valid_to) {
            if rules::instant(end)? <= valid_from {
                return None;
            }
        }
        if get(slots.supersedes).and_then(Val::as_str) == Some(id) {
            return None;
        }
        // Derived keys, when present, agree.
        let buckets = [&occurred[..4], &occurred[..7], occurred];
        if let Some(given) = buckets_given {
            let Val::Strs(items) = given else { return None };
            if items.len() != 3 || items.iter().zip(buckets).any(|(v, b)| v != b) {
                return None;
            }
        }
        let importance = rules::unit(get(slots.band_of)?)?;
        let band = schema
            .band()
            .iter()
            .find(|(floor, _)| importance >= *floor)
            .map(|(_, name)| name.as_str())?;
        if let Some(given) = band_given {
            if given.as_str() != Some(band) {
                return None;
            }
        }
        let axes: Vec<f32> = axes(schema, &values)?
            .into_iter()
            .map(|x| x as f32)
            .collect();
        let mut cues: Vec<(u16, String)> = Vec::with_capacity(16);
        let mut found: Vec<String> = Vec::new();
        for (d, cue) in schema.cues.iter().enumerate() {
            let field = |k: usize| {
                schema.cue_slots[d]
                    .get(k)
                    .and_then(|&slot| values[slot].as_ref())
            };
            found.clear();
            match &cue.derive {
                Derive::Value => {
                    if let Some(Val::Str(s)) = field(0) {
                        if !s.is_empty() {
                            found.push(s.to_string());
                        }
                    }
                }
                Derive::Values => {
                    if let Some(Val::Strs(items)) = field(0) {
                        found.extend(items.iter().map(|s| s.to_string()));
                    }
                }
                Derive::Buckets => found.extend(buckets.iter().map(|b| b.to_string())),
                Derive::Band(_) => found.push(band.to_owned()),
                Derive::Trust(marks) => {
                    if !matches!(field(0), Some(Val::Bool(true))) {
                        found.push(marks[0].clone());
                    }
                    if !matches!(field(1), Some(Val::Bool(false))) {
                        found.push(marks[1].clone());
                    }
                }
                Derive::Meta => match field(0) {
                    None | Some(Val::Null) => {}
                    Some(Val::Object(members)) if members.is_empty() => {}
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
                cues.extend(folded.into_iter().map(|v| (d as u16, v)));
            } else {
                cues.extend(found.drain(..).map(|v| (d as u16, v)));
            }
        }
        let sources = match get(slots.sources) {
            Some(Val::Strs(items)) => items.iter().map(|s| s.to_string()).collect(),
            _ => Vec::new(),
        };
        let tracked = match &self.track {
            Some((slot, want, keep))
                if values[*slot].as_ref().and_then(Val::as_str) == Some(want.as_str()) =>
            {
                Some(
                    keep.iter()
                        .map(|&k| values[k].as_ref().and_then(Val::as_str).map(str::to_owned))
                        .collect::<Option<Vec<String>>>()?,
                )
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
}

/// The salience axes of an episode's values (by slot): the given ones (each a unit number,
/// no unknown axis), zero for the missing, and the fields of the same names (importance,
/// risk), which a given axis must equal.
pub(super) fn axes(schema: &Schema, values: &[Option<Val<'_>>]) -> Option<Vec<f64>> {
    let mut axes = vec![0.0f64; schema.axes.len()];
    let field = |slot: usize| values[slot].as_ref().and_then(rules::unit);
    match values[schema.slots.salience].as_ref() {
        None | Some(Val::Null) => {}
        Some(Val::Object(given)) => {
            let mut named = vec![false; axes.len()];
            for (axis, v) in given {
                let a = schema.axes.iter().position(|name| name == axis)?;
                axes[a] = rules::unit(v)?;
                named[a] = true;
            }
            for &(slot, a) in &schema.slots.axis_fields {
                if named[a] && axes[a] != field(slot)? {
                    return None;
                }
            }
        }
        Some(_) => return None,
    }
    for &(slot, a) in &schema.slots.axis_fields {
        axes[a] = field(slot)?;
    }
    Some(axes)
}
