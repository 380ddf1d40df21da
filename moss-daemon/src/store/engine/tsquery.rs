//! The search query language (FTS5's) as a PostgreSQL `tsquery`, so that a search means the same
//! on both engines as far as PostgreSQL's full-text search can say it.
//!
//! What maps: words, `"quoted phrases"` (words in order, `<->`), prefixes (`auth*` becomes
//! `auth:*`), `AND`, `OR`, `NOT` (binary, as FTS5's: `a NOT b` is `a & !b`), parentheses, and
//! words side by side (AND). Words are cut as FTS5's `unicode61` cuts them (letters and digits;
//! everything else separates), so `"user-id"` is the phrase `user <-> id` on both engines.
//!
//! What does not, and is refused with a message that says so: `NEAR(…)` (PostgreSQL's `<N>`
//! means exactly N apart, not within N), column filters (`title: …`), and `^` (first token).
//! PostgreSQL's own text search configuration then stems each word (see the store's
//! `moss_english` configuration: Snowball's English stemmer, no stop words, as close as
//! PostgreSQL comes to FTS5's `porter`). Where the engines still differ: FTS5 folds diacritics
//! (`cafe` finds `café`), PostgreSQL does not (that takes the `unaccent` extension); Snowball
//! and Porter stem a few words differently; PostgreSQL also accepts words side by side with a
//! parenthesized group (`(a OR b) c`), which FTS5 refuses.

use std::fmt::Write as _;

/// A query that has no tsquery form, or is not a query: the message is for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmapped(pub String);

#[derive(Debug, Clone, PartialEq)]
enum Node {
    /// Words in order; the last one a prefix when `prefix`.
    Phrase {
        words: Vec<String>,
        prefix: bool,
    },
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    /// `a NOT b`.
    Not(Box<Node>, Box<Node>),
    /// A phrase with no word in it (only punctuation): matches nothing, as in FTS5.
    Nothing,
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Quoted(String),
    Star,
    And,
    Or,
    Not,
    Open,
    Close,
}

/// `query` (FTS5 syntax) as the text of a `to_tsquery` argument.
pub fn to_tsquery(query: &str) -> Result<String, Unmapped> {
    let tokens = lex(query)?;
    let mut p = Parser { tokens, at: 0 };
    let node = p.or()?;
    if p.at < p.tokens.len() {
        return Err(Unmapped(format!(
            "unexpected {} in the query",
            describe(&p.tokens[p.at])
        )));
    }
    let mut out = String::new();
    print(&node, &mut out);
    Ok(out)
}

fn describe(t: &Token) -> String {
    match t {
        Token::Word(w) => format!("word {w:?}"),
        Token::Quoted(w) => format!("phrase {w:?}"),
        Token::Star => "`*`".into(),
        Token::And => "AND".into(),
        Token::Or => "OR".into(),
        Token::Not => "NOT".into(),
        Token::Open => "`(`".into(),
        Token::Close => "`)`".into(),
    }
}

fn lex(query: &str) -> Result<Vec<Token>, Unmapped> {
    let mut out = Vec::new();
    let mut chars = query.char_indices().peekable();
    while let Some(&(i, c)) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            '"' => {
                chars.next();
                let mut text = String::new();
                let mut closed = false;
                while let Some((_, c)) = chars.next() {
                    if c == '"' {
                        if chars.peek().map(|p| p.1) == Some('"') {
                            chars.next();
                            text.push('"');
                            continue;
                        }
                        closed = true;
                        break;
                    }
                    text.push(c);
                }
                if !closed {
                    return Err(Unmapped(
                        "a quoted phrase is not closed (missing `\"`)".into(),
                    ));
                }
                out.push(Token::Quoted(text));
            }
            '*' => {
                chars.next();
                out.push(Token::Star);
            }
            '(' => {
                chars.next();
                out.push(Token::Open);
            }
            ')' => {
                chars.next();
                out.push(Token::Close);
            }
            ':' | '{' | '}' => {
                return Err(Unmapped(
                    "column filters (`column: words`) are not supported on PostgreSQL; search \
                     the words alone"
                        .into(),
                ));
            }
            '^' => {
                return Err(Unmapped(
                    "`^` (a word at the start of a column) is not supported on PostgreSQL".into(),
                ));
            }
            '+' => {
                return Err(Unmapped(
                    "`+` between phrases is not supported on PostgreSQL; write one quoted \
                     phrase"
                        .into(),
                ));
            }
            _ => {
                let start = i;
                let mut end = i;
                while let Some(&(j, c)) = chars.peek() {
                    if c.is_whitespace() || matches!(c, '"' | '*' | '(' | ')' | ':' | '^' | '+') {
                        break;
                    }
                    end = j + c.len_utf8();
                    chars.next();
                }
                let word = &query[start..end];
                out.push(match word {
                    "AND" => Token::And,
                    "OR" => Token::Or,
                    "NOT" => Token::Not,
                    "NEAR" if chars.peek().map(|p| p.1) == Some('(') => {
                        return Err(Unmapped(
                            "NEAR(…) is not supported on PostgreSQL (its distance operator \
                             means exactly N words apart); use a quoted phrase, or the words \
                             with AND"
                                .into(),
                        ));
                    }
                    _ => {
                        if !word
                            .chars()
                            .all(|c| c.is_alphanumeric() || c == '_' || !c.is_ascii())
                        {
                            return Err(Unmapped(format!(
                                "{word:?} has characters that are query syntax; put it in \
                                 double quotes"
                            )));
                        }
                        Token::Word(word.to_string())
                    }
                });
            }
        }
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn or(&mut self) -> Result<Node, Unmapped> {
        let mut left = self.and()?;
        while self.peek() == Some(&Token::Or) {
            self.at += 1;
            let right = self.and()?;
            left = Node::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    /// Explicit AND, and phrases side by side.
    fn and(&mut self) -> Result<Node, Unmapped> {
        let mut left = self.not()?;
        loop {
            match self.peek() {
                Some(Token::And) => {
                    self.at += 1;
                    let right = self.not()?;
                    left = Node::And(Box::new(left), Box::new(right));
                }
                Some(Token::Word(_) | Token::Quoted(_) | Token::Open) => {
                    let right = self.not()?;
                    left = Node::And(Box::new(left), Box::new(right));
                }
                _ => return Ok(left),
            }
        }
    }

    fn not(&mut self) -> Result<Node, Unmapped> {
        let mut left = self.primary()?;
        while self.peek() == Some(&Token::Not) {
            self.at += 1;
            let right = self.primary()?;
            left = Node::Not(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn primary(&mut self) -> Result<Node, Unmapped> {
        let Some(token) = self.peek().cloned() else {
            return Err(Unmapped("the query ends where a word was expected".into()));
        };
        self.at += 1;
        match token {
            Token::Open => {
                let inner = self.or()?;
                if self.peek() != Some(&Token::Close) {
                    return Err(Unmapped("a `(` is not closed".into()));
                }
                self.at += 1;
                Ok(inner)
            }
            Token::Word(text) | Token::Quoted(text) => {
                let prefix = self.peek() == Some(&Token::Star);
                if prefix {
                    self.at += 1;
                }
                let words = words(&text);
                if words.is_empty() {
                    return Ok(Node::Nothing);
                }
                Ok(Node::Phrase { words, prefix })
            }
            other => Err(Unmapped(format!(
                "{} where a word was expected",
                describe(&other)
            ))),
        }
    }
}

/// `text` cut into words as FTS5's `unicode61` cuts it: runs of letters and digits (and of any
/// character outside ASCII that is not a separator), lowercased.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || (!c.is_ascii() && !c.is_whitespace())))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn print(node: &Node, out: &mut String) {
    match node {
        Node::Phrase { words, prefix } => {
            if words.len() > 1 {
                out.push('(');
            }
            for (i, w) in words.iter().enumerate() {
                if i > 0 {
                    out.push_str(" <-> ");
                }
                let _ = write!(out, "'{}'", w.replace('\'', "''"));
                if *prefix && i + 1 == words.len() {
                    out.push_str(":*");
                }
            }
            if words.len() > 1 {
                out.push(')');
            }
        }
        Node::And(a, b) | Node::Or(a, b) | Node::Not(a, b) => {
            out.push('(');
            print(a, out);
            out.push_str(match node {
                Node::And(..) => " & ",
                Node::Or(..) => " | ",
                _ => " & !",
            });
            print(b, out);
            out.push(')');
        }
        // Matches nothing: a word no text holds (its characters are separators everywhere).
        Node::Nothing => out.push_str("'moss-matches-nothing' & !'moss-matches-nothing'"),
    }
}

#[cfg(test)]
mod tests;
