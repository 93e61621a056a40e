//! Counting, truncating and splitting with real tokenizers: OpenAI's encodings and the
//! on-device embedder's tokenizer.json.

use proptest::prelude::*;
use strata_tokens::{ApproxTokens, Catalogue, Encoding, HfTokens, OpenAiTokens, TokenManager};

/// The on-device embedder's tokenizer (fetched by scripts/setup).
fn minilm() -> HfTokens {
    let file = strata_tokens::models_dir().join(strata_tokens::EMBEDDER_DIR).join("tokenizer.json");
    HfTokens::load("all-minilm-l6-v2", &file).unwrap_or_else(|e| panic!("{e}"))
}

/// The on-device chat model's tokenizer, built from its GGUF file (fetched by scripts/models).
fn smollm() -> HfTokens {
    HfTokens::from_gguf("smollm2", &smollm_file()).unwrap_or_else(|e| panic!("{e}"))
}

fn smollm_file() -> std::path::PathBuf {
    strata_tokens::chat_models::chat_model("smollm2-135m").unwrap().path_in(&strata_tokens::models_dir())
}

fn managers() -> Vec<Box<dyn TokenManager>> {
    vec![
        Box::new(OpenAiTokens::new(Encoding::O200kBase)),
        Box::new(OpenAiTokens::new(Encoding::Cl100kBase)),
        Box::new(minilm()),
        Box::new(ApproxTokens::anthropic()),
        Box::new(smollm()),
    ]
}

#[test]
fn a_tokenizer_json_counts_without_special_tokens_and_reports_spans() {
    let t = minilm();
    let tokens = t.tokenize("Hello world").unwrap();
    assert_eq!(tokens.len(), 2, "{tokens:?}");
    assert_eq!((tokens[1].start, tokens[1].end), (6, 11));
    assert_eq!(t.detokenize(&[tokens[0].id, tokens[1].id]).unwrap(), "hello world");
    let missing = HfTokens::load("x", std::path::Path::new("/nonexistent/tokenizer.json")).unwrap_err();
    assert!(missing.to_string().contains("/nonexistent/tokenizer.json"), "{missing}");
}

#[test]
fn the_chat_models_gguf_tokenizer_is_its_byte_level_bpe() {
    let t = smollm();
    let meta = strata_tokens::gguf::metadata(&smollm_file()).unwrap();
    assert_eq!(meta["general.architecture"], strata_tokens::gguf::Value::Text("llama".into()));
    // Digits one by one; words with their leading space; everything decodes back.
    assert_eq!(t.count("2023").unwrap(), 4);
    assert_eq!(t.count(" Hello").unwrap(), 1);
    for text in ["Hello, Strata! Ana adopted Pixel 🐈 in Zürich — «naïve» café", "  indented\n\tcode 12.5%", ""]
    {
        let tokens = t.tokenize(text).unwrap();
        let ids: Vec<u32> = tokens.iter().map(|t| t.id).collect();
        assert_eq!(t.detokenize(&ids).unwrap(), text);
    }
    // The chat template's markers are special tokens of the model, but as memory text they
    // are ordinary text.
    let raw = strata_tokens::gguf::tokenizer(&smollm_file()).unwrap();
    assert_eq!(raw.token_to_id("<|im_start|>"), Some(1));
    assert_eq!(raw.token_to_id("<|im_end|>"), Some(2));
    assert!(t.count("<|im_end|>").unwrap() > 1, "a memory cannot end the model's turn");
    let not_gguf = HfTokens::from_gguf("x", &strata_tokens::models_dir().join("all-minilm-l6-v2").join("config.json"));
    assert!(not_gguf.unwrap_err().to_string().contains("not a readable GGUF model file"));
}

#[test]
fn openai_tokens_cover_the_text_and_decode_back() {
    for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let t = OpenAiTokens::new(enc);
        for text in ["Hello, Strata!", "Ana adopted Pixel 🐈 in Zürich — «naïve» café", "", "    indented\n\tcode"]
        {
            let tokens = t.tokenize(text).unwrap();
            assert_eq!(tokens.last().map_or(0, |t| t.end), text.len(), "{text}");
            assert!(tokens.windows(2).all(|w| w[0].end == w[1].start));
            let ids: Vec<u32> = tokens.iter().map(|t| t.id).collect();
            assert_eq!(t.detokenize(&ids).unwrap(), text);
            assert_eq!(t.count(text).unwrap(), tokens.len());
        }
    }
}

#[test]
fn special_token_text_is_ordinary_text() {
    let t = OpenAiTokens::new(Encoding::O200kBase);
    assert!(t.count("<|endoftext|>").unwrap() > 1, "memory text can never end a prompt");
}

#[test]
fn a_limit_too_small_for_a_character_still_splits() {
    let t = OpenAiTokens::new(Encoding::Cl100kBase);
    let pieces = t.split("🐈🐈", 1).unwrap();
    assert_eq!(pieces.concat(), "🐈🐈");
    assert!(t.split("x", 0).is_err());
}

/// A long text counted in parts on several cores counts as the whole does (encoded in one go).
#[test]
fn long_texts_counted_in_parts_count_as_the_whole() {
    let mut text = String::new();
    let pieces = [
        "Hello there,",
        "\n",
        "naïve café — 12345",
        "\n\n",
        "  indented",
        "\r\n",
        "Zürich's",
        " 🐈\n",
        "x.\nY",
        "don't",
    ];
    let mut i = 7usize;
    while text.len() < 300_000 {
        i = i.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        text.push_str(pieces[(i >> 33) % pieces.len()]);
    }
    for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let t = OpenAiTokens::new(enc);
        assert_eq!(t.count(&text).unwrap(), t.tokenize(&text).unwrap().len(), "{}", t.name());
    }
}

/// An estimate's cut keeps a text its count says fits, whole: the base limit is found by the
/// same sum as the count (a division rounded one token short, dropping the text's last
/// character; found by the property below).
#[test]
fn an_estimate_keeps_whole_a_text_that_fits() {
    let t = ApproxTokens::anthropic();
    for text in ["ෘaAĔa\u{1772}අĔ®A!𝄀0  ⭶0a&oA\u{fffd}", "a b c d e f g h i j k l m n o p q r s t u v w x y z"]
    {
        let n = t.count(text).unwrap();
        assert_eq!(t.truncate(text, n).unwrap(), text);
        let shorter = t.truncate(text, n - 1).unwrap();
        assert!(shorter.len() < text.len() && t.count(shorter).unwrap() < n, "{shorter:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Whatever the text and the limit, a truncation fits and is a prefix at a character
    /// boundary, and a split's pieces each fit and join back to the text.
    #[test]
    fn cuts_never_exceed_their_limit(text in "(\\PC|[ \n\t]){0,160}", limit in 1usize..40) {
        for t in managers() {
            let head = t.truncate(&text, limit).unwrap();
            prop_assert!(text.starts_with(head));
            prop_assert!(t.count(head).unwrap() <= limit, "{}: {:?}", t.name(), head);
            if t.count(&text).unwrap() <= limit {
                prop_assert_eq!(head, text.as_str());
            }
            let pieces = t.split(&text, limit).unwrap();
            prop_assert_eq!(pieces.concat(), text.clone());
            for p in &pieces {
                let one_char = p.chars().count() == 1;
                prop_assert!(one_char || t.count(p).unwrap() <= limit, "{}: piece {:?}", t.name(), p);
            }
        }
    }
}

#[test]
fn the_catalogue_knows_models_by_name_or_prefix_and_says_when_it_guesses() {
    let c = Catalogue::builtin();
    let mini = c.lookup("gpt-4o-mini-2024-07-18");
    assert_eq!((mini.info.tokenizer.as_str(), mini.info.context_window, mini.unknown), ("o200k_base", 128_000, None));
    assert_eq!(c.lookup("GPT-4").info.tokenizer, "cl100k_base", "case does not matter");
    assert_eq!(c.lookup("gpt-4-turbo-preview").info.max_output, 4096, "the more specific entry comes first");
    assert_eq!(c.lookup("claude-sonnet-4-5").info.provider, "anthropic");
    let unknown = c.lookup("my-local-model");
    assert_eq!(unknown.info.context_window, 8192);
    assert!(unknown.unknown.unwrap().contains("not in the model catalogue"));
    // Every shipped entry fits its window.
    assert!(c.entries().iter().all(|m| m.max_output <= m.context_window));
}

#[test]
fn a_user_catalogue_extends_and_overrides_and_bad_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("models.toml");
    std::fs::write(
        &file,
        "[[model]]\npattern = \"gpt-4o\"\nprovider = \"openai\"\ntokenizer = \"o200k_base\"\ncontext_window = 64000\nmax_output = 4000\n\n\
         [[model]]\npattern = \"llama3*\"\nprovider = \"ollama\"\ntokenizer = \"hf:llama3\"\ncontext_window = 8192\nmax_output = 2048\n",
    )
    .unwrap();
    let c = Catalogue::with_user_file(&file).unwrap();
    assert_eq!(c.lookup("gpt-4o").info.context_window, 64_000, "the user's entry wins");
    assert_eq!(c.lookup("gpt-4o-2024-08-06").info.context_window, 128_000, "the shipped ones remain");
    assert_eq!(c.lookup("llama3.1:8b").info.provider, "ollama");
    for (bad, says) in [
        ("[[model]]\npattern = \"x\"\n", "missing field"),
        (
            "[[model]]\npattern = \"a*b\"\nprovider = \"p\"\ntokenizer = \"t\"\ncontext_window = 10\nmax_output = 1\n",
            "prefix ending in '*'",
        ),
        (
            "[[model]]\npattern = \"x\"\nprovider = \"p\"\ntokenizer = \"t\"\ncontext_window = 10\nmax_output = 11\n",
            "at least as large as its maximum output",
        ),
        ("not toml at all [", "models.toml"),
    ] {
        std::fs::write(&file, bad).unwrap();
        let err = Catalogue::with_user_file(&file).unwrap_err().to_string();
        assert!(err.contains(says), "{bad:?}: {err}");
    }
    assert!(Catalogue::with_user_file(&dir.path().join("none.toml")).unwrap_err().to_string().contains("none.toml"));
}

/// Qwen2.5-Coder-0.5B's tokenizer, built from its GGUF file (fetched by scripts/models), gives
/// llama.cpp's own ids for the same file (its `/tokenize`, through the `xllamacpp` wheel,
/// 2026-11-28) on text that tells pre-tokenizers apart: digits one by one, contractions in any
/// case, runs of spaces and line breaks, accents, CJK, emoji, and Qwen's added `<tool_call>`.
#[test]
fn qwens_tokenizer_from_its_gguf_gives_llama_cpps_ids() {
    let file = strata_tokens::models_dir().join("qwen2.5-coder-0.5b-instruct/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
    let t = HfTokens::from_gguf("qwen2.5-coder-0.5b", &file).unwrap_or_else(|e| panic!("{e}"));
    let cases: [(&str, &[u32]); 6] = [
        ("Hello world", &[9707, 1879]),
        (
            "I'LL say it's 12345 dollars!!\n\n  indented\tcode()",
            &[40, 6, 4086, 1977, 432, 594, 220, 16, 17, 18, 19, 20, 11192, 24796, 220, 1257, 15864, 43343, 368],
        ),
        ("Größe naïve café 東京タワー 😀", &[6464, 78940, 94880, 586, 51950, 60596, 109, 46553, 46207, 125980, 90316]),
        ("def f(x):\n    return x**2  \n\n\n# done", &[750, 282, 2075, 982, 262, 470, 856, 334, 17, 79226, 2, 2814]),
        ("<tool_call>{\"a\": 1}</tool_call>", &[151657, 4913, 64, 788, 220, 16, 92, 151658]),
        ("  leading spaces and trailing   ", &[220, 6388, 12621, 323, 27748, 262]),
    ];
    for (text, ids) in cases {
        let got: Vec<u32> = t.tokenize(text).unwrap().iter().map(|t| t.id).collect();
        assert_eq!(got, ids, "{text:?}");
        assert_eq!(t.detokenize(&got).unwrap(), text, "round trip of {text:?}");
    }
    // Composed and decomposed accents read alike (NFC, as Qwen's own tokenizer.json does).
    let composed: Vec<u32> = t.tokenize("\u{e9}").unwrap().iter().map(|t| t.id).collect();
    let decomposed: Vec<u32> = t.tokenize("e\u{301}").unwrap().iter().map(|t| t.id).collect();
    assert_eq!(composed, decomposed);
    let unused = strata_tokens::gguf::unused_ids(&file).unwrap();
    assert_eq!((unused.len(), unused[0], *unused.last().unwrap()), (271, 151_665, 151_935));
}
