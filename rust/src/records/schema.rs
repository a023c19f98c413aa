//! The episode schema as the core runs it, compiled from the specifications Python declares.

use super::value::{self, Val};
use crate::error::{CoreError, Result};

/// The rule a field's value follows (the kinds of `cuemem.schema.fields`).
#[derive(Clone, Debug, PartialEq)]
pub enum Rule {
    /// An id: `[A-Za-z0-9._:-]`, 1 to `max` characters, no leading dot.
    Id { max: usize },
    /// `None` or an id.
    OptionalId { max: usize },
    /// `[a-z0-9_-]`, 1 to `max` characters (an episode's type).
    Slug { max: usize },
    /// Text that is not blank, kept as given.
    Text,
    /// `None` or text that is not blank, stripped.
    OptionalText,
    /// `None` or 1 to `max` printable characters, stripped.
    Label { max: usize },
    /// A finite number in [0, 1].
    Unit,
    /// `true` or `false`.
    Flag,
    /// One of `values`, or `None` when `optional`.
    Choice { values: Vec<String>, optional: bool },
    /// A calendar date, `YYYY-MM-DD`.
    Date,
    /// An instant (ISO 8601), or `None` when `optional`.
    Instant { optional: bool },
    /// A list of non-blank texts, stripped, without repeats.
    Texts,
    /// A list of ids without repeats.
    Ids { max: usize },
    /// Axis -> unit number, over the axes the schema names.
    Salience,
    /// The caller's own JSON object.
    Metadata,
}

impl Rule {
    /// The rule named `name` with its parameters.
    ///
    /// # Errors
    /// [`CoreError::InvalidArgument`] for a name the core does not know or a missing parameter.
    pub fn from_name(
        name: &str,
        max: Option<usize>,
        values: Option<Vec<String>>,
        optional: bool,
    ) -> Result<Rule> {
        let max_of = |what: &str| max.ok_or_else(|| bad(format!("rule {what} needs a limit")));
        Ok(match name {
            "id" if optional => Rule::OptionalId { max: max_of(name)? },
            "id" => Rule::Id { max: max_of(name)? },
            "slug" => Rule::Slug { max: max_of(name)? },
            "text" if optional => Rule::OptionalText,
            "text" => Rule::Text,
            "label" => Rule::Label { max: max_of(name)? },
            "unit" => Rule::Unit,
            "flag" => Rule::Flag,
            "choice" => Rule::Choice {
                values: values.ok_or_else(|| bad("rule choice needs its values".into()))?,
                optional,
            },
            "date" => Rule::Date,
            "instant" => Rule::Instant { optional },
            "texts" => Rule::Texts,
            "ids" => Rule::Ids { max: max_of(name)? },
            "salience" => Rule::Salience,
            "metadata" => Rule::Metadata,
            other => return Err(bad(format!("unknown rule {other:?}"))),
        })
    }
}

/// A field of the episode: its name, rule, and what an absent one means.
#[derive(Clone, Debug)]
pub struct FieldSpec {
    pub name: String,
    pub rule: Rule,
    /// The record must hold it.
    pub required: bool,
    /// The value an absent field takes, as JSON text; `None` when it is derived from
    /// other fields (the core then proves nothing of a record that leaves it out).
    pub default: Option<String>,
}

/// How a cue dimension is derived from an episode's fields.
#[derive(Clone, Debug, PartialEq)]
pub enum Derive {
    /// The field's value, if it is a non-empty string.
    Value,
    /// Each string of the field's list.
    Values,
    /// A date's year, month and day (`2026`, `2026-06`, `2026-06-07`).
    Buckets,
    /// The band of a unit number: the first `(floor, name)` whose floor it reaches.
    Band(Vec<(f64, String)>),
    /// `marks[0]` unless the first field is `true`, `marks[1]` unless the second is `false`
    /// (trust: quarantined while unreviewed, tainted for good).
    Trust([String; 2]),
    /// `key=value` of each scalar top-level value of a JSON object.
    Meta,
}

/// One cue dimension: its name, the fields it reads, how, and whether values are folded.
#[derive(Clone, Debug)]
pub struct CueSpec {
    pub dimension: String,
    pub fields: Vec<String>,
    pub derive: Derive,
    pub folded: bool,
}

/// The compiled schema: fields, cues, the salience axes and the two derived fields.
#[derive(Clone, Debug)]
pub struct Schema {
    pub(super) fields: Vec<FieldSpec>,
    pub(super) cues: Vec<CueSpec>,
    pub(super) axes: Vec<String>,
    /// `(name, slot)` by name: the one lookup of a field by name.
    sorted: Vec<(String, usize)>,
    /// Each field's default, read once.
    pub(super) defaults: Vec<Option<Val<'static>>>,
    /// The slots of the fields each cue reads, in the cue's order.
    pub(super) cue_slots: Vec<Vec<usize>>,
    /// Slots of the fields the decoder reads by meaning.
    pub(super) slots: Slots,
}

/// Where the fields the decoder itself reads sit in [`Schema::fields`].
#[derive(Clone, Debug)]
pub(super) struct Slots {
    pub id: usize,
    pub narrative: usize,
    pub occurred_at: usize,
    pub recorded_at: usize,
    pub valid_from: usize,
    pub valid_to: usize,
    pub confidence: usize,
    pub salience: usize,
    pub sources: usize,
    pub supersedes: usize,
    /// The fields whose values are salience axes of the same name (importance, risk).
    pub axis_fields: Vec<(usize, usize)>,
    /// The field the band is of (importance).
    pub band_of: usize,
}

/// The derived keys a stored episode may hold (and which must then agree).
pub(super) const TIME_BUCKETS: &str = "time_buckets";
pub(super) const IMPORTANCE_BAND: &str = "importance_band";

impl Schema {
    /// Compiles the schema.
    ///
    /// # Errors
    /// [`CoreError::InvalidArgument`] when a field the decoder reads by meaning is
    /// missing, a name repeats, a cue reads a field the schema does not declare, a
    /// default is not a JSON value the decoder reads, or the band cue is missing (the
    /// band check needs its floors).
    pub fn new(fields: Vec<FieldSpec>, cues: Vec<CueSpec>, axes: Vec<String>) -> Result<Schema> {
        let mut sorted: Vec<(String, usize)> = fields
            .iter()
            .enumerate()
            .map(|(i, f)| (f.name.clone(), i))
            .collect();
        sorted.sort_unstable();
        if let Some(pair) = sorted.windows(2).find(|pair| pair[0].0 == pair[1].0) {
            return Err(bad(format!("field {:?} is declared twice", pair[0].0)));
        }
        let find = |name: &str| {
            sorted
                .binary_search_by(|(n, _)| n.as_str().cmp(name))
                .ok()
                .map(|i| sorted[i].1)
        };
        let slot = |name: &str| {
            find(name).ok_or_else(|| bad(format!("the schema declares no field {name:?}")))
        };
        let cue_slots = cues
            .iter()
            .map(|c| c.fields.iter().map(|f| slot(f)).collect::<Result<Vec<_>>>())
            .collect::<Result<Vec<_>>>()?;
        let defaults = fields
            .iter()
            .map(|f| match &f.default {
                None => Ok(None),
                Some(text) => value::value(text)
                    .map(|v| Some(v.into_owned()))
                    .ok_or_else(|| {
                        bad(format!(
                            "the default of {:?} is not a JSON value the decoder reads: {text}",
                            f.name
                        ))
                    }),
            })
            .collect::<Result<Vec<_>>>()?;
        let axis_fields = axes
            .iter()
            .enumerate()
            .filter_map(|(a, name)| find(name).map(|f| (f, a)))
            .collect();
        let band_cue = cues
            .iter()
            .position(|c| matches!(c.derive, Derive::Band(_)))
            .ok_or_else(|| bad("the schema has no band cue".into()))?;
        let slots = Slots {
            id: slot("id")?,
            narrative: slot("narrative")?,
            occurred_at: slot("occurred_at")?,
            recorded_at: slot("recorded_at")?,
            valid_from: slot("valid_from")?,
            valid_to: slot("valid_to")?,
            confidence: slot("confidence")?,
            salience: slot("salience")?,
            sources: slot("sources")?,
            supersedes: slot("supersedes")?,
            axis_fields,
            band_of: slot(
                cues[band_cue]
                    .fields
                    .first()
                    .ok_or_else(|| bad("the band cue reads no field".into()))?,
            )?,
        };
        Ok(Schema {
            fields,
            cues,
            axes,
            sorted,
            defaults,
            cue_slots,
            slots,
        })
    }

    /// The slot of field `name`, if the schema declares it.
    pub(super) fn slot(&self, name: &str) -> Option<usize> {
        self.place(name).map(|i| self.sorted[i].1)
    }

    /// Where field `name` sits in [`Schema::sorted`].
    fn place(&self, name: &str) -> Option<usize> {
        self.sorted
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
            .ok()
    }

    /// The cue dimensions, in the order the schema declares them.
    pub fn dimensions(&self) -> impl Iterator<Item = &str> {
        self.cues.iter().map(|c| c.dimension.as_str())
    }

    pub(super) fn band(&self) -> &[(f64, String)] {
        self.cues
            .iter()
            .find_map(|c| match &c.derive {
                Derive::Band(floors) => Some(floors.as_slice()),
                _ => None,
            })
            .unwrap_or(&[])
    }
}

fn bad(reason: String) -> CoreError {
    CoreError::InvalidArgument {
        name: "schema",
        reason,
    }
}
