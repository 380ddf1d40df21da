//! `WHERE` clauses built term by term: every memory's reads and bulk writes select rows with a
//! [`Filter`], which numbers the parameters as terms are added, so that a term never has to
//! know how many came before it.

use crate::store::engine::Param;
pub use crate::store::engine::Value;

/// A filter argument as given: trimmed; absent, empty or only whitespace means no filter.
pub fn given(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|v| !v.is_empty())
}

/// A conjunction of `WHERE` terms with their parameters.
#[derive(Debug, Default)]
pub struct Filter {
    terms: Vec<String>,
    params: Vec<Value>,
}

impl Filter {
    /// Adds `term`, where `?` stands for the next parameter (every `?` of the term binds it).
    pub fn add(&mut self, term: &str, value: impl Into<Value>) -> &mut Self {
        self.params.push(value.into());
        let n = self.params.len();
        self.terms.push(term.replace('?', &format!("?{n}")));
        self
    }

    /// Adds `column = ?` for one value, `column IN (?, ?, …)` for several; nothing for none.
    pub fn any(&mut self, column: &str, values: &[String]) -> &mut Self {
        match values {
            [] => {}
            [one] => {
                self.add(&format!("{column} = ?"), one.clone());
            }
            many => {
                let mut slots = Vec::with_capacity(many.len());
                for v in many {
                    self.params.push(Value::Text(v.clone()));
                    slots.push(format!("?{}", self.params.len()));
                }
                self.terms
                    .push(format!("{column} IN ({})", slots.join(", ")));
            }
        }
        self
    }

    /// Adds `term` whose `?`s stand, in order, for `values`.
    pub fn add_each(&mut self, term: &str, values: Vec<Value>) -> &mut Self {
        let mut out = String::with_capacity(term.len() + 8);
        let mut values = values.into_iter();
        for c in term.chars() {
            if c == '?' {
                self.params
                    .push(values.next().expect("a value for every placeholder"));
                out.push_str(&format!("?{}", self.params.len()));
            } else {
                out.push(c);
            }
        }
        self.terms.push(out);
        self
    }

    /// Adds a term without a parameter.
    pub fn raw(&mut self, term: &str) -> &mut Self {
        self.terms.push(term.to_string());
        self
    }

    pub fn sql(&self) -> String {
        if self.terms.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", self.terms.join(" AND "))
        }
    }

    pub fn params(&self) -> &[Value] {
        &self.params
    }

    /// The parameters, to bind: `db.query_map(&sql, &f.bind(), …)`.
    pub fn bind(&self) -> Vec<Param<'_>> {
        Value::params(&self.params)
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_number_their_parameters() {
        let mut f = Filter::default();
        f.add("a = ?", "x".to_string())
            .raw("deleted_at IS NULL")
            .add("(b = ? OR c = ?)", "y".to_string());
        assert_eq!(
            f.sql(),
            "WHERE a = ?1 AND deleted_at IS NULL AND (b = ?2 OR c = ?2)"
        );
        assert_eq!(f.params().len(), 2);
        f.any("run_id", &["r1".into(), "r2".into()]).any("x", &[]);
        let mut g = Filter::default();
        g.add("a = ?", 1i64)
            .add_each("(b != ? OR c != ?)", vec![Value::Int(2), Value::Int(3)]);
        assert_eq!(g.sql(), "WHERE a = ?1 AND (b != ?2 OR c != ?3)");
        assert_eq!(
            f.sql(),
            "WHERE a = ?1 AND deleted_at IS NULL AND (b = ?2 OR c = ?2) AND run_id IN (?3, ?4)"
        );
    }

    #[test]
    fn blank_arguments_are_not_given() {
        assert_eq!(given(Some("  x ")), Some("x"));
        assert_eq!(given(Some(" \t")), None);
        assert_eq!(given(Some("")), None);
        assert_eq!(given(None), None);
    }
}
