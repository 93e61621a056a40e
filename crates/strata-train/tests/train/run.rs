//! A training run: the loss falls, a cancelled run leaves a checkpoint, and resuming it ends
//! exactly where an uninterrupted run does.

use std::sync::atomic::{AtomicBool, Ordering};

use strata_models::LocalChat;
use strata_train::train::Run;
use strata_train::{Tokenized, TrainConfig};

fn examples(chat: &LocalChat) -> Vec<Tokenized> {
    [("What is Maya's dog's name?", "Maya's dog's name is Biscuit."), ("Where is Tom from?", "Tom is from Porto.")]
        .iter()
        .map(|(q, a)| {
            let (ids, start) = chat.example_ids(q, a).unwrap();
            Tokenized { ids, start }
        })
        .collect()
}

fn config() -> TrainConfig {
    TrainConfig { epochs: 4, batch: 2, checkpoint_every: 1, replay: 0, ..TrainConfig::default() }
}

#[test]
fn a_cancelled_run_resumes_from_its_checkpoint_and_ends_where_an_uninterrupted_one_does() {
    let file = crate::model();
    let chat = LocalChat::load(&file).unwrap();
    let examples = examples(&chat);
    let dir = tempfile::tempdir().unwrap();
    let config = config();
    let run = |sub: &str| Run {
        model: &file,
        base_name: "SmolLM2",
        examples: &examples,
        pad: 0,
        config: &config,
        checkpoints: dir.path().join(sub),
    };

    let whole = run("a").train(&mut |_| {}, &AtomicBool::new(false)).unwrap();
    assert_eq!(whole.losses.len(), 4);
    assert!(whole.losses[3] < whole.losses[0] * 0.8, "the loss falls: {:?}", whole.losses);

    let cancel = AtomicBool::new(false);
    let mut seen = Vec::new();
    let err = run("b")
        .train(
            &mut |p| {
                seen.push((p.step, p.steps));
                if p.step == 2 {
                    cancel.store(true, Ordering::Relaxed);
                }
                assert!(p.tokens_per_s > 0.0 && p.eta_s >= 0.0);
            },
            &cancel,
        )
        .unwrap_err();
    assert!(matches!(err, strata_core::Error::Cancelled(_)), "{err}");
    assert_eq!(seen, [(1, 4), (2, 4)]);
    assert!(dir.path().join("b/checkpoint.safetensors").exists());

    let resumed = run("b").train(&mut |_| {}, &AtomicBool::new(false)).unwrap();
    assert_eq!(resumed.resumed_from, 2);
    assert_eq!(resumed.losses.len(), 4, "the losses before the checkpoint are kept");
    for (x, y) in resumed.losses.iter().zip(&whole.losses) {
        assert!((x - y).abs() < 1e-4, "{:?} vs {:?}", resumed.losses, whole.losses);
    }
    let (a, b) = (
        &resumed.adapter.layers[3][&strata_models::Target::V].1,
        &whole.adapter.layers[3][&strata_models::Target::V].1,
    );
    let diff = (a - b).unwrap().abs().unwrap().max_all().unwrap().to_scalar::<f32>().unwrap();
    assert!(diff < 1e-5, "the resumed adapter differs by {diff}");
    assert!(!dir.path().join("b/checkpoint.safetensors").exists(), "a finished run clears its checkpoint");
}

#[test]
fn bad_settings_are_refused_before_any_work() {
    let mut c = config();
    c.lr = 5.0;
    assert!(c.check().unwrap_err().to_string().contains("learning rate"));
    c = config();
    c.rank = 0;
    assert!(c.check().unwrap_err().to_string().contains("rank"));
    let opt = strata_train::optim::AdamW::new(
        vec![],
        strata_train::optim::AdamWConfig {
            lr: 1e-3,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay: 0.0,
            warmup: 4,
            total: 20,
            clip: 1.0,
        },
    )
    .unwrap();
    assert!((opt.lr_at(0) - 2.5e-4).abs() < 1e-12 && (opt.lr_at(3) - 1e-3).abs() < 1e-12, "linear warm-up");
    assert!((opt.lr_at(20) - 1e-4).abs() < 1e-12, "decays to a tenth");
    assert!(opt.lr_at(10) < opt.lr_at(5));
}
