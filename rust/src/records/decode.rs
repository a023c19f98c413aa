//! Decoding runs of journal lines into index rows, in parallel, proving what it keeps.

use std::borrow::Cow;

use rayon::prelude::*;

use super::encode::Emit;
use super::rows::{Row, RowRef, Span, Store};
use super::rules::{self, proves};
use super::schema::{Derive, Rule, Schema};
use super::value::{self, Val};
use super::versions::{self, Version, VersionRef};
use crate::error::{CoreError, Result};

/// Lines from which a run is decoded in parallel, in chunks of half as many.
const PARALLEL_LINES: usize = 512;

/// Fields up to which a line's values are held on the stack.
const STACK_FIELDS: usize = 32;

/// What a line of the run became.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line {
    /// The `i`-th row of the run.
    Row(u32),
    /// Left to the caller: bytes `start..end` of the run (the line and its `\n`).
    Deferred { start: usize, end: usize },
}

/// A decoded run: every line in order, and the rows of the proven ones (read them
/// through [`Decoded::row`] and [`Decoded::rows`]).
#[derive(Debug, Default)]
pub struct Decoded {
    pub lines: Vec<Line>,
    rows: Vec<Row>,
    /// What the rows hold, one store for each piece of the run decoded apart.
    stores: Vec<Store>,
    /// The deferred lines the decoder proved `version` records ([`Decoder::with_versions`]), in order.
    versions: Vec<Version>,
}

impl Decoded {
    /// How many rows it holds.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Row `i`.
    ///
    /// # Panics
    /// When `i` is not below [`Decoded::len`].
    pub fn row(&self, i: usize) -> RowRef<'_> {
        self.read(&self.rows[i])
    }

    fn read<'d>(&'d self, row: &'d Row) -> RowRef<'d> {
        RowRef {
            store: &self.stores[row.piece as usize],
            row,
        }
    }

    /// Adds a line at bytes `start..end`: `row` (read through store `piece`), or deferred.
    pub(super) fn push(&mut self, row: Option<Row>, start: usize, end: usize, piece: usize) {
        match row {
            Some(row) => {
                self.lines.push(Line::Row(self.rows.len() as u32));
                self.rows.push(Row {
                    piece: piece as u32,
                    start,
                    end,
                    ..row
                });
            }
            None => self.lines.push(Line::Deferred { start, end }),
        }
    }

    /// Adds a store for the rows pushed after it: its piece number.
    pub(super) fn add_store(&mut self, store: Store) -> usize {
        self.stores.push(store);
        self.stores.len() - 1
    }

    /// Rows `lo..hi` on their own and in order, without their narratives (each empty):
    /// what is kept of rows whose text is indexed already, a fraction of the run's bytes.
    /// `None` when they are not all held.
    pub fn without_narratives(&self, lo: usize, hi: usize) -> Option<Decoded> {
        let rows = self.rows(lo, hi)?;
        let mut store = Store::default();
        let rows: Vec<Row> = rows.map(|row| store.copy(row)).collect();
        Some(Decoded {
            lines: (0..rows.len() as u32).map(Line::Row).collect(),
            rows,
            stores: vec![store],
            versions: Vec::new(),
        })
    }

    /// The `version` records among the deferred lines that the decoder proved, in order.
    pub fn versions(&self) -> impl ExactSizeIterator<Item = VersionRef<'_>> {
        self.versions
            .iter()
            .map(|v| v.read(&self.stores[v.piece as usize]))
    }

    /// Rows `lo..hi`, or `None` when they are not all held.
    pub fn rows(&self, lo: usize, hi: usize) -> Option<impl ExactSizeIterator<Item = RowRef<'_>>> {
        let rows = self.rows.get(lo..hi)?;
        Some(rows.iter().map(move |row| self.read(row)))
    }
}

/// The rows of a piece of a run, each line's, and the store they read.
#[derive(Default)]
struct Piece {
    rows: Vec<Option<Row>>,
    store: Store,
    /// The lines proved `version` records: where each starts in the run, and its fields.
    versions: Vec<(usize, versions::Fields)>,
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
    /// The keys a stored episode may hold (the fields and the derived keys), sorted: a
    /// record's keys, sorted as cuemem writes them, are found walking it ([`Decoder::key`]).
    keys: Vec<(String, Emit)>,
    /// `(slot, values, slot, flag)`: an episode whose first field holds one of the values
    /// holds the flag in the second ([`Decoder::with_implied`]); one that does not is left
    /// to the full validator, which refuses it.
    implied: Vec<(usize, Vec<String>, usize, bool)>,
    /// The kind of the `version` records it proves (`None`: none, every such line deferred).
    versions: Option<String>,
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
        let mut keys: Vec<(String, Emit)> = order.clone();
        // A field named as a derived key is the field (the derived keys come last).
        keys.sort_by_key(|(_, emit)| !matches!(emit, Emit::Field(_)));
        keys.sort_by(|a, b| a.0.cmp(&b.0));
        keys.dedup_by(|later, first| later.0 == first.0);
        Ok(Decoder {
            schema,
            op,
            track,
            sparse,
            order,
            keys,
            implied: Vec::new(),
            versions: None,
        })
    }

    /// The same decoder, proving the `version` records of kind `op` among the lines it
    /// defers ([`Decoded::versions`]; the module `versions`).
    pub fn with_versions(mut self, op: String) -> Decoder {
        self.versions = Some(op);
        self
    }

    /// The same decoder, proving a row only when it holds what `implied` says every stored
    /// episode holds: `(field, values, other field, flag)`, an episode whose field has one
    /// of the values holds the flag in the other field (an external memory is tainted).
    ///
    /// # Errors
    /// [`CoreError::InvalidArgument`] when a name is not a field of the schema.
    pub fn with_implied(
        mut self,
        implied: Vec<(String, Vec<String>, String, bool)>,
    ) -> Result<Decoder> {
        for (field, values, then, flag) in implied {
            let slot = |name: &str| {
                self.schema
                    .slot(name)
                    .ok_or_else(|| CoreError::InvalidArgument {
                        name: "implied",
                        reason: format!("the schema declares no field {name:?}"),
                    })
            };
            let (a, b) = (slot(&field)?, slot(&then)?);
            self.implied.push((a, values, b, flag));
        }
        Ok(self)
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
    /// the core proves it (the `encode` module); `None` leaves it to the full validator.
    pub fn encode(&self, values: &[Val<'_>]) -> Option<Vec<u8>> {
        super::encode::encode(&self.schema, &self.op, &self.sparse, &self.order, values)
            .map(|(line, _)| line)
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
        let add = |mut piece: Piece, &(s, e): &(usize, usize)| {
            let mark = piece.store.mark();
            let row = if run[e - 1] == b'\n' {
                self.row(&run[s..e], s, e, narratives_only, &mut piece.store)
            } else {
                None
            };
            if row.is_none() {
                piece.store.rewind(mark);
                // (A whole line, as a row must be: a last line without its `\n` is left.)
                if let Some(op) = self
                    .versions
                    .as_deref()
                    .filter(|_| !narratives_only && run[e - 1] == b'\n')
                {
                    if let Some(fields) = versions::prove(&run[s..e], op, &mut piece.store) {
                        piece.versions.push((s, fields));
                    }
                }
            }
            piece.rows.push(row);
            piece
        };
        // A short run (a live write's line, a small catch-up) is decoded on the calling
        // thread: handing it to the pool costs more than decoding it.
        let pieces: Vec<Piece> = if spans.len() < PARALLEL_LINES {
            vec![spans.iter().fold(Piece::default(), add)]
        } else {
            crate::pool::install(|| {
                spans
                    .par_iter()
                    .with_min_len(PARALLEL_LINES / 2)
                    .fold(Piece::default, add)
                    .collect()
            })
        };
        let mut out = Decoded {
            lines: Vec::with_capacity(spans.len()),
            rows: Vec::with_capacity(spans.len()),
            stores: Vec::with_capacity(pieces.len()),
            versions: Vec::new(),
        };
        let mut spans = spans.into_iter();
        for piece in pieces {
            let k = out.add_store(piece.store);
            out.versions.extend(
                piece
                    .versions
                    .into_iter()
                    .map(|(s, fields)| Version::new(s, k as u32, fields)),
            );
            for (row, (s, e)) in piece.rows.into_iter().zip(&mut spans) {
                out.push(row, s, e, k);
            }
        }
        out
    }

    /// The journal line of a write's episode, as [`Decoder::encode`] writes it, and what
    /// [`Decoder::decode`] of that line gives (one row, or the line deferred), worked out
    /// from the values themselves rather than by reading the line back.
    pub fn encode_decoded(&self, values: &[Val<'_>]) -> Option<(Vec<u8>, Decoded)> {
        let mut store = Store::default();
        let (line, row) = self.encode_row(values, &mut store)?;
        let mut out = Decoded::default();
        let k = out.add_store(store);
        out.push(row, 0, line.len(), k);
        Some((line, out))
    }

    /// [`Decoder::encode_decoded`] of one line, its row put in `store` (`None`: deferred).
    pub(super) fn encode_row(
        &self,
        values: &[Val<'_>],
        store: &mut Store,
    ) -> Option<(Vec<u8>, Option<Row>)> {
        let (line, derived) =
            super::encode::encode(&self.schema, &self.op, &self.sparse, &self.order, values)?;
        // What the decoder reads of the line: each field as written (a sparse one left
        // out when null), the derived ones as the encoder derived them. The salience is
        // read as given: the axes the line holds are the ones worked out from it.
        let slots = &self.schema.slots;
        let mut written: Vec<Option<Val<'_>>> = values
            .iter()
            .zip(&self.sparse)
            .map(|(v, &sparse)| (!(sparse && matches!(v, Val::Null))).then(|| v.reborrow()))
            .collect();
        for (slot, value) in [
            (slots.occurred_at, derived.occurred),
            (slots.valid_from, derived.start.as_ref()),
        ] {
            if written[slot].is_some() {
                written[slot] = Some(Val::Str(Cow::Borrowed(value)));
            }
        }
        let mark = store.mark();
        let row = self.episode(&mut written, None, None, store);
        if row.is_none() {
            store.rewind(mark);
        }
        Some((line, row))
    }

    /// What the episode key `key` holds; `cursor` is where the previous key of the record
    /// was found: keys in sorted order (as cuemem writes them) are found walking forward.
    fn key(&self, key: &str, cursor: &mut usize) -> Option<Emit> {
        let keys = &self.keys;
        let mut i = *cursor;
        while let Some((name, emit)) = keys.get(i) {
            match name.as_str().cmp(key) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Equal => {
                    *cursor = i + 1;
                    return Some(*emit);
                }
                std::cmp::Ordering::Greater => break,
            }
        }
        let i = keys
            .binary_search_by(|(name, _)| name.as_str().cmp(key))
            .ok()?;
        *cursor = i + 1;
        Some(keys[i].1)
    }

    /// The row of one line, if it is an episode record the core can prove.
    fn row(
        &self,
        line: &[u8],
        start: usize,
        end: usize,
        narratives_only: bool,
        store: &mut Store,
    ) -> Option<Row> {
        // Records are written with sorted keys: an episode record starts so.
        if !line.starts_with(b"{\"episode\":{") {
            return None;
        }
        let text = std::str::from_utf8(line).ok()?;
        let slots = &self.schema.slots;
        let mut cursor = 0;
        if narratives_only {
            let (mut id, mut narrative) = (None, None);
            let op = value::carrier(text, |key, v| {
                match self.key(&key, &mut cursor) {
                    Some(Emit::Field(slot)) if slot == slots.id => id = Some(v),
                    Some(Emit::Field(slot)) if slot == slots.narrative => narrative = Some(v),
                    _ => {}
                }
                Some(())
            })?;
            let (Some(Val::Str(id)), Some(Val::Str(narrative))) = (id, narrative) else {
                return None;
            };
            if op != self.op.as_str() {
                return None;
            }
            return Some(Row {
                id: store.put(&id),
                narrative: store.put(&narrative),
                start,
                end,
                ..Row::default()
            });
        }
        // Each field's value, by slot (the last of repeated keys); the derived keys' values.
        // On the stack when the schema is small enough (one allocation a line less).
        let fields = self.schema.fields.len();
        let mut stack: [Option<Val<'_>>; STACK_FIELDS] = std::array::from_fn(|_| None);
        let mut heap = Vec::new();
        let values: &mut [Option<Val<'_>>] = if fields <= STACK_FIELDS {
            &mut stack[..fields]
        } else {
            heap.resize(fields, None);
            &mut heap
        };
        let (mut buckets_given, mut band_given) = (None, None);
        let op = value::carrier(text, |key, v| {
            match self.key(&key, &mut cursor)? {
                Emit::Field(slot) => values[slot] = Some(v),
                Emit::Buckets => buckets_given = Some(v),
                Emit::Band => band_given = Some(v),
            }
            Some(())
        })?;
        if op != self.op.as_str() {
            return None;
        }
        self.episode(values, buckets_given, band_given, store)
            .map(|row| Row { start, end, ..row })
    }

    fn episode<'a>(
        &'a self,
        values: &mut [Option<Val<'a>>],
        buckets_given: Option<Val<'a>>,
        band_given: Option<Val<'a>>,
        store: &mut Store,
    ) -> Option<Row> {
        let schema = &self.schema;
        let slots = &schema.slots;
        // Each field's value (given, or its default), by slot.
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
        for (slot, among, then, flag) in &self.implied {
            let holds = |v: &str| among.iter().any(|m| m == v);
            if get(*slot).and_then(Val::as_str).is_some_and(holds)
                && !matches!(get(*then), Some(Val::Bool(b)) if b == flag)
            {
                return None;
            }
        }
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
        let narrative = get(slots.narrative)?.as_str()?;
        let mut row = Row {
            confidence: rules::unit(get(slots.confidence)?)? as f32,
            t: occurred_day as f64 * 86_400.0,
            axes: row_axes(schema, values, store)?,
            id: store.put(id),
            narrative: store.put(narrative),
            ..Row::default()
        };
        let first_cue = store.cue_count();
        for (d, cue) in schema.cues.iter().enumerate() {
            let field = |k: usize| {
                schema.cue_slots[d]
                    .get(k)
                    .and_then(|&slot| values[slot].as_ref())
            };
            let first = store.cue_count();
            let mut push = |value: &str| store.cue(d as u16, value, cue.folded, first);
            match &cue.derive {
                Derive::Value => {
                    if let Some(Val::Str(s)) = field(0) {
                        if !s.is_empty() {
                            push(s)?;
                        }
                    }
                }
                Derive::Values => {
                    if let Some(Val::Strs(items)) = field(0) {
                        store.cue_list(d as u16, items, cue.folded)?;
                    }
                }
                Derive::Buckets => {
                    for b in buckets {
                        push(b)?;
                    }
                }
                Derive::Band(_) => push(band)?,
                Derive::Trust(marks) => {
                    if !matches!(field(0), Some(Val::Bool(true))) {
                        push(&marks[0])?;
                    }
                    if !matches!(field(1), Some(Val::Bool(false))) {
                        push(&marks[1])?;
                    }
                }
                Derive::Meta => match field(0) {
                    None | Some(Val::Null) => {}
                    Some(Val::Object(members)) if members.is_empty() => {}
                    Some(_) => return None, // the caller's own object: left to the validator
                },
            }
        }
        row.cues = (first_cue, store.cue_count());
        let sources: &[std::borrow::Cow<'_, str>] = match get(slots.sources) {
            Some(Val::Strs(items)) => items,
            _ => &[],
        };
        row.sources = store.list(sources.iter().map(|s| s.as_ref()));
        if let Some((slot, want, keep)) = &self.track {
            if values[*slot].as_ref().and_then(Val::as_str) == Some(want.as_str()) {
                let kept = |k: &usize| values[*k].as_ref().and_then(Val::as_str);
                if !keep.iter().all(|k| kept(k).is_some()) {
                    return None;
                }
                row.tracked = Some(store.list(keep.iter().filter_map(kept)));
            }
        }
        Some(row)
    }
}

/// [`axes`] put in a row's store (worked out on the stack for up to 16 axes).
fn row_axes(schema: &Schema, values: &[Option<Val<'_>>], store: &mut Store) -> Option<Span> {
    let n = schema.axes.len();
    let mut stack = [0.0f64; 16];
    let mut heap = Vec::new();
    let axes: &mut [f64] = if n <= stack.len() {
        &mut stack[..n]
    } else {
        heap.resize(n, 0.0);
        &mut heap
    };
    axes_into(schema, |slot| values[slot].as_ref(), axes)?;
    Some(store.axes(axes.iter().map(|&x| x as f32)))
}

/// The salience axes of an episode's values (by slot): the given ones (each a unit number,
/// no unknown axis), zero for the missing, and the fields of the same names (importance,
/// risk), which a given axis must equal.
pub(super) fn axes<'v, 'a: 'v>(
    schema: &Schema,
    value: impl Fn(usize) -> Option<&'v Val<'a>>,
) -> Option<Vec<f64>> {
    let mut axes = vec![0.0f64; schema.axes.len()];
    axes_into(schema, value, &mut axes)?;
    Some(axes)
}

/// [`axes`] into `axes` (one per axis of the schema); `value` gives the value at a slot.
fn axes_into<'v, 'a: 'v>(
    schema: &Schema,
    value: impl Fn(usize) -> Option<&'v Val<'a>>,
    axes: &mut [f64],
) -> Option<()> {
    axes.fill(0.0);
    let field = |slot: usize| value(slot).and_then(rules::unit);
    match value(schema.slots.salience) {
        None | Some(Val::Null) => {}
        Some(Val::Object(given)) => {
            for (axis, v) in given {
                let a = schema.axes.iter().position(|name| name == axis)?;
                axes[a] = rules::unit(v)?;
            }
            for &(slot, a) in &schema.slots.axis_fields {
                let named = given.iter().any(|(axis, _)| *axis == schema.axes[a]);
                if named && axes[a] != field(slot)? {
                    return None;
                }
            }
        }
        Some(_) => return None,
    }
    for &(slot, a) in &schema.slots.axis_fields {
        axes[a] = field(slot)?;
    }
    Some(())
}
