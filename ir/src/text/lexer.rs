//! Tokens of the MLIR text format.
//!
//! The parser pulls one token at a time and may move the lexer to any byte
//! offset: dimension lists (`4x?xf32`) and dialect type bodies (`!a.b<...>`)
//! are scanned by character, as MLIR does. Nothing here indexes the input
//! without a bounds check, so any byte string lexes without panicking.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Eof,
    /// `foo`, `arith.addf`, `i32`, `x`.
    BareIdent,
    /// `%x`, `%0`, `%0#1` (the text keeps the `%`).
    PercentId,
    /// `^bb0`.
    CaretId,
    /// `@name` or `@"quoted"`.
    AtId,
    /// `#alias`.
    HashId,
    /// `!dialect.type` (the body after it is scanned by the parser).
    ExclId,
    /// `12`, `0x1F`.
    Integer,
    /// `1.5`, `2.0e-3`.
    Float,
    /// `"..."`, decoded with [`decode_string`].
    String,
    /// One of `( ) { } [ ] < > , : = ? * + -`.
    Punct(u8),
    /// `->`.
    Arrow,
    /// Bad input; the message is in `Lexer::error`.
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

pub struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    /// Why the last `Error` token was produced.
    pub error: String,
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c == b'.'
}

/// Characters of `%name` / `^name` after the sigil (MLIR's suffix-id).
fn is_suffix_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.' | b'-')
}

impl<'a> Lexer<'a> {
    pub fn new(src: &'a str) -> Lexer<'a> {
        Lexer {
            src,
            pos: 0,
            error: String::new(),
        }
    }
    pub fn src(&self) -> &'a str {
        self.src
    }
    pub fn pos(&self) -> usize {
        self.pos
    }
    pub fn set_pos(&mut self, pos: usize) {
        self.pos = pos.min(self.src.len());
    }
    pub fn peek_byte(&self) -> Option<u8> {
        self.byte(self.pos)
    }
    pub fn byte(&self, at: usize) -> Option<u8> {
        self.src.as_bytes().get(at).copied()
    }
    pub fn bump_byte(&mut self) {
        self.set_pos(self.pos + 1);
    }
    /// The source text of a token ("" if it does not fall on char boundaries).
    pub fn text(&self, t: Token) -> &'a str {
        self.src.get(t.start..t.end).unwrap_or("")
    }

    /// Skips whitespace and `//` comments.
    pub fn skip_trivia(&mut self) {
        loop {
            match self.peek_byte() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                Some(b'/') if self.byte(self.pos + 1) == Some(b'/') => {
                    while let Some(c) = self.peek_byte() {
                        if c == b'\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                _ => return,
            }
        }
    }

    fn take_while(&mut self, pred: fn(u8) -> bool) {
        while self.peek_byte().is_some_and(pred) {
            self.pos += 1;
        }
    }

    fn error_tok(&mut self, start: usize, msg: &str) -> Token {
        self.error = msg.to_string();
        if self.pos <= start {
            // Always make progress so callers cannot loop on one byte.
            self.pos = (start + 1).min(self.src.len());
        }
        Token {
            kind: Kind::Error,
            start,
            end: self.pos,
        }
    }

    pub fn next_token(&mut self) -> Token {
        self.skip_trivia();
        let start = self.pos;
        let tok = |kind, end| Token { kind, start, end };
        let Some(c) = self.peek_byte() else {
            return tok(Kind::Eof, start);
        };
        self.pos += 1;
        match c {
            b'(' | b')' | b'{' | b'}' | b'[' | b']' | b'<' | b'>' | b',' | b':' | b'=' | b'?'
            | b'*' | b'+' => tok(Kind::Punct(c), self.pos),
            b'-' => {
                if self.peek_byte() == Some(b'>') {
                    self.pos += 1;
                    tok(Kind::Arrow, self.pos)
                } else {
                    tok(Kind::Punct(b'-'), self.pos)
                }
            }
            b'"' => match decode_string(self.src.as_bytes(), start) {
                Ok((_, end)) => {
                    self.pos = end;
                    tok(Kind::String, end)
                }
                Err((at, msg)) => {
                    self.pos = at.max(start + 1);
                    self.error_tok(start, msg)
                }
            },
            b'%' | b'^' => {
                let kind = if c == b'%' {
                    Kind::PercentId
                } else {
                    Kind::CaretId
                };
                if self.peek_byte().is_some_and(|b| b.is_ascii_digit()) {
                    self.take_while(|b| b.is_ascii_digit());
                } else if self
                    .peek_byte()
                    .is_some_and(|b| is_suffix_char(b) && !b.is_ascii_digit())
                {
                    self.take_while(is_suffix_char);
                } else {
                    return self.error_tok(start, "invalid SSA name or block label");
                }
                // `%0#1` is one use: result 1 of the group `%0`.
                if kind == Kind::PercentId
                    && self.peek_byte() == Some(b'#')
                    && self.byte(self.pos + 1).is_some_and(|b| b.is_ascii_digit())
                {
                    self.pos += 1;
                    self.take_while(|b| b.is_ascii_digit());
                }
                tok(kind, self.pos)
            }
            b'@' => {
                if self.peek_byte() == Some(b'"') {
                    match decode_string(self.src.as_bytes(), self.pos) {
                        Ok((_, end)) => {
                            self.pos = end;
                            tok(Kind::AtId, end)
                        }
                        Err((at, msg)) => {
                            self.pos = at.max(start + 1);
                            self.error_tok(start, msg)
                        }
                    }
                } else if self.peek_byte().is_some_and(is_ident_start) {
                    self.take_while(is_ident_char);
                    tok(Kind::AtId, self.pos)
                } else {
                    self.error_tok(start, "invalid symbol name")
                }
            }
            b'#' | b'!' => {
                if self.peek_byte().is_some_and(is_suffix_char) {
                    self.take_while(is_suffix_char);
                    let kind = if c == b'#' {
                        Kind::HashId
                    } else {
                        Kind::ExclId
                    };
                    tok(kind, self.pos)
                } else {
                    self.error_tok(start, "expected an identifier after the sigil")
                }
            }
            b'0'..=b'9' => self.lex_number(start),
            c if is_ident_start(c) => {
                self.take_while(is_ident_char);
                tok(Kind::BareIdent, self.pos)
            }
            _ => self.error_tok(start, "unexpected character"),
        }
    }

    fn lex_number(&mut self, start: usize) -> Token {
        let first = self.byte(start);
        if first == Some(b'0')
            && self.peek_byte() == Some(b'x')
            && self
                .byte(self.pos + 1)
                .is_some_and(|b| b.is_ascii_hexdigit())
        {
            self.pos += 1;
            self.take_while(|b| b.is_ascii_hexdigit());
            return Token {
                kind: Kind::Integer,
                start,
                end: self.pos,
            };
        }
        self.take_while(|b| b.is_ascii_digit());
        let mut kind = Kind::Integer;
        if self.peek_byte() == Some(b'.') {
            kind = Kind::Float;
            self.pos += 1;
            self.take_while(|b| b.is_ascii_digit());
        }
        if matches!(self.peek_byte(), Some(b'e' | b'E')) {
            let mut p = self.pos + 1;
            if matches!(self.byte(p), Some(b'+' | b'-')) {
                p += 1;
            }
            if self.byte(p).is_some_and(|b| b.is_ascii_digit()) {
                kind = Kind::Float;
                self.pos = p;
                self.take_while(|b| b.is_ascii_digit());
            }
        }
        Token {
            kind,
            start,
            end: self.pos,
        }
    }
}

fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Decodes the string literal whose opening quote is at `start`. Returns the
/// value and the offset after the closing quote, or where and why it is bad.
pub fn decode_string(src: &[u8], start: usize) -> Result<(String, usize), (usize, &'static str)> {
    let mut out = Vec::new();
    let mut i = start + 1;
    loop {
        let Some(&c) = src.get(i) else {
            return Err((start, "unterminated string literal"));
        };
        match c {
            b'"' => return Ok((String::from_utf8_lossy(&out).into_owned(), i + 1)),
            b'\n' | b'\r' => return Err((start, "unterminated string literal")),
            b'\\' => {
                let Some(&e) = src.get(i + 1) else {
                    return Err((start, "unterminated string literal"));
                };
                match e {
                    b'"' | b'\\' => out.push(e),
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    _ => {
                        let hi = hex_val(e);
                        let lo = src.get(i + 2).copied().and_then(hex_val);
                        match (hi, lo) {
                            (Some(h), Some(l)) => {
                                out.push(h * 16 + l);
                                i += 1;
                            }
                            _ => return Err((i, "unknown escape in string literal")),
                        }
                    }
                }
                i += 2;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
}

/// Decodes the hex digits of `0x...` (an even number of them) to bytes.
pub fn decode_hex(digits: &str) -> Option<Vec<u8>> {
    let b = digits.as_bytes();
    if !b.len().is_multiple_of(2) {
        return None;
    }
    b.chunks(2)
        .map(|p| match p {
            [h, l] => Some(hex_val(*h)? * 16 + hex_val(*l)?),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<(Kind, String)> {
        let mut l = Lexer::new(s);
        let mut out = Vec::new();
        loop {
            let t = l.next_token();
            if t.kind == Kind::Eof {
                return out;
            }
            out.push((t.kind, l.text(t).to_string()));
        }
    }

    #[test]
    fn tokens() {
        let k = kinds("%0:2 = \"a.b\"(%x#1) -> ^bb1 @f @\"q r\" // c\n 1.5e-3 0x1F 7 -1 !t.x #l");
        let want = [
            (Kind::PercentId, "%0"),
            (Kind::Punct(b':'), ":"),
            (Kind::Integer, "2"),
            (Kind::Punct(b'='), "="),
            (Kind::String, "\"a.b\""),
            (Kind::Punct(b'('), "("),
            (Kind::PercentId, "%x#1"),
            (Kind::Punct(b')'), ")"),
            (Kind::Arrow, "->"),
            (Kind::CaretId, "^bb1"),
            (Kind::AtId, "@f"),
            (Kind::AtId, "@\"q r\""),
            (Kind::Float, "1.5e-3"),
            (Kind::Integer, "0x1F"),
            (Kind::Integer, "7"),
            (Kind::Punct(b'-'), "-"),
            (Kind::Integer, "1"),
            (Kind::ExclId, "!t.x"),
            (Kind::HashId, "#l"),
        ];
        let got: Vec<(Kind, &str)> = k.iter().map(|(k, s)| (*k, s.as_str())).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn strings() {
        let src = br#""a\"b\\c\n\0A\41""#;
        let (s, end) = decode_string(src, 0).unwrap();
        assert_eq!(s, "a\"b\\c\n\nA");
        assert_eq!(end, src.len());
        assert!(decode_string(b"\"abc", 0).is_err());
        assert!(decode_string(b"\"a\nb\"", 0).is_err());
        assert!(decode_string(b"\"\\q\"", 0).is_err());
        let mut l = Lexer::new("\"open");
        assert_eq!(l.next_token().kind, Kind::Error);
        assert_eq!(l.next_token().kind, Kind::BareIdent);
    }

    #[test]
    fn garbage_makes_progress() {
        let mut l = Lexer::new("\u{e9}\u{0} % ^ @ !");
        let mut n = 0;
        while l.next_token().kind != Kind::Eof {
            n += 1;
            assert!(n < 20);
        }
    }
}
