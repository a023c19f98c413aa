//! Journal records decoded in batches: the episode schema, compiled, run over JSONL bytes.
//!
//! The schema is declared once, in Python (`cuemem.schema.spec`), and handed to
//! [`Schema::new`] as plain field and cue specifications: the names, the rule each
//! field follows, its limits, choices and default, and how each cue dimension is
//! derived. No limit, choice or default is written here.
//!
//! [`Decoder::decode`] reads a run of journal lines and sorts each into one of two
//! kinds. A `remember` record whose episode the core can *prove* valid — every field
//! in the canonical form cuemem writes, so the validated episode equals the stored
//! one — becomes a row ([`RowRef`]): its id, cue values, axes, confidence, reference time,
//! sources and narrative, ready for the indexes. Every other line is *deferred* to
//! the caller's own applier, byte range and all: another kind of record, a line that
//! is not JSON, and an episode the core cannot prove (a field outside its canonical
//! form, text whose Unicode rules only the full validator knows). So the core never
//! decides that a record is bad and never words an error: what it cannot prove goes
//! to the one validator that does. [`index_cues`], [`put_salience`] and [`add_texts`]
//! hand the rows to the indexes inside the core.

mod decode;
mod encode;
mod feed;
mod idrows;
mod ids;
mod items;
mod rows;
mod rules;
mod schema;
mod seen;
mod value;
mod versions;

pub use value::Val;
pub use versions::VersionRef;

pub use decode::{Decoded, Decoder, Line};
pub use feed::{add_texts, index_cues, put_salience};
pub use idrows::{Found, IdRows};
pub use ids::{content_hash, episode_id};
pub use items::{Admitted, Items, Owners, Plan, Verdict};
pub use rows::RowRef;
pub use schema::{CueSpec, Derive, FieldSpec, Rule, Schema};
pub use seen::Seen;
