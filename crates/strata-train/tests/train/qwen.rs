//! LoRA on Qwen2 (issue 44): the training forward with Qwen2's biases and half-split rotary
//! embedding, checked against the inference forward (unmerged and merged) and its gradients
//! against finite differences, on Qwen2.5-Coder-0.5B, the default chat model.

use candle_core::Tensor;
use strata_models::LocalChat;
use strata_models::adapter::{LoraConfig, Target};
use strata_train::model::{Batch, Noise};

/// The default on-device chat model's file (setup fetches it).
fn qwen() -> std::path::PathBuf {
    let pin = strata_tokens::chat_models::chat_model("qwen2.5-coder-0.5b").unwrap();
    let file = pin.path_in(&strata_tokens::models_dir());
    assert!(file.exists(), "{} is missing: run scripts/models", file.display());
    file
}

fn config() -> LoraConfig {
    let targets = vec![Target::Q, Target::K, Target::V, Target::O, Target::Down];
    LoraConfig::new("qwen2.5-coder-0.5b-instruct-q4_k_m", 4, 8.0, 0.0, targets).unwrap()
}

#[test]
fn qwen2_training_and_inference_agree_on_what_an_adapter_does() {
    let file = qwen();
    // Smaller than SmolLM2's test adapter: 24 layers of five adapted projections at 0.3 make
    // the 0.5B's loss 14.7, where the int8 product's error grows with the activations.
    crate::peft::agree(&file, &crate::peft::trained_with(&file, config(), 0.07));
}

#[test]
fn qwen2_gradients_match_finite_differences() {
    let file = qwen();
    let model = crate::peft::trained_with(&file, config(), 0.07);
    let chat = LocalChat::load(&file).unwrap();
    let ids = chat.text_ids("Lia's birthday is on 12 May.").unwrap();
    let batch = Batch { ids: vec![ids.clone()], targets: vec![(0..ids.len() - 1).map(|p| (p, ids[p + 1])).collect()] };
    let loss = |m: &strata_train::model::TrainModel| -> f64 {
        m.loss(&batch, &mut Noise::new(0, 0.0)).unwrap().to_scalar::<f32>().unwrap() as f64
    };
    let grads = model.loss(&batch, &mut Noise::new(0, 0.0)).unwrap().backward().unwrap();
    let vars = model.vars();
    // Layer 0's q (A and B, through the bias and the half-split rotation), and the last
    // layer's down projection's B: at each, the element with the largest gradient.
    let last_down_b = vars.len() - 1;
    for index in [0, 1, 3, last_down_b] {
        let var = &vars[index];
        let g: Vec<f32> = grads.get(var.as_tensor()).unwrap().flatten_all().unwrap().to_vec1().unwrap();
        let (at, &analytic) = g.iter().enumerate().max_by(|a, b| a.1.abs().total_cmp(&b.1.abs())).unwrap();
        let original = var.as_tensor().copy().unwrap();
        let values: Vec<f32> = original.flatten_all().unwrap().to_vec1().unwrap();
        let eps = 1e-2f32;
        let shifted = |by: f32| {
            let mut v = values.clone();
            v[at] += by;
            var.set(&Tensor::from_vec(v, original.shape(), original.device()).unwrap()).unwrap();
            loss(&model)
        };
        let numeric = (shifted(eps) - shifted(-eps)) / (2.0 * eps as f64);
        var.set(&original).unwrap();
        let error = (numeric - analytic as f64).abs() / (analytic.abs() as f64).max(1e-3);
        assert!(error < 0.05, "var {index}: autograd {analytic} vs finite differences {numeric}");
    }
}
