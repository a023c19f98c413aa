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

use super::rules::{self, proves};
use super::schema::{Rule, Schema, IMPORTANCE_BAND, TIME_BUCKETS};
use super::value::Val;

/// The journal line of the episode `values` (by slot), or `None` when the core cannot
/// prove it. `sparse` marks the fields written only when set.
pub(super) fn encode(
    schema: &Schema,
    op: &str,
    sparse: &[bool],
    values: &[Val<'_>],
) -> Option<String> {
    let fields = &schema.fields;
    if values.len() != fields.len() || sparse.len() != fields.len() {
        return None;
    }
    let slots = &schema.slots;
    let recorded_slot = schema.slot("recorded_at")?;
    let recorded = values[recorded_slot].as_str()?;
    rules::instant(recorded)?;
    // The derived fields: the day it was recorded (UTC), and that day's midnight.
    let occurred: &str = match &values[slots.occurred_at] {
        Val::Null if fields[slots.occurred_at].default.is_none() => &recorded[..10],
        v => v.as_str()?,
    };
    rules::date(occurred)?;
    let derived_start = format!("{occurred}T00:00:00+00:00");
    let start = match &values[slots.valid_from] {
        Val::Null if fields[slots.valid_from].default.is_none() => derived_start.as_str(),
        v => v.as_str()?,
    };
    let start_at = rules::instant(start)?;
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
    let given: Vec<Option<Val<'_>>> = values.iter().map(|v| Some(v.reborrow())).collect();
    let axes = super::decode::axes(schema, &given)?;
    let importance = rules::unit(&values[slots.band_of])?;
    let band = schema
        .band()
        .iter()
        .find(|(floor, _)| importance >= *floor)
        .map(|(_, name)| name.as_str())?;

    let mut members: Vec<(&str, String)> = Vec::with_capacity(fields.len() + 2);
    for (i, field) in fields.iter().enumerate() {
        let v = &values[i];
        if sparse[i] && matches!(v, Val::Null) {
            continue;
        }
        let text = if i == slots.occurred_at {
            string(occurred)
        } else if i == slots.valid_from {
            string(start)
        } else if matches!(field.rule, Rule::Salience) {
            let mut named: Vec<(&str, f64)> = schema
                .axes
                .iter()
                .map(String::as_str)
                .zip(axes.iter().copied())
                .collect();
            named.sort_unstable_by(|a, b| a.0.cmp(b.0));
            let mut out = String::from("{");
            for (k, (name, x)) in named.into_iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                out.push_str(&string(name));
                out.push(':');
                out.push_str(&number(x)?);
            }
            out.push('}');
            out
        } else {
            json(v)?
        };
        members.push((field.name.as_str(), text));
    }
    members.push((
        TIME_BUCKETS,
        format!(
            "[{},{},{}]",
            string(&occurred[..4]),
            string(&occurred[..7]),
            string(occurred)
        ),
    ));
    members.push((IMPORTANCE_BAND, string(band)));
    members.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut line = String::with_capacity(512);
    line.push_str("{\"episode\":{");
    for (k, (name, text)) in members.iter().enumerate() {
        if k > 0 {
            line.push(',');
        }
        line.push_str(&string(name));
        line.push(':');
        line.push_str(text);
    }
    line.push_str("},\"op\":");
    line.push_str(&string(op));
    line.push_str("}\n");
    Some(line)
}

/// A value as JSON (a proven one: no object but the salience, handled by the caller).
fn json(v: &Val<'_>) -> Option<String> {
    Some(match v {
        Val::Null => "null".to_owned(),
        Val::Bool(true) => "true".to_owned(),
        Val::Bool(false) => "false".to_owned(),
        Val::Num(x) => number(*x)?,
        Val::Str(s) => string(s),
        Val::Strs(items) => {
            let mut out = String::from("[");
            for (k, s) in items.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                out.push_str(&string(s));
            }
            out.push(']');
            out
        }
        Val::Object(_) => return None,
    })
}

/// A JSON string (escapes as the journal's encoder writes them).
fn string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// A finite number in its shortest form, when that form needs no exponent.
fn number(x: f64) -> Option<String> {
    if !x.is_finite() {
        return None;
    }
    let text = serde_json::to_string(&x).ok()?;
    (!text.contains(['e', 'E'])).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_their_shortest_form_without_an_exponent() {
        assert_eq!(number(0.6).as_deref(), Some("0.6"));
        assert_eq!(number(1.0).as_deref(), Some("1.0"));
        assert_eq!(number(0.0).as_deref(), Some("0.0"));
        assert_eq!(number(0.1 + 0.2).as_deref(), Some("0.30000000000000004"));
        assert_eq!(number(1e-7), None);
        assert_eq!(number(f64::NAN), None);
    }

    #[test]
    fn strings_escaped_as_the_journal_escapes_them() {
        assert_eq!(string("a\"b\\c\n\u{1}é"), "\"a\\\"b\\\\c\\n\\u0001é\"");
    }
}
