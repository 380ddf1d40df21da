//! Statements are written once, with SQLite's numbered placeholders (`?1`, `?2`, or a bare `?`
//! taking the next number); PostgreSQL numbers its own as `$1`, `$2`. [`to_postgres`] rewrites
//! the first into the second, leaving string literals, quoted identifiers and comments alone.

use std::borrow::Cow;

/// `sql` with each placeholder in PostgreSQL's form. A bare `?` takes the number after the
/// largest seen so far, as SQLite numbers it.
pub fn to_postgres(sql: &str) -> Cow<'_, str> {
    if !sql.contains('?') {
        return Cow::Borrowed(sql);
    }
    let bytes = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 8);
    let mut highest = 0u32;
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'\'' | b'"') => {
                // Up to the closing quote; a doubled quote is an escaped one and stays inside.
                i += 1;
                while i < bytes.len() {
                    if bytes[i] == quote {
                        if bytes.get(i + 1) == Some(&quote) {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 2;
            }
            b'?' => {
                out.push_str(&sql[copied..i]);
                let start = i + 1;
                let mut end = start;
                while end < bytes.len() && bytes[end].is_ascii_digit() {
                    end += 1;
                }
                let number = if end > start {
                    sql[start..end].parse::<u32>().unwrap_or(u32::MAX)
                } else {
                    highest + 1
                };
                highest = highest.max(number);
                out.push('$');
                out.push_str(&number.to_string());
                i = end;
                copied = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&sql[copied.min(sql.len())..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::to_postgres;

    #[test]
    fn numbered_and_bare_placeholders_become_dollar_numbers() {
        assert_eq!(
            to_postgres("SELECT a FROM t WHERE b = ?1 AND c > ?2 LIMIT ?12"),
            "SELECT a FROM t WHERE b = $1 AND c > $2 LIMIT $12"
        );
        assert_eq!(
            to_postgres("INSERT INTO t(a, b, c) VALUES (?, ?, ?)"),
            "INSERT INTO t(a, b, c) VALUES ($1, $2, $3)"
        );
        // As SQLite numbers them: a bare ? follows the largest number seen.
        assert_eq!(to_postgres("?2, ?, ?1"), "$2, $3, $1");
    }

    #[test]
    fn literals_identifiers_and_comments_are_left_alone() {
        let sql = "SELECT '?1 it''s ?', \"odd?col\" -- why?\n FROM t /* ?3 */ WHERE x = ?1";
        assert_eq!(
            to_postgres(sql),
            "SELECT '?1 it''s ?', \"odd?col\" -- why?\n FROM t /* ?3 */ WHERE x = $1"
        );
        assert_eq!(to_postgres("SELECT 1"), "SELECT 1");
        // An unterminated literal or comment ends the statement; nothing is lost or repeated.
        assert_eq!(to_postgres("SELECT ?1, 'open ?"), "SELECT $1, 'open ?");
        assert_eq!(to_postgres("SELECT ?1 /* open ?"), "SELECT $1 /* open ?");
    }
}
