//! An import's items: the lines of a JSONL chunk read as writes' fields, then admitted in
//! order under what the caller decided once for the whole import.
//!
//! [`Items::new`] holds a chunk's lines. [`Decoder::admit_items`] writes them in order, as
//! long as each is a *plain* write the caller's [`Plan`] decides in full: one JSON object
//! whose keys are fields an item may give, each at most once, `narrative` among them; no
//! id, subject or sources of its own; a user the caller has answered for; an origin, tier
//! and taint claim the plan has a [`Verdict`] for; not forgotten; and fields the one
//! encoder ([`super::encode`]) proves. Any other line (blank, not JSON, not UTF-8, a key no
//! item may give, a value the reader does not read) is not plain. A plain item's id is
//! [`super::ids::episode_id`] of the running counter.
//!
//! At the first item that is not plain the call stops, and the caller reads and admits that
//! one in full (the gate in Python), with the lines after it that no plan makes plain, before
//! asking for the rest. At an item whose user it has no answer for, it names the users of the
//! block it lacks, to be asked again once they are answered. So the core never decides that
//! an item is bad, and every rule it applies was decided by the caller: it only looks it up.

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;

use super::decode::{Decoded, Decoder};
use super::ids;
use super::rows::{Row, Store};
use super::rules;
use super::value::{self, Val};

/// The most lines admitted at a time (the work after a block's first stop is lost).
const BLOCK: usize = 512;

/// Blocks from which lines are admitted in parallel.
const PARALLEL: usize = 64;

/// The lines of a chunk, and the fields an item may give.
#[derive(Debug, Default)]
pub struct Items {
    data: Vec<u8>,
    /// Each line's span in `data`, its `\n` left out.
    lines: Vec<(usize, usize)>,
    /// By slot: whether an item may give the field.
    keys: Vec<bool>,
}

/// What a plan decides of a plain write of an origin, tier and taint claim: its taint and
/// review state, the tier it is stored in and the confidence it may hold at most.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub taint: bool,
    pub reviewed: bool,
    pub tier: String,
    pub cap: f64,
}

/// What the caller decided for an import's plain writes.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// When the import is written (ISO): each item's `recorded_at` and part of its id.
    pub stamp: String,
    /// The session every item is written in.
    pub session: Option<String>,
    /// By (origin, tier, taint claim): the verdict; a claim without one is not plain.
    pub verdicts: Vec<((String, String, bool), Verdict)>,
    /// The content hashes a forget took out ([`ids::content_hash`]): such an item is not plain.
    pub forgotten: HashSet<String>,
}

/// Whose an item is, by the user it names: the user it is written as, or `None` when the
/// caller refused it (the item is not plain); a user not held is not answered for yet.
#[derive(Debug, Clone, Default)]
pub struct Owners {
    /// The answer for an item that names no user (or names `null`).
    pub unnamed: Option<Option<String>>,
    /// The answers for the users items name.
    pub named: HashMap<String, Option<String>>,
}

impl Owners {
    fn of(&self, named: Option<&str>) -> Option<&Option<String>> {
        match named {
            None => self.unnamed.as_ref(),
            Some(user) => self.named.get(user),
        }
    }
}

/// The items a call admitted: their journal lines end to end, what decoding those lines
/// gives (worked out as each line is written, [`Decoder::encode_decoded`]), their ids,
/// the first line it did not admit (the chunk's length when it admitted to the end), the
/// users named in the block it stopped in that `owners` did not answer for, and how many
/// lines after the first not admitted no plan or owner makes plain.
#[derive(Debug, Default)]
pub struct Admitted {
    pub lines: Vec<u8>,
    pub decoded: Decoded,
    pub ids: Vec<String>,
    pub next: usize,
    pub missing: Vec<String>,
    pub unplain: usize,
}

/// The items of a block admitted on one thread, in order, and the store of their rows.
#[derive(Default)]
struct Piece {
    results: Vec<Result<Plain, Stop>>,
    store: Store,
}

/// A plain write: its id, its journal line and the row decoding that line gives (`None`:
/// the line is deferred).
struct Plain {
    id: String,
    line: Vec<u8>,
    row: Option<Row>,
}

/// Why a line is not admitted.
enum Stop {
    NotPlain,
    /// A plain write but for its user, whom the caller has not answered for.
    Unanswered(String),
}

impl Items {
    /// The lines of `chunk` (split at `\n`; a last line without one counts), whose items may
    /// give the fields `keys` (a name the schema does not declare is no key).
    pub fn new(decoder: &Decoder, chunk: &[u8], keys: &[&str]) -> Items {
        let schema = decoder.schema();
        let mut given = vec![false; schema.fields.len()];
        for slot in keys.iter().filter_map(|k| schema.slot(k)) {
            given[slot] = true;
        }
        let mut lines = Vec::new();
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', chunk) {
            lines.push((start, end));
            start = end + 1;
        }
        if start < chunk.len() {
            lines.push((start, chunk.len()));
        }
        Items {
            data: chunk.to_vec(),
            lines,
            keys: given,
        }
    }

    /// How many lines the chunk holds.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }
}

/// The slots [`Decoder::admit_items`] reads and sets.
struct Slots {
    user: usize,
    origin: usize,
    tier: usize,
    taint: usize,
    reviewed: usize,
    session: usize,
    subject: usize,
}

impl Decoder {
    /// Admits the items of `items` from line `from` on, in order, while each is plain under
    /// `plan` (see the module docs); `counter` is the id counter of the first (the rows of
    /// the home and the ids the import has taken).
    pub fn admit_items(
        &self,
        items: &Items,
        from: usize,
        counter: u64,
        plan: &Plan,
        owners: &Owners,
    ) -> Admitted {
        let mut out = Admitted {
            next: from,
            ..Admitted::default()
        };
        let slot = |name: &str| self.schema().slot(name);
        let (
            Some(user),
            Some(origin),
            Some(tier),
            Some(taint),
            Some(reviewed),
            Some(session),
            Some(subject),
        ) = (
            slot("user_id"),
            slot("origin"),
            slot("tier"),
            slot("taint"),
            slot("reviewed"),
            slot("session"),
            slot("subject"),
        )
        else {
            return out;
        };
        if self.schema().fields.len() > 64 {
            return out; // a repeated key is found with a 64-bit mask
        }
        let slots = Slots {
            user,
            origin,
            tier,
            taint,
            reviewed,
            session,
            subject,
        };
        let line = |i: usize| {
            let (s, e) = items.lines[i];
            std::str::from_utf8(&items.data[s..e]).ok()
        };
        let mut start = from.min(items.len());
        // A block starts at one line and doubles while every line is admitted: the work
        // past a stop is lost, so it is never more than the run before it.
        let mut size = 1;
        while start < items.len() {
            let end = (start + size).min(items.len());
            size = (size * 2).min(BLOCK);
            // Each item of the block as if every one before it is admitted; the first
            // that is not ends the call, and what follows it is asked for again.
            let first = counter + out.ids.len() as u64;
            let admit = |mut piece: Piece, k: usize| {
                let result = line(start + k).ok_or(Stop::NotPlain).and_then(|text| {
                    let n = first + k as u64;
                    self.plain(text, &items.keys, n, plan, owners, &slots, &mut piece.store)
                });
                piece.results.push(result);
                piece
            };
            let pieces: Vec<Piece> = if end - start >= PARALLEL {
                crate::pool::install(|| {
                    (0..end - start)
                        .into_par_iter()
                        .with_min_len(PARALLEL / 2)
                        .fold(Piece::default, admit)
                        .collect()
                })
            } else {
                vec![(0..end - start).fold(Piece::default(), admit)]
            };
            let bytes: usize = pieces
                .iter()
                .flat_map(|p| &p.results)
                .map_while(|r| r.as_ref().ok())
                .map(|p| p.line.len())
                .sum();
            out.lines.reserve(bytes);
            let mut block = Vec::with_capacity(end - start);
            for piece in pieces {
                let k = out.decoded.add_store(piece.store);
                block.extend(piece.results.into_iter().map(|r| (k, r)));
            }
            let mut results = block.into_iter();
            for (k, result) in results.by_ref() {
                match result {
                    Ok(Plain { id, line, row }) => {
                        let at = out.lines.len();
                        out.lines.extend_from_slice(&line);
                        out.decoded.push(row, at, out.lines.len(), k);
                        out.ids.push(id);
                        out.next += 1;
                    }
                    Err(stop) => {
                        if let Stop::Unanswered(user) = stop {
                            let mut seen = HashSet::new();
                            let rest = results.filter_map(|(_, r)| match r {
                                Err(Stop::Unanswered(u)) => Some(u),
                                _ => None,
                            });
                            out.missing = std::iter::once(user)
                                .chain(rest)
                                .filter(|u| seen.insert(u.clone()))
                                .collect();
                        } else {
                            // The lines after it that no plan makes plain: the caller reads
                            // them itself without asking again.
                            out.unplain = (out.next + 1..items.len())
                                .take_while(|&i| {
                                    line(i)
                                        .and_then(|t| self.shape(t, &items.keys, &slots))
                                        .is_none()
                                })
                                .count();
                        }
                        return out;
                    }
                }
            }
            start = end;
        }
        out
    }

    /// The values of `line` by slot (defaults filled in) and a mask of the slots it gives,
    /// when it has a plain write's shape: one object of the keys `keys`, each once,
    /// `narrative` among them, no id, subject or sources of its own. `None` for any other
    /// line, which no plan or owner makes plain.
    fn shape<'a>(
        &'a self,
        line: &'a str,
        keys: &[bool],
        slots: &Slots,
    ) -> Option<(Vec<Val<'a>>, u64)> {
        let schema = self.schema();
        let mut values: Vec<Val<'a>> = schema
            .defaults
            .iter()
            .map(|d| d.as_ref().map_or(Val::Null, Val::reborrow))
            .collect();
        let mut given = 0u64;
        value::object(line, |key, v| {
            let slot = schema.slot(&key)?;
            if !keys.get(slot).copied().unwrap_or(false) || given & (1 << slot) != 0 {
                return None;
            }
            given |= 1 << slot;
            values[slot] = v;
            Some(())
        })?;
        let plain = given & (1 << schema.slots.narrative) != 0
            && values[schema.slots.id] == Val::Null
            && values[slots.subject] == Val::Null
            && !matches!(&values[schema.slots.sources], Val::Strs(s) if !s.is_empty());
        plain.then_some((values, given))
    }

    /// The id and journal line of `line` written as a plain write with counter `n` (see
    /// the module docs), with the row decoding that line gives (put in `store`; `None`:
    /// the line is deferred), or why not.
    #[allow(clippy::too_many_arguments)]
    fn plain(
        &self,
        line: &str,
        keys: &[bool],
        n: u64,
        plan: &Plan,
        owners: &Owners,
        slots: &Slots,
        store: &mut Store,
    ) -> Result<Plain, Stop> {
        let schema = self.schema();
        let (mut values, given) = self.shape(line, keys, slots).ok_or(Stop::NotPlain)?;
        let named = match &values[slots.user] {
            _ if given & (1 << slots.user) == 0 => None,
            Val::Null => None,
            Val::Str(user) => Some(user.as_ref()),
            _ => return Err(Stop::NotPlain),
        };
        let user = match owners.of(named) {
            Some(Some(user)) => user,
            Some(None) => return Err(Stop::NotPlain),
            None => return Err(Stop::Unanswered(named.unwrap_or_default().to_owned())),
        };
        let (Val::Str(origin), Val::Str(tier), Val::Bool(claim)) = (
            &values[slots.origin],
            &values[slots.tier],
            &values[slots.taint],
        ) else {
            return Err(Stop::NotPlain);
        };
        let verdict = plan
            .verdicts
            .iter()
            .find(|((o, t, c), _)| o == origin && t == tier && c == claim)
            .map(|(_, v)| v)
            .ok_or(Stop::NotPlain)?;
        let narrative = values[schema.slots.narrative]
            .as_str()
            .ok_or(Stop::NotPlain)?;
        if !plan.forgotten.is_empty()
            && plan
                .forgotten
                .contains(&ids::content_hash(user.as_bytes(), narrative.as_bytes()))
        {
            return Err(Stop::NotPlain);
        }
        let id = ids::episode_id(n, plan.stamp.as_bytes(), narrative.as_bytes());
        values[schema.slots.id] = Val::Str(id.as_str().into());
        values[schema.slots.recorded_at] = Val::Str(plan.stamp.as_str().into());
        values[slots.user] = Val::Str(user.as_str().into());
        values[slots.session] = plan
            .session
            .as_deref()
            .map_or(Val::Null, |s| Val::Str(s.into()));
        values[slots.taint] = Val::Bool(verdict.taint);
        values[slots.reviewed] = Val::Bool(verdict.reviewed);
        values[slots.tier] = Val::Str(verdict.tier.as_str().into());
        // The confidence given is proven before it is capped (a value out of range must
        // not be capped into one), then held to what the origin is trusted.
        let slot = schema.slots.confidence;
        if !rules::proves(&schema.fields[slot].rule, &values[slot]) {
            return Err(Stop::NotPlain);
        }
        if let Val::Num(c) = values[slot] {
            if c > verdict.cap {
                values[slot] = Val::Num(verdict.cap);
            }
        }
        let (line, row) = self.encode_row(&values, store).ok_or(Stop::NotPlain)?;
        Ok(Plain { id, line, row })
    }
}
