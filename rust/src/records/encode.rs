//! A write's episode encoded into its journal line, proving its fields as the decoder
//! proves a line.
//!
//! [`encode`] takes an episode's fields as a caller gave them (in the schema's order,
//! `null` for a field left out) and answers with the line cuemem writes for it —
//! `{"episode": {...}, "op": "..."}` with sorted keys, the derived fields filled in, the
//! salience axes complete — when it can prove every value valid and already in the form
//! the validator leaves it in ([`super::rules`]). Otherwise it answers nothing and the
//! caller validates in full, which words the error: the core never decides that a write
//! is bad. A number whose shortest form would need an exponent is not proven either (the
//! journal's encoder writes those its own way).

use std::borrow::Cow;

use super::rules::{self, proves};
use super::schema::{Rule, Schema, IMPORTANCE_BAND, TIME_BUCKETS};
use super::value::Val;

/// What the line holds, in the order it is written (keys sorted): a field, or a derived key.
#[derive(Clone, Copy, Debug)]
pub(super) enum Emit {
    Field(usize),
    Buckets,
    Band,
}

/// The keys of an encoded episode in sorted order (what the journal's encoder writes).
pub(super) fn order(schema: &Schema) -> Vec<(String, Emit)> {
    let mut keys: Vec<(String, Emit)> = schema
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.clone(), Emit::Field(i)))
        .collect();
    keys.push((TIME_BUCKETS.to_owned(), Emit::Buckets));
    keys.push((IMPORTANCE_BAND.to_owned(), Emit::Band));
    keys.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    keys
}

/// What an episode's line holds for the fields derived when not given: the day it
/// occurred (the UTC day it was recorded) and when it became valid (that day's midnight).
pub(super) struct Derived<'v> {
    pub(super) occurred: &'v str,
    pub(super) start: Cow<'v, str>,
    /// `start` in microseconds since the epoch.
    start_at: i64,
}

/// The derived fields of the episode `values` (by slot), proven: `None` when the core
/// cannot prove the times they come from.
fn derived<'v>(schema: &Schema, values: &'v [Val<'_>]) -> Option<Derived<'v>> {
    let (fields, slots) = (&schema.fields, &schema.slots);
    let recorded = values[slots.recorded_at].as_str()?;
    rules::instant(recorded)?;
    let occurred: &str = match &values[slots.occurred_at] {
        Val::Null if fields[slots.occurred_at].default.is_none() => recorded.get(..10)?,
        v => v.as_str()?,
    };
    rules::date(occurred)?;
    let start = match &values[slots.valid_from] {
        Val::Null if fields[slots.valid_from].default.is_none() => {
            Cow::Owned(format!("{occurred}T00:00:00+00:00"))
        }
        v => Cow::Borrowed(v.as_str()?),
    };
    let start_at = rules::instant(&start)?;
    Some(Derived {
        occurred,
        start,
        start_at,
    })
}

/// The journal line of the episode `values` (by slot) and its derived fields, or `None`
/// when the core cannot prove it. `sparse` marks the fields written only when set;
/// `order` is [`order`]'s.
pub(super) fn encode<'v>(
    schema: &Schema,
    op: &str,
    sparse: &[bool],
    order: &[(String, Emit)],
    values: &'v [Val<'_>],
) -> Option<(Vec<u8>, Derived<'v>)> {
    let fields = &schema.fields;
    if values.len() != fields.len() || sparse.len() != fields.len() {
        return None;
    }
    let slots = &schema.slots;
    let derived = derived(schema, values)?;
    let (occurred, start, start_at) = (derived.occurred, derived.start.as_ref(), derived.start_at);
    for (i, field) in fields.iter().enumerate() {
        if i == slots.occurred_at || i == slots.valid_from {
            continue; // proven above
        }
        let v = &values[i];
        match field.rule {
            Rule::Salience => {}
            Rule::Metadata if matches!(v, Val::Null) => {}
            Rule::Metadata => return None, // the caller's own object: the validator's
            _ if !proves(&field.rule, v) => return None,
            _ => {}
        }
    }
    if let Val::Str(end) = &values[slots.valid_to] {
        if rules::instant(end)? <= start_at {
            return None;
        }
    }
    let id = values[slots.id].as_str()?;
    if values[slots.supersedes].as_str() == Some(id) {
        return None;
    }
    let axes = match &values[slots.salience] {
        Val::Null => {
            let mut axes = vec![0.0f64; schema.axes.len()];
            for &(slot, a) in &slots.axis_fields {
                axes[a] = rules::unit(&values[slot])?;
            }
            axes
        }
        _ => super::decode::axes(schema, |slot| values.get(slot))?,
    };
    let importance = rules::unit(&values[slots.band_of])?;
    let band = schema
        .band()
        .iter()
        .find(|(floor, _)| importance >= *floor)
        .map(|(_, name)| name.as_str())?;

    let mut line: Vec<u8> = Vec::with_capacity(1024);
    line.extend_from_slice(b"{\"episode\":{");
    let mut first = true;
    for (name, emit) in order {
        if let Emit::Field(i) = *emit {
            if sparse[i] && matches!(values[i], Val::Null) {
                continue;
            }
        }
        if !first {
            line.push(b',');
        }
        first = false;
        string(&mut line, name);
        line.push(b':');
        match *emit {
            Emit::Buckets => {
                line.push(b'[');
                string(&mut line, &occurred[..4]);
                line.push(b',');
                string(&mut line, &occurred[..7]);
                line.push(b',');
                string(&mut line, occurred);
                line.push(b']');
            }
            Emit::Band => string(&mut line, band),
            Emit::Field(i) if i == slots.occurred_at => string(&mut line, occurred),
            Emit::Field(i) if i == slots.valid_from => string(&mut line, start),
            Emit::Field(i) if i == slots.salience => {
                let mut named: Vec<(&str, usize)> = schema
                    .axes
                    .iter()
                    .enumerate()
                    .map(|(a, n)| (n.as_str(), a))
                    .collect();
                named.sort_unstable();
                line.push(b'{');
                for (k, (name, a)) in named.into_iter().enumerate() {
                    if k > 0 {
                        line.push(b',');
                    }
                    string(&mut line, name);
                    line.push(b':');
                    number(&mut line, axes[a])?;
                }
                line.push(b'}');
            }
            Emit::Field(i) => json(&mut line, &values[i])?,
        }
    }
    line.extend_from_slice(b"},\"op\":");
    string(&mut line, op);
    line.extend_from_slice(b"}\n");
    Some((line, derived))
}

/// A value as JSON (a proven one: no object but the salience, written by the caller).
fn json(out: &mut Vec<u8>, v: &Val<'_>) -> Option<()> {
    match v {
        Val::Null => out.extend_from_slice(b"null"),
        Val::Bool(true) => out.extend_from_slice(b"true"),
        Val::Bool(false) => out.extend_from_slice(b"false"),
        Val::Num(x) => number(out, *x)?,
        Val::Str(s) => string(out, s),
        Val::Strs(items) => {
            out.push(b'[');
            for (k, s) in items.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                string(out, s);
            }
            out.push(b']');
        }
        Val::Object(_) => return None,
    }
    Some(())
}

/// A JSON string, escaped as the journal's encoder escapes it (`"`, `\` and control
/// characters; everything else as its UTF-8 bytes).
fn string(out: &mut Vec<u8>, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        let _ = serde_json::to_writer(&mut *out, s);
    }
}

/// A finite number in its shortest form, when that form needs no exponent.
fn number(out: &mut Vec<u8>, x: f64) -> Option<()> {
    if !x.is_finite() {
        return None;
    }
    let at = out.len();
    serde_json::to_writer(&mut *out, &x).ok()?;
    if out[at..].iter().any(|&b| b == b'e' || b == b'E') {
        out.truncate(at);
        return None;
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(x: f64) -> Option<String> {
        let mut out = Vec::new();
        number(&mut out, x).map(|()| String::from_utf8(out).unwrap())
    }

    fn text(s: &str) -> String {
        let mut out = Vec::new();
        string(&mut out, s);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn numbers_in_their_shortest_form_without_an_exponent() {
        assert_eq!(num(0.6).as_deref(), Some("0.6"));
        assert_eq!(num(1.0).as_deref(), Some("1.0"));
        assert_eq!(num(0.0).as_deref(), Some("0.0"));
        assert_eq!(num(0.1 + 0.2).as_deref(), Some("0.30000000000000004"));
        assert_eq!(num(1e-7), None);
        assert_eq!(num(f64::NAN), None);
    }

    #[test]
    fn strings_escaped_as_the_journal_escapes_them() {
        assert_eq!(text("a\"b\\c\n\u{1}é"), "\"a\\\"b\\\\c\\n\\u0001é\"");
        assert_eq!(text("plain é 山 \u{7f}"), "\"plain é 山 \u{7f}\"");
    }
}
