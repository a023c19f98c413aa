//! `version` records proved in the core: a replay follows one without reading its line again.
//!
//! Each write of a subject adds a `version` record after its episode, so a home of facts
//! holds as many of them as episodes. The decoder proves the ones cuemem writes — keys
//! sorted, each once, `{"at", "id", "op", "subject", "supersedes", "valid_from"}`, strings
//! (`supersedes` may be null), both instants in the form cuemem writes them
//! ([`rules::instant`]) — and hands the caller their fields as the line holds them. Any other
//! line of the kind (an instant in another offset, a key more, a number) is left to the
//! caller's reader, which decides what it is: a proof here only ever spares that reading.

use std::borrow::Cow;

use super::rows::{Span, Store};
use super::rules;
use super::value::{self, Val};

/// The keys of a `version` record, in the order cuemem writes them.
const KEYS: [&str; 6] = ["at", "id", "op", "subject", "supersedes", "valid_from"];

/// A proven `version` record: where its line starts in the run and its fields in a store.
#[derive(Clone, Copy, Debug)]
pub(super) struct Version {
    pub(super) start: usize,
    pub(super) piece: u32,
    subject: Span,
    id: Span,
    supersedes: Option<Span>,
    valid_from: Span,
    at: Span,
}

/// A proven `version` record's fields, as its line holds them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VersionRef<'d> {
    /// Where its line starts in the run.
    pub start: usize,
    pub subject: &'d str,
    pub id: &'d str,
    pub supersedes: Option<&'d str>,
    pub valid_from: &'d str,
    pub at: &'d str,
}

impl Version {
    /// Its fields, read through the store of its piece.
    pub(super) fn read<'d>(&self, store: &'d Store) -> VersionRef<'d> {
        VersionRef {
            start: self.start,
            subject: store.text(self.subject),
            id: store.text(self.id),
            supersedes: self.supersedes.map(|s| store.text(s)),
            valid_from: store.text(self.valid_from),
            at: store.text(self.at),
        }
    }
}

/// Where a proven record's fields lie in a store: subject, id, supersedes, valid from, at.
pub(super) type Fields = (Span, Span, Option<Span>, Span, Span);

/// The `version` record (of kind `op`) `line` is, its fields put in `store`; `None` for any
/// line not exactly as cuemem writes one (see the module docs).
pub(super) fn prove(line: &[u8], op: &str, store: &mut Store) -> Option<Fields> {
    if !line.starts_with(b"{\"at\":\"") {
        return None;
    }
    let text = std::str::from_utf8(line).ok()?;
    let mut values: [Option<Val<'_>>; 6] = Default::default();
    let mut k = 0;
    value::object(text, |key, v| {
        (KEYS.get(k) == Some(&key.as_ref())).then_some(())?;
        values[k] = Some(v);
        k += 1;
        Some(())
    })?;
    let [Some(Val::Str(at)), Some(Val::Str(id)), Some(Val::Str(kind)), Some(Val::Str(subject)), Some(supersedes), Some(Val::Str(valid_from))] =
        values
    else {
        return None;
    };
    let supersedes: Option<Cow<'_, str>> = match supersedes {
        Val::Null => None,
        Val::Str(s) => Some(s),
        _ => return None,
    };
    if kind != op || rules::instant(&at).is_none() || rules::instant(&valid_from).is_none() {
        return None;
    }
    Some((
        store.put(&subject),
        store.put(&id),
        supersedes.map(|s| store.put(&s)),
        store.put(&valid_from),
        store.put(&at),
    ))
}

impl Version {
    /// A proven record whose line starts at byte `start` of its run, its fields (from
    /// [`prove`]) in the store of piece `piece`.
    pub(super) fn new(
        start: usize,
        piece: u32,
        (subject, id, supersedes, valid_from, at): Fields,
    ) -> Version {
        Version {
            start,
            piece,
            subject,
            id,
            supersedes,
            valid_from,
            at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proved(line: &str) -> Option<Vec<String>> {
        let mut store = Store::default();
        let fields = prove(line.as_bytes(), "version", &mut store)?;
        let v = Version::new(0, 0, fields).read(&store);
        Some(
            [
                v.subject,
                v.id,
                v.supersedes.unwrap_or("-"),
                v.valid_from,
                v.at,
            ]
            .map(str::to_owned)
            .to_vec(),
        )
    }

    const LINE: &str = r#"{"at":"2026-06-01T00:00:00+00:00","id":"ep-2","op":"version","subject":"u\u00e9:office","supersedes":"ep-1","valid_from":"2026-05-01T10:00:00.500000+00:00"}"#;

    #[test]
    fn the_records_cuemem_writes_are_proved_with_their_fields() {
        assert_eq!(
            proved(&format!("{LINE}\n")).unwrap(),
            [
                "ué:office",
                "ep-2",
                "ep-1",
                "2026-05-01T10:00:00.500000+00:00",
                "2026-06-01T00:00:00+00:00"
            ]
        );
        let first = LINE.replace(r#""supersedes":"ep-1""#, r#""supersedes":null"#);
        assert_eq!(proved(&first).unwrap()[2], "-");
    }

    #[test]
    fn any_other_line_is_left_to_the_caller() {
        for (from, to) in [
            (r#""op":"version""#, r#""op":"approval""#),
            ("+00:00\",\"id\"", "+02:00\",\"id\""),
            ("2026-06-01T00:00:00+00:00", "2026-06-01T00:00:00Z"),
            (r#""supersedes":"ep-1""#, r#""supersedes":7"#),
            (r#""id":"ep-2""#, r#""id":null"#),
            (r#""subject":"#, r#""zz":1,"subject":"#),
            (r#""id":"ep-2","#, r#""id":"ep-2","id":"ep-3","#),
            (r#""valid_from""#, r#""valid_to""#),
        ] {
            let line = LINE.replacen(from, to, 1);
            assert_ne!(line, LINE, "{from}");
            assert!(proved(&line).is_none(), "{line}");
        }
        assert!(proved(&format!("{LINE} x")).is_none());
        assert!(proved(&LINE[..LINE.len() - 1]).is_none());
    }
}
