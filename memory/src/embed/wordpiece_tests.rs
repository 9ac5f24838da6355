use super::*;

const VOCAB: &str = "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\nworld\nun\n##aff\n##able\n,\n!\n.\ncafe\n中\n文\na\n##a\n##b\nb\n[\n]\ncl\n##s\ni\n\u{307}\n##\u{307}\n";

fn tiny() -> WordPiece {
    WordPiece::from_vocab(VOCAB).unwrap()
}

fn ids(vocab: &WordPiece, text: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let n = vocab.encode_into(text, usize::MAX, &mut out);
    assert_eq!(n, out.len());
    out
}

#[test]
fn the_vocabulary_gives_ids_by_line_and_the_special_tokens() {
    let vocab = tiny();
    assert_eq!(vocab.vocab_len(), 26);
    assert_eq!(
        vocab.special(),
        Special {
            cls: 2,
            sep: 3,
            pad: 0,
            unk: 1
        }
    );
    assert_eq!(vocab.token_id("hello"), Some(4));
    assert_eq!(vocab.token_id("##aff"), Some(7));
    assert_eq!(vocab.token_id("aff"), None);
    // Windows line ends are trimmed like trailing spaces.
    let crlf = WordPiece::from_vocab("[PAD]\r\n[UNK]\r\n[CLS] \r\n[SEP]\r\nx\r\n").unwrap();
    assert_eq!(crlf.token_id("x"), Some(4));
    assert_eq!(crlf.special().cls, 2);
}

#[test]
fn a_vocabulary_without_the_special_tokens_is_refused_by_name() {
    let error = WordPiece::from_vocab("[PAD]\n[CLS]\n[SEP]\nhello\n").unwrap_err();
    assert!(error.to_string().contains("[UNK]"), "{error}");
    let long = format!("[PAD]\n[UNK]\n[CLS]\n[SEP]\n{}\n", "x".repeat(300));
    let error = WordPiece::from_vocab(&long).unwrap_err();
    assert!(error.to_string().contains("line 5"), "{error}");
}

#[test]
fn words_split_longest_match_first_into_continuations() {
    let vocab = tiny();
    assert_eq!(ids(&vocab, "Hello, WORLD!"), [4, 9, 5, 10]);
    assert_eq!(ids(&vocab, "unaffable"), [6, 7, 8]);
    // "aab": "a", "##a", "##b"; "abx" cannot be split, so the whole word is unknown.
    assert_eq!(ids(&vocab, "aab abx b"), [15, 16, 17, 1, 18]);
    assert_eq!(ids(&vocab, ""), [] as [u32; 0]);
    assert_eq!(ids(&vocab, " \t\n "), [] as [u32; 0]);
}

#[test]
fn words_over_a_hundred_characters_are_unknown() {
    let vocab = tiny();
    let mut hundred = vec![15];
    hundred.extend([16; 99]);
    assert_eq!(ids(&vocab, &"a".repeat(100)), hundred);
    assert_eq!(ids(&vocab, &"a".repeat(101)), [1]);
    // Characters, not bytes: 100 two-byte characters are still one word.
    assert_eq!(
        ids(&vocab, &format!("hello {} hello", "é".repeat(101))),
        [4, 1, 4]
    );
    assert_eq!(ids(&vocab, &"a".repeat(1_000_000)), [1]);
}

#[test]
fn text_is_cleaned_lowercased_and_stripped_of_accents() {
    let vocab = tiny();
    // Control characters vanish without splitting; whitespace of any kind splits.
    assert_eq!(ids(&vocab, "hel\u{0}lo\u{7}"), [4]);
    assert_eq!(ids(&vocab, "hel\u{200b}lo wor\u{fffd}ld"), [4, 5]);
    assert_eq!(
        ids(&vocab, "hello\u{a0}world\u{3000}hello\u{2028}world"),
        [4, 5, 4, 5]
    );
    assert_eq!(
        ids(&vocab, "hello\u{b}world"),
        [1],
        "VT is a control character, dropped"
    );
    assert_eq!(ids(&vocab, "CAFÉ Cafe\u{301}"), [12, 12]);
    // CJK ideographs are words of their own, with or without spaces.
    assert_eq!(ids(&vocab, "中文hello"), [13, 14, 4]);
    // NFD splits İ into I + U+0307 and the mark is dropped before lowercasing.
    assert_eq!(ids(&vocab, "İ"), [23]);
}

#[test]
fn special_tokens_in_the_text_are_plain_text() {
    let vocab = tiny();
    assert_eq!(ids(&vocab, "[CLS]"), [19, 21, 22, 20]);
}

#[test]
fn encoding_stops_after_max_tokens_and_appends() {
    let vocab = tiny();
    let mut out = vec![99];
    assert_eq!(vocab.encode_into("hello unaffable world", 3, &mut out), 3);
    assert_eq!(out, [99, 4, 6, 7], "a word's pieces are cut at the limit");
    assert_eq!(vocab.encode_into("hello", 0, &mut out), 0);
    let huge = "hello ".repeat(200_000);
    let mut out = Vec::new();
    assert_eq!(vocab.encode_into(&huge, 256, &mut out), 256);
    assert!(out.iter().all(|&id| id == 4));
    let mut out = Vec::new();
    assert_eq!(vocab.encode_into("héllo wörld", 1, &mut out), 1);
    assert_eq!(out, [4]);
}

/// Id for id against the Python `tokenizers` library, on the texts of
/// `tests/fixtures/embed/wordpiece_parity.jsonl` (made by `make_wordpiece_fixture.py`).
#[test]
fn the_ids_match_the_python_tokenizers_library() {
    let Some(dir) = crate::embed::test_model_dir() else {
        return;
    };
    let vocab_path = dir.join("vocab.txt");
    let vocab = WordPiece::from_vocab(&std::fs::read_to_string(&vocab_path).unwrap()).unwrap();
    let fixture = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/embed/wordpiece_parity.jsonl"
    ))
    .unwrap();
    let mut cases = 0;
    for line in fixture.lines() {
        #[derive(serde::Deserialize)]
        struct Case {
            text: String,
            ids: Vec<u32>,
        }
        let case: Case = serde_json::from_str(line).unwrap();
        assert_eq!(ids(&vocab, &case.text), case.ids, "{:?}", case.text);
        // A limit keeps a prefix of the same ids.
        let half = case.ids.len() / 2;
        let mut out = Vec::new();
        assert_eq!(vocab.encode_into(&case.text, half, &mut out), half);
        assert_eq!(out, case.ids[..half], "{:?} cut at {half}", case.text);
        cases += 1;
    }
    assert!(cases >= 300, "{cases} cases");
}
