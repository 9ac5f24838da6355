//! Finds `<name attr="v" other='w' flag>…</name>` blocks in LLM output.
//!
//! Only tag names that some extension registered are recognised; everything else, including any
//! text the parser does not recognise as a well-formed tag, is left untouched byte for byte.
//!
//! # Syntax
//!
//! * A name is `[A-Za-z_][A-Za-z0-9_.:-]*` and is matched case-sensitively.
//! * Attributes are `name="value"`, `name='value'` or a bare `name` (value `""`), separated by
//!   whitespace, with optional whitespace around `=`. Values are passed raw (no entity decoding).
//! * A tag header never contains `<`, not even inside a quoted value. This keeps the scan linear
//!   and means `a < b` or `Vec<T>` in code never swallows the text after it.
//! * `<name …/>` is a block with empty content.
//! * `</name >` closes (whitespace before `>` is allowed).
//!
//! # Nesting
//!
//! Opening and closing tags of the same name pair up like brackets, innermost first. So
//! `<a>x<a>y</a>z</a>` is one block whose content is `x<a>y</a>z`: the handler gets the inner tag
//! raw, and inner blocks are not processed separately. A block of one name may contain tags of
//! other names, which are likewise part of its raw content. An opening tag without a matching
//! closing tag (`<a>x<a>y</a>` → the first `<a>`) and a stray closing tag stay as plain text.
//! When blocks overlap (`<a><b></a></b>`), the one that opens first wins.
//!
//! # Bounds
//!
//! LLM output is untrusted, so the parser's memory does not grow with what a header holds
//! ([`TagLimits`]): a header longer than `max_header_bytes` or with more than `max_attributes`
//! attributes is not a tag (it stays text); attributes are validated during the scan but only
//! parsed — borrowed, never copied — when a handler asks for them ([`TagBlock::attributes`]);
//! at most `max_blocks` blocks are returned, and the scan stops after
//! [`TOKENS_PER_BLOCK`]` × max_blocks` tags, leaving everything after them as text. So the
//! parser holds O(`max_blocks`) small tokens whatever the input.
//!
//! The scan is linear in the input (every byte is examined a bounded number of times), never
//! panics and never allocates per byte.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

/// Longest tag name accepted.
pub const MAX_TAG_NAME_BYTES: usize = 64;

/// How many tag tokens (opening, closing or self-closing tags of registered names) the scan
/// considers per block it may return. Nested and stray tags need tokens that yield no block.
pub const TOKENS_PER_BLOCK: usize = 16;

/// Bounds on what the parser accepts and returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TagLimits {
    /// Blocks returned at most; later blocks are left as they are.
    pub max_blocks: usize,
    /// Longest opening tag, from `<` to `>` inclusive.
    pub max_header_bytes: usize,
    /// Most attributes in one opening tag.
    pub max_attributes: usize,
}

impl Default for TagLimits {
    fn default() -> Self {
        Self {
            max_blocks: 256,
            max_header_bytes: 4096,
            max_attributes: 64,
        }
    }
}

/// One block found in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagBlock<'a> {
    pub name: &'a str,
    /// The opening tag's attribute text (after the name, before `>` or `/>`), already validated.
    attributes: &'a str,
    /// Text between the opening and the closing tag (empty for `<name/>`).
    pub content: &'a str,
    /// Byte range of the whole block, tags included.
    pub range: Range<usize>,
}

impl<'a> TagBlock<'a> {
    /// The attributes of the opening tag as `(name, value)`, in source order, borrowed from the
    /// text.
    pub fn attributes(&self) -> Attributes<'a> {
        Attributes {
            cursor: Cursor {
                bytes: self.attributes.as_bytes(),
                at: 0,
                end: self.attributes.len(),
            },
            text: self.attributes,
        }
    }
}

/// Iterator over a block's attributes; see [`TagBlock::attributes`].
#[derive(Debug, Clone)]
pub struct Attributes<'a> {
    cursor: Cursor<'a>,
    text: &'a str,
}

impl<'a> Iterator for Attributes<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        // The text was validated by the scan, so this cannot fail on a block's attributes.
        self.cursor.skip_whitespace();
        self.cursor.attribute(self.text)
    }
}

/// What [`find_blocks`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found<'a> {
    /// The top-level blocks, in order, non-overlapping.
    pub blocks: Vec<TagBlock<'a>>,
    /// Whether a bound cut the scan short ([`TagLimits::max_blocks`] blocks, or the token
    /// budget): the text after the last block may hold more tags, left as they are.
    pub truncated: bool,
}

/// Whether `name` is a valid tag name for registration.
pub fn is_valid_tag_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= MAX_TAG_NAME_BYTES
        && is_name_start(bytes[0])
        && bytes[1..].iter().all(|&b| is_name_byte(b))
}

/// Finds the top-level blocks of the registered `names` in `text`, in order, non-overlapping,
/// within `limits`.
pub fn find_blocks<'a>(text: &'a str, names: &HashSet<&str>, limits: &TagLimits) -> Found<'a> {
    if names.is_empty() || limits.max_blocks == 0 {
        return Found::default();
    }
    let max_tokens = limits.max_blocks.saturating_mul(TOKENS_PER_BLOCK);
    let (tokens, mut truncated) = tokenize(text, names, limits, max_tokens);

    // Pair opening and closing tags per name, innermost first.
    let mut partner: Vec<Option<u32>> = vec![None; tokens.len()];
    let mut open: HashMap<&str, Vec<u32>> = HashMap::new();
    for (index, token) in (0u32..).zip(&tokens) {
        match token.kind {
            Kind::Open => open.entry(token.name).or_default().push(index),
            Kind::Close => {
                if let Some(opener) = open.get_mut(token.name).and_then(Vec::pop) {
                    partner[opener as usize] = Some(index);
                }
            }
            Kind::SelfClosing => {}
        }
    }

    let mut blocks = Vec::new();
    let mut covered_until = 0;
    for (index, token) in tokens.iter().enumerate() {
        if token.range.start < covered_until {
            continue;
        }
        let (range, content) = match (token.kind, partner[index]) {
            (Kind::SelfClosing, _) => {
                (token.range.clone(), &text[token.range.end..token.range.end])
            }
            (Kind::Open, Some(closer)) => {
                let closer = &tokens[closer as usize];
                (
                    token.range.start..closer.range.end,
                    &text[token.range.end..closer.range.start],
                )
            }
            _ => continue,
        };
        if blocks.len() == limits.max_blocks {
            truncated = true;
            break;
        }
        covered_until = range.end;
        blocks.push(TagBlock {
            name: token.name,
            attributes: &text[token.attributes.clone()],
            content,
            range,
        });
    }
    Found { blocks, truncated }
}

/// Rebuilds `text` with each block replaced by its replacement (`None` keeps the block as is).
/// `replacements` pairs with `blocks` by position.
pub fn replace_blocks(
    text: &str,
    blocks: &[TagBlock<'_>],
    replacements: &[Option<String>],
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    for (block, replacement) in blocks.iter().zip(replacements) {
        out.push_str(&text[cursor..block.range.start]);
        match replacement {
            Some(replacement) => out.push_str(replacement),
            None => out.push_str(&text[block.range.clone()]),
        }
        cursor = block.range.end;
    }
    out.push_str(&text[cursor..]);
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Open,
    Close,
    SelfClosing,
}

/// A tag of a registered name. Holds ranges only: nothing is copied out of the text.
#[derive(Debug)]
struct Token<'a> {
    kind: Kind,
    name: &'a str,
    /// The attribute text of an opening tag (empty for a closing tag).
    attributes: Range<usize>,
    range: Range<usize>,
}

/// The tags of registered names, in order, at most `max_tokens` of them; the flag says whether
/// the budget cut the scan short.
fn tokenize<'a>(
    text: &'a str,
    names: &HashSet<&str>,
    limits: &TagLimits,
    max_tokens: usize,
) -> (Vec<Token<'a>>, bool) {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut at = 0;
    while let Some(offset) = bytes[at..].iter().position(|&b| b == b'<') {
        let start = at + offset;
        // Every parse stops at the next `<` at the latest, so each byte is scanned O(1) times.
        if let Some(token) = parse_tag(text, start, names, limits) {
            if tokens.len() == max_tokens {
                return (tokens, true);
            }
            at = token.range.end;
            tokens.push(token);
        } else {
            at = start + 1;
        }
    }
    (tokens, false)
}

/// Parses the tag starting at `start` (a `<`), if it is a well-formed tag of a registered name
/// within the header limits.
fn parse_tag<'a>(
    text: &'a str,
    start: usize,
    names: &HashSet<&str>,
    limits: &TagLimits,
) -> Option<Token<'a>> {
    let bytes = text.as_bytes();
    let mut cursor = Cursor {
        bytes,
        at: start + 1,
        end: bytes
            .len()
            .min(start.saturating_add(limits.max_header_bytes)),
    };
    let closing = cursor.eat(b'/');
    let name = cursor.name(text)?;
    if !names.contains(name) {
        return None;
    }
    if closing {
        cursor.skip_whitespace();
        cursor.expect(b'>')?;
        return Some(Token {
            kind: Kind::Close,
            name,
            attributes: 0..0,
            range: start..cursor.at,
        });
    }
    let attributes_start = cursor.at;
    let mut count = 0;
    loop {
        let had_space = cursor.skip_whitespace();
        let kind = match cursor.peek()? {
            b'>' => Kind::Open,
            b'/' => Kind::SelfClosing,
            _ if !had_space => return None, // `<todox`, or attributes run together
            _ => {
                count += 1;
                if count > limits.max_attributes {
                    return None;
                }
                cursor.attribute(text)?;
                continue;
            }
        };
        let attributes = attributes_start..cursor.at;
        cursor.at += 1;
        if kind == Kind::SelfClosing {
            cursor.expect(b'>')?;
        }
        return Some(Token {
            kind,
            name,
            attributes,
            range: start..cursor.at,
        });
    }
}

/// A cursor over the bytes of one tag header, which ends at `end` or at the next `<`.
#[derive(Debug, Clone)]
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    end: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        if self.at >= self.end {
            return None;
        }
        self.bytes.get(self.at).copied().filter(|&b| b != b'<')
    }

    fn eat(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        self.eat(byte).then_some(())
    }

    fn skip_whitespace(&mut self) -> bool {
        let from = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
        self.at > from
    }

    /// A tag or attribute name. Names are ASCII, so the slice is on char boundaries.
    fn name(&mut self, text: &'a str) -> Option<&'a str> {
        let from = self.at;
        if !self.peek().is_some_and(is_name_start) {
            return None;
        }
        while self.peek().is_some_and(is_name_byte) {
            self.at += 1;
        }
        let name = &text[from..self.at];
        (name.len() <= MAX_TAG_NAME_BYTES).then_some(name)
    }

    /// One attribute, `name`, `name="value"` or `name='value'`, as `(name, value)`.
    fn attribute(&mut self, text: &'a str) -> Option<(&'a str, &'a str)> {
        let name = self.name(text)?;
        let before_equals = self.at;
        self.skip_whitespace();
        let value = if self.eat(b'=') {
            self.skip_whitespace();
            self.quoted(text)?
        } else {
            self.at = before_equals;
            ""
        };
        Some((name, value))
    }

    /// A quoted value, without its quotes. Quotes are ASCII, so the slice is on char boundaries.
    fn quoted(&mut self, text: &'a str) -> Option<&'a str> {
        let quote = self.peek().filter(|&b| b == b'"' || b == b'\'')?;
        self.at += 1;
        let from = self.at;
        loop {
            let byte = self.peek()?;
            self.at += 1;
            if byte == quote {
                return Some(&text[from..self.at - 1]);
            }
        }
    }
}

fn is_name_start(byte: u8) -> bool {
    byte.is_ascii_alphabetic() || byte == b'_'
}

fn is_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.' | b':')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names<'a>(list: &[&'a str]) -> HashSet<&'a str> {
        list.iter().copied().collect()
    }

    /// A block as (name, attributes, content).
    type Summary = (String, Vec<(String, String)>, String);

    fn blocks<'a>(text: &'a str, list: &[&str]) -> Vec<TagBlock<'a>> {
        find_blocks(text, &names(list), &TagLimits::default()).blocks
    }

    fn summary(text: &str, list: &[&str]) -> Vec<Summary> {
        blocks(text, list)
            .into_iter()
            .map(|block| {
                (
                    block.name.to_owned(),
                    block
                        .attributes()
                        .map(|(name, value)| (name.to_owned(), value.to_owned()))
                        .collect(),
                    block.content.to_owned(),
                )
            })
            .collect()
    }

    fn owned(
        name: &str,
        attrs: &[(&str, &str)],
        content: &str,
    ) -> (String, Vec<(String, String)>, String) {
        (
            name.to_owned(),
            attrs
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            content.to_owned(),
        )
    }

    #[test]
    fn finds_blocks_with_all_attribute_forms() {
        let text = r#"before <todo owner="ana" due='friday' urgent>ship it</todo> after"#;
        assert_eq!(
            summary(text, &["todo"]),
            [owned(
                "todo",
                &[("owner", "ana"), ("due", "friday"), ("urgent", "")],
                "ship it"
            )]
        );
        let found = blocks(text, &["todo"]);
        assert_eq!(&text[found[0].range.clone()], &text[7..text.len() - 6]);
    }

    #[test]
    fn attribute_values_may_hold_the_other_quote_and_gt() {
        let text = r#"<t a="it's > fine" b='say "hi"' c = "spaced">x</t>"#;
        assert_eq!(
            summary(text, &["t"]),
            [owned(
                "t",
                &[("a", "it's > fine"), ("b", "say \"hi\""), ("c", "spaced")],
                "x"
            )]
        );
    }

    #[test]
    fn only_registered_names_are_recognised() {
        assert!(summary("<b>bold</b>", &["todo"]).is_empty());
        assert_eq!(
            summary("<b><todo>x</todo></b>", &["todo"]),
            [owned("todo", &[], "x")]
        );
    }

    #[test]
    fn names_are_case_sensitive_and_must_end_at_a_delimiter() {
        assert!(summary("<TODO>x</TODO>", &["todo"]).is_empty());
        assert!(summary("<todos>x</todos>", &["todo"]).is_empty());
        assert!(summary("<todo>x</todos>", &["todo"]).is_empty());
    }

    #[test]
    fn malformed_tags_are_text() {
        for text in [
            "<todo a=unquoted>x</todo>",
            "<todo a=\"unterminated>x</todo>",
            "<todo a=\"1\"b=\"2\">x</todo>",
            "<todo =\"1\">x</todo>",
            "<todo / >x</todo>",
            "< todo>x</todo>",
            "<todo",
            "<todo a=\"x<y\">z</todo>",
        ] {
            assert!(summary(text, &["todo"]).is_empty(), "{text}");
        }
    }

    #[test]
    fn unclosed_and_stray_tags_stay_text() {
        assert!(summary("<todo>never closed", &["todo"]).is_empty());
        assert!(summary("stray </todo> close", &["todo"]).is_empty());
        assert_eq!(
            summary("<todo>a<todo>b</todo>", &["todo"]),
            [owned("todo", &[], "b")]
        );
    }

    #[test]
    fn nested_same_name_tags_form_one_block_with_raw_content() {
        assert_eq!(
            summary("<a>x<a>y</a>z</a> <a>2</a>", &["a"]),
            [owned("a", &[], "x<a>y</a>z"), owned("a", &[], "2")]
        );
    }

    #[test]
    fn overlapping_blocks_the_first_opened_wins() {
        assert_eq!(
            summary("<a><b></a></b>", &["a", "b"]),
            [owned("a", &[], "<b>")]
        );
        assert_eq!(
            summary("<a><b>x</b></a>", &["a", "b"]),
            [owned("a", &[], "<b>x</b>")]
        );
    }

    #[test]
    fn self_closing_tags_are_empty_blocks() {
        assert_eq!(
            summary(r#"x <ref id="1"/> y <ref/>"#, &["ref"]),
            [owned("ref", &[("id", "1")], ""), owned("ref", &[], "")]
        );
    }

    #[test]
    fn less_than_in_code_does_not_swallow_text() {
        let text = "if a < b && c<d { Vec<todo> } <todo>real</todo>";
        assert_eq!(summary(text, &["todo"]), [owned("todo", &[], "real")]);
        let text = "for i in 0..n { if x<y {} }\n<todo>task</todo>";
        assert_eq!(summary(text, &["todo"]), [owned("todo", &[], "task")]);
    }

    #[test]
    fn multibyte_text_around_and_inside_blocks() {
        let text = "héllo <note lang=\"日本\">こんにちは</note> wörld 🎉";
        let found = blocks(text, &["note"]);
        assert_eq!(found[0].content, "こんにちは");
        assert_eq!(found[0].attributes().next(), Some(("lang", "日本")));
        let rebuilt = replace_blocks(text, &found, &[Some("→".into())]);
        assert_eq!(rebuilt, "héllo → wörld 🎉");
    }

    #[test]
    fn replace_keeps_text_outside_blocks_byte_for_byte() {
        let text = "a\r\n <t>1</t>\t<t k='v'>2</t>  \u{0}end";
        let found = blocks(text, &["t"]);
        let out = replace_blocks(text, &found, &[Some("X".into()), None]);
        assert_eq!(out, "a\r\n X\t<t k='v'>2</t>  \u{0}end");
    }

    #[test]
    fn tag_name_validation() {
        for good in ["todo", "_x", "a-b.c:d", "T1"] {
            assert!(is_valid_tag_name(good), "{good}");
        }
        for bad in ["", "1a", "-a", "a b", "a>", &"a".repeat(65)] {
            assert!(!is_valid_tag_name(bad), "{bad}");
        }
    }

    /// A small deterministic PRNG (xorshift64*), so the property test needs no dependency and
    /// every failure is reproducible from its seed.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    const PIECES: &[&str] = &[
        "<",
        ">",
        "/",
        "</",
        "/>",
        "=",
        "\"",
        "'",
        " ",
        "\n",
        "a",
        "b",
        "todo",
        "note",
        "x",
        "é",
        "🎉",
        "<todo>",
        "</todo>",
        "<note k=\"v\">",
        "</note>",
        "<todo/>",
        "<todo a='1' b>",
        "</todo >",
        "<",
        "<<",
        "\\",
        "\u{0}",
        "text ",
        "Vec<todo>",
        "a < b",
    ];

    fn random_text(rng: &mut Rng) -> String {
        let len = rng.below(40);
        (0..len).map(|_| PIECES[rng.below(PIECES.len())]).collect()
    }

    #[test]
    fn property_blocks_are_ordered_disjoint_and_identity_replacement_round_trips() {
        let registered = names(&["todo", "note"]);
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for case in 0..20_000 {
            let text = random_text(&mut rng);
            let blocks = find_blocks(&text, &registered, &TagLimits::default()).blocks;
            let mut previous_end = 0;
            for block in &blocks {
                assert!(
                    block.range.start >= previous_end,
                    "case {case}: overlap in {text:?}"
                );
                assert!(block.range.end <= text.len());
                let raw = &text[block.range.clone()]; // panics if not on char boundaries
                assert!(
                    raw.starts_with(&format!("<{}", block.name)),
                    "case {case}: {text:?}"
                );
                let closed_by_tag = raw.ends_with('>')
                    && raw[..raw.len() - 1]
                        .trim_end()
                        .ends_with(&format!("</{}", block.name));
                let self_closing = raw.ends_with("/>") && block.content.is_empty();
                assert!(closed_by_tag || self_closing, "case {case}: {text:?}");
                // The content is a sub-slice of the block.
                let content_start = block.content.as_ptr() as usize - text.as_ptr() as usize;
                assert!(content_start >= block.range.start);
                assert!(content_start + block.content.len() <= block.range.end);
                previous_end = block.range.end;
            }
            let keep: Vec<Option<String>> = vec![None; blocks.len()];
            assert_eq!(replace_blocks(&text, &blocks, &keep), text, "case {case}");
            let marked: Vec<Option<String>> = blocks.iter().map(|_| Some("\u{1}".into())).collect();
            let replaced = replace_blocks(&text, &blocks, &marked);
            // Text outside blocks survives in order, byte for byte.
            let mut outside = String::new();
            let mut cursor = 0;
            for block in &blocks {
                outside.push_str(&text[cursor..block.range.start]);
                outside.push('\u{1}');
                cursor = block.range.end;
            }
            outside.push_str(&text[cursor..]);
            assert_eq!(replaced, outside, "case {case}");
        }
    }

    #[test]
    fn huge_adversarial_inputs_finish_quickly_without_panicking() {
        let registered = names(&["todo"]);
        let inputs = [
            "<todo a=\"".repeat(200_000),
            "<todo>".repeat(200_000),
            "</todo>".repeat(200_000),
            "<".repeat(1_000_000),
            "<todo><todo></todo>".repeat(100_000),
        ];
        let unbounded = TagLimits {
            max_blocks: 1_000_000,
            ..TagLimits::default()
        };
        for text in &inputs {
            let blocks = find_blocks(text, &registered, &unbounded).blocks;
            let keep: Vec<Option<String>> = vec![None; blocks.len()];
            assert_eq!(&replace_blocks(text, &blocks, &keep), text);
        }
        assert_eq!(
            find_blocks(&inputs[4], &registered, &unbounded)
                .blocks
                .len(),
            100_000
        );
    }

    #[test]
    fn headers_over_the_byte_or_attribute_bounds_are_text() {
        let limits = TagLimits {
            max_blocks: 10,
            max_header_bytes: 32,
            max_attributes: 3,
        };
        let registered = names(&["t"]);
        let found = |text: &str| find_blocks(text, &registered, &limits).blocks.len();
        // 32 bytes from `<` to `>` inclusive is the most a header may take.
        let fits = format!("<t a=\"{}\">x</t>", "v".repeat(32 - 8));
        assert_eq!(fits.find('>'), Some(31));
        assert_eq!(found(&fits), 1);
        let over = format!("<t a=\"{}\">x</t>", "v".repeat(32 - 7));
        assert_eq!(found(&over), 0, "one byte over the header bound");
        assert_eq!(found("<t a b c>x</t>"), 1);
        assert_eq!(found("<t a b c d>x</t>"), 0, "one attribute over the bound");
        assert_eq!(found("<t a b c d/>"), 0);
    }

    #[test]
    fn a_header_of_millions_of_attributes_is_scanned_without_allocating_them() {
        // 10 MiB of attributes in one header: the scan gives up at the header bound, so the
        // block stays text and nothing proportional to the attributes is allocated.
        let text = format!("<t{}>x</t>", " a=\"1\"".repeat(10 * 1024 * 1024 / 6));
        let found = find_blocks(&text, &names(&["t"]), &TagLimits::default());
        assert!(found.blocks.is_empty());
        assert!(!found.truncated);
    }

    #[test]
    fn attributes_are_borrowed_from_the_text() {
        let text = r#"<t owner="ana" flag k='v'>x</t>"#;
        let found = blocks(text, &["t"]);
        let attributes: Vec<_> = found[0].attributes().collect();
        assert_eq!(attributes, [("owner", "ana"), ("flag", ""), ("k", "v")]);
        let inside = text.as_bytes().as_ptr_range();
        for (name, value) in attributes {
            assert!(inside.contains(&name.as_ptr()));
            assert!(value.is_empty() || inside.contains(&value.as_ptr()));
        }
    }

    #[test]
    fn the_block_bound_and_the_token_budget_truncate_the_scan() {
        let registered = names(&["t"]);
        let limits = TagLimits {
            max_blocks: 2,
            ..TagLimits::default()
        };
        let found = find_blocks("<t>1</t><t>2</t><t>3</t>", &registered, &limits);
        assert_eq!(found.blocks.len(), 2);
        assert!(found.truncated);
        let found = find_blocks("<t>1</t><t>2</t>", &registered, &limits);
        assert_eq!(found.blocks.len(), 2);
        assert!(!found.truncated);

        // Stray closing tags use up the token budget (16 per block) without making blocks.
        let strays = "</t>".repeat(2 * TOKENS_PER_BLOCK);
        let text = format!("{strays}<t>late</t>");
        let found = find_blocks(&text, &registered, &limits);
        assert!(found.blocks.is_empty());
        assert!(found.truncated, "tags after the budget are left as text");
    }
}
