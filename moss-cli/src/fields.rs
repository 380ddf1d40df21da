//! A request field given more than once on the command line (`context=a context=b`): a list
//! where the request takes a list for that field, and an error naming the field where it takes
//! one value. What takes a list comes from the request's schema in the daemon's own OpenAPI
//! document (`GET /openapi.json`), asked for only when a field repeats.

use anyhow::bail;
use serde_json::{Map, Value};

/// The fields of `POST path`'s request body whose schema accepts an array; `None` when the
/// document has no such route.
pub fn list_fields(doc: &Value, path: &str) -> Option<Vec<String>> {
    let body = doc
        .get("paths")?
        .get(path)?
        .get("post")?
        .pointer("/requestBody/content/application~1json/schema")?;
    let body = resolve(doc, body);
    let properties = body.get("properties")?.as_object()?;
    Some(
        properties
            .iter()
            .filter(|(_, schema)| accepts_array(doc, schema, 0))
            .map(|(k, _)| k.clone())
            .collect(),
    )
}

/// `schema`, or what its `$ref` points to in `doc`.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix('#')
            .and_then(|p| doc.pointer(p))
            .unwrap_or(schema),
        None => schema,
    }
}

/// Whether `schema` accepts a JSON array: its type is (or includes) `array`, or one of its
/// alternatives does (`oneOf`, `anyOf`, `allOf`, through `$ref`s).
fn accepts_array(doc: &Value, schema: &Value, depth: usize) -> bool {
    if depth > 8 {
        return false;
    }
    let schema = resolve(doc, schema);
    let typed = match schema.get("type") {
        Some(Value::String(t)) => t == "array",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "array"),
        _ => false,
    };
    typed
        || ["oneOf", "anyOf", "allOf"].iter().any(|k| {
            schema
                .get(*k)
                .and_then(Value::as_array)
                .is_some_and(|alts| alts.iter().any(|a| accepts_array(doc, a, depth + 1)))
        })
}

/// Sets each repeated field in `body`: the list of its values (a value that is itself a list
/// adds its items) when `lists` names it, else an error naming the field and what to do.
pub fn merge(
    body: &mut Map<String, Value>,
    repeated: Vec<(String, Vec<Value>)>,
    route: &str,
    lists: &[String],
) -> anyhow::Result<()> {
    for (key, values) in repeated {
        if !lists.contains(&key) {
            bail!(
                "{key} is given {} times, but {route} takes one value for it; give it once",
                values.len()
            );
        }
        let mut items = Vec::new();
        for v in values {
            match v {
                Value::Array(more) => items.extend(more),
                one => items.push(one),
            }
        }
        body.insert(key, Value::Array(items));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({
            "paths": {"/memories": {"post": {"requestBody": {"content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/Store"}}}}}}},
            "components": {"schemas": {
                "Store": {"type": "object", "properties": {
                    "content": {"type": "string"},
                    "context": {"oneOf": [{"type": "null"}, {"$ref": "#/components/schemas/Contexts"}]},
                    "tags": {"type": ["array", "null"], "items": {"type": "string"}},
                    "weight": {"type": ["number", "null"]}}},
                "Contexts": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
            }}
        })
    }

    #[test]
    fn list_fields_follow_refs_and_alternatives() {
        let mut lists = list_fields(&doc(), "/memories").unwrap();
        lists.sort();
        assert_eq!(lists, ["context", "tags"]);
        assert_eq!(list_fields(&doc(), "/nowhere"), None);
    }

    #[test]
    fn repeats_become_lists_or_name_the_field() {
        let lists = list_fields(&doc(), "/memories").unwrap();
        let mut body = Map::new();
        merge(
            &mut body,
            vec![("context".into(), vec![json!("a"), json!(["b", "c"])])],
            "POST /memories",
            &lists,
        )
        .unwrap();
        assert_eq!(Value::Object(body), json!({"context": ["a", "b", "c"]}));
        let e = merge(
            &mut Map::new(),
            vec![("content".into(), vec![json!("a"), json!("b")])],
            "POST /memories",
            &lists,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "content is given 2 times, but POST /memories takes one value for it; give it once"
        );
    }
}
