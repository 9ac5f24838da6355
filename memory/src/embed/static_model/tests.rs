use super::*;

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn the_compiled_in_table_parses() {
    let model = StaticModel::shared();
    assert_eq!(model.dimensions(), 256);
    assert_eq!(model.tokenizer().vocab_len(), 30522);
    let special = model.tokenizer().special();
    for id in [special.cls, special.sep, special.pad] {
        assert_eq!(model.weight(id), 0.0, "special tokens do not count");
    }
    assert!(model.weight(model.tokenizer().token_id("dog").unwrap()) > 0.0);
}

#[test]
fn vectors_are_unit_length_and_empty_text_is_zero() {
    let model = StaticModel::shared();
    let v = model.embed("Biscuit the beagle had an ear infection.");
    assert!((cosine(&v, &v) - 1.0).abs() < 1e-4);
    assert!(model.embed("").iter().all(|x| *x == 0.0));
    assert!(model.embed("[CLS] [SEP]").iter().all(|x| x.is_finite()));
}

#[test]
fn meaning_is_closer_than_topic_words_alone() {
    let model = StaticModel::shared();
    let cat = model.embed("The cat sits on the mat.");
    let kitten = model.embed("A kitten is resting on a rug.");
    let stocks = model.embed("Stock markets fell sharply today.");
    assert!(cosine(&cat, &kitten) > cosine(&cat, &stocks) + 0.2);
    let dog = model.embed("what breed is her dog");
    let beagle = model.embed("we adopted a beagle puppy last week");
    let job = model.embed("she started a new job at the bank last week");
    assert!(cosine(&dog, &beagle) > cosine(&dog, &job));
}

#[test]
fn interaction_matches_tokens_by_meaning() {
    let model = StaticModel::shared();
    let query = model.tokens("dog", 16);
    let same = model.tokens("my dog barks", 64);
    let puppy = model.tokens("our new puppy chews everything", 64);
    let car = model.tokens("the car needs new tyres", 64);
    assert!((model.interaction(&query, &same) - 1.0).abs() < 1e-3);
    let (to_puppy, to_car) = (
        model.interaction(&query, &puppy),
        model.interaction(&query, &car),
    );
    assert!(to_puppy > to_car, "{to_puppy} vs {to_car}");
    assert_eq!(model.interaction(&query, &[]), 0.0);
    assert_eq!(model.interaction(&[], &puppy), 0.0);
}

#[test]
fn broken_tables_are_refused_with_the_reason() {
    let vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n";
    let table = |magic: &[u8], version: u32, tokens: u32, dims: u32, body: usize| {
        let mut bytes = magic.to_vec();
        for word in [version, tokens, dims, 0] {
            bytes.extend(word.to_le_bytes());
        }
        bytes.resize(bytes.len() + body, 0);
        &*Box::leak(bytes.into_boxed_slice())
    };
    let error = |bytes: &'static [u8]| StaticModel::parse(bytes, vocab).unwrap_err().to_string();
    assert!(error(table(b"NOTATABL", 1, 5, 4, 60)).contains("not a static"));
    assert!(error(table(MAGIC, 2, 5, 4, 60)).contains("version 2"));
    assert!(error(table(MAGIC, 1, 5, 4, 59)).contains("need"));
    assert!(error(table(MAGIC, 1, 6, 4, 72)).contains("vocabulary has 5"));
    let model = StaticModel::parse(table(MAGIC, 1, 5, 4, 60), vocab).unwrap();
    assert!(model.embed("hello").iter().all(|x| *x == 0.0));
}

#[tokio::test]
async fn the_embedder_serves_batches_of_any_size() {
    let embedder = StaticEmbedder::new();
    assert_eq!(embedder.id(), "static-minilm-l6-v1-256");
    let texts: Vec<String> = (0..100)
        .map(|i| format!("note number {i} about pools"))
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = embedder.embed(&refs).await.unwrap();
    assert_eq!(vectors.len(), 100);
    assert_eq!(vectors[7], embedder.model().embed(&texts[7]));
    crate::embed::check_vectors(&embedder, 100, &vectors).unwrap();
}
