//! Adapters in PEFT's layout, and one adapter meaning the same thing in training and in use:
//! the trained model's loss equals the inference model's with the exported adapter applied.

use candle_core::{Device, Tensor};
use strata_models::adapter::{
    Adapter, CONFIG_FILE, LoraConfig, Target, WEIGHTS_FILE, rows_gguf_to_hf, rows_hf_to_gguf,
};
use strata_models::{Llama, LocalChat};
use strata_train::model::{Batch, Noise, TrainModel};

fn config() -> LoraConfig {
    LoraConfig::new("SmolLM2-135M-Instruct", 4, 8.0, 0.0, vec![Target::Q, Target::V, Target::Down]).unwrap()
}

/// The trained model with every B random (a fresh adapter is zero: it would show nothing).
fn trained(file: &std::path::Path) -> TrainModel {
    trained_with(file, config(), 0.3)
}

/// [`trained`] with adapters of `config`, each B's values of standard deviation `std`.
pub(crate) fn trained_with(file: &std::path::Path, config: LoraConfig, std: f64) -> TrainModel {
    let model = TrainModel::load(file, config, 3).unwrap();
    let values: Vec<Tensor> = model
        .vars()
        .iter()
        .enumerate()
        .map(|(i, v)| {
            if i % 2 == 1 {
                // Seeded, so that every run tests the same adapter (an unseeded one changed
                // the loss by 0.18 in one run and more in others).
                let mut seed = 0x9e37_79b9_7f4a_7c15u64 ^ i as u64;
                let normal: Vec<f32> = (0..v.elem_count())
                    .map(|_| {
                        // Box–Muller from a 64-bit LCG: mean 0, standard deviation `std`.
                        let mut uniform = || {
                            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                            ((seed >> 11) as f64 + 0.5) / (1u64 << 53) as f64
                        };
                        let (u, w) = (uniform(), uniform());
                        ((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * w).cos() * std) as f32
                    })
                    .collect();
                Tensor::from_vec(normal, v.dims(), &Device::Cpu).unwrap()
            } else {
                v.as_tensor().copy().unwrap()
            }
        })
        .collect();
    model.set_vars(&values).unwrap();
    model
}

#[test]
fn the_adapter_is_saved_with_peft_names_shapes_and_config() {
    let file = crate::model();
    let shape = Llama::read_shape(&file).unwrap();
    let adapter = trained(&file).adapter().unwrap();
    let dir = tempfile::tempdir().unwrap();
    adapter.save(dir.path()).unwrap();

    let tensors = candle_core::safetensors::load(dir.path().join(WEIGHTS_FILE), &Device::Cpu).unwrap();
    assert_eq!(tensors.len(), shape.layers * 3 * 2);
    let dims = |n: &str| tensors[n].dims().to_vec();
    assert_eq!(dims("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"), [4, 576]);
    assert_eq!(dims("base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight"), [576, 4]);
    assert_eq!(dims("base_model.model.model.layers.29.self_attn.v_proj.lora_B.weight"), [192, 4]);
    assert_eq!(dims("base_model.model.model.layers.7.mlp.down_proj.lora_A.weight"), [4, 1536]);
    assert_eq!(dims("base_model.model.model.layers.7.mlp.down_proj.lora_B.weight"), [576, 4]);

    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(CONFIG_FILE)).unwrap()).unwrap();
    assert_eq!(config["peft_type"], "LORA");
    assert_eq!(config["task_type"], "CAUSAL_LM");
    assert_eq!(config["r"], 4);
    assert_eq!(config["lora_alpha"], 8.0);
    assert_eq!(config["target_modules"], serde_json::json!(["q_proj", "v_proj", "down_proj"]));
    assert_eq!(config["bias"], "none");
    assert_eq!(config["fan_in_fan_out"], false);

    let back = Adapter::load(dir.path(), &shape).unwrap();
    assert_eq!(back.config, adapter.config);
    let (a, b) = &back.layers[5][&Target::Q];
    let (a0, b0) = &adapter.layers[5][&Target::Q];
    assert_eq!(a.to_vec2::<f32>().unwrap(), a0.to_vec2::<f32>().unwrap());
    assert_eq!(b.to_vec2::<f32>().unwrap(), b0.to_vec2::<f32>().unwrap());

    // A file for another model is refused with a reason.
    std::fs::write(dir.path().join(CONFIG_FILE), config.to_string().replace("\"r\":4", "\"r\":5")).unwrap();
    let err = Adapter::load(dir.path(), &shape).unwrap_err().to_string();
    assert!(err.contains("lora_A") && err.contains("[5, 576]"), "{err}");
}

#[test]
fn rows_move_between_gguf_and_hugging_face_order_and_back() {
    let t = Tensor::arange(0f32, 16.0, &Device::Cpu).unwrap().reshape((8, 2)).unwrap();
    let hf = rows_gguf_to_hf(&t, 2).unwrap();
    // Per head of 4 rows: GGUF interleaves the two rotary halves, Hugging Face keeps them apart.
    let first: Vec<f32> = hf.to_vec2::<f32>().unwrap().iter().map(|r| r[0]).collect();
    assert_eq!(first, [0.0, 4.0, 2.0, 6.0, 8.0, 12.0, 10.0, 14.0]);
    assert_eq!(rows_hf_to_gguf(&hf, 2).unwrap().to_vec2::<f32>().unwrap(), t.to_vec2::<f32>().unwrap());
}

#[test]
fn training_and_inference_agree_on_what_an_adapter_does() {
    let file = crate::model();
    agree(&file, &trained(&file));
}

/// The trained model's loss equals the inference model's with the exported adapter applied,
/// unmerged and merged, and removing it restores the base model.
pub(crate) fn agree(file: &std::path::Path, model: &TrainModel) {
    let chat = LocalChat::load(file).unwrap();
    let ids = chat.text_ids("The water cycle moves water between the sea, the air and the land.").unwrap();
    let batch = Batch { ids: vec![ids.clone()], targets: vec![(0..ids.len() - 1).map(|p| (p, ids[p + 1])).collect()] };
    let train_loss = model.loss(&batch, &mut Noise::new(0, 0.0)).unwrap().to_scalar::<f32>().unwrap() as f64;
    let nll = |lp: Vec<f32>| -lp.iter().map(|&x| x as f64).sum::<f64>() / lp.len() as f64;
    let base = nll(chat.token_logprobs(&ids).unwrap());
    chat.set_adapter(Some(&model.adapter().unwrap())).unwrap();
    let unmerged = nll(chat.token_logprobs(&ids).unwrap());
    let merged = LocalChat::load_with(file, Some(&model.adapter().unwrap())).unwrap();
    let merged = nll(merged.token_logprobs(&ids).unwrap());
    assert!((train_loss - base).abs() > 0.2, "the random adapter must change the loss: {train_loss} vs {base}");
    // The inference model's output product is Q8_0 (and merged weights are quantized whole):
    // agreement to a few hundredths, against an effect of the adapter many times larger.
    assert!((unmerged - train_loss).abs() < 0.05, "unmerged {unmerged} vs trained {train_loss}");
    assert!((merged - train_loss).abs() < 0.08, "merged {merged} vs trained {train_loss}");
    chat.set_adapter(None).unwrap();
    assert!((nll(chat.token_logprobs(&ids).unwrap()) - base).abs() < 1e-6, "removing it restores the model");
}
