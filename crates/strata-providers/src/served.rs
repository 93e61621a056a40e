//! Which models an endpoint serves (Ollama's `/api/tags`, an OpenAI-compatible `/models`): how
//! a person's endpoint is checked without spending a chat on it.

use std::sync::atomic::AtomicBool;

use strata_core::{ChatError, ChatErrorKind};

use crate::http::{self, Endpoint};

/// The names of the models `provider` (`ollama`, `openai-compatible`, `openai`) serves at `url`.
pub fn models_served(provider: &str, url: &str, key: Option<String>) -> Result<Vec<String>, ChatError> {
    let mut endpoint = Endpoint::new(url.trim(), key);
    endpoint.timeout = std::time::Duration::from_secs(10);
    endpoint.retries = 0;
    let client = http::client(&endpoint)?;
    let (path, list, field) =
        if provider == "ollama" { ("api/tags", "models", "name") } else { ("models", "data", "id") };
    let request = || {
        let r = client.get(endpoint.url(path));
        match &endpoint.key {
            Some(k) => r.bearer_auth(k),
            None => r,
        }
    };
    let response =
        http::send(&endpoint, provider, &request, |_, _| ChatErrorKind::BadRequest, &AtomicBool::new(false))?;
    let v = http::json_of(provider, response)?;
    let names = v[list].as_array().ok_or_else(|| http::bad_json(provider, format!("no {list} list at {path}")))?;
    Ok(names.iter().filter_map(|m| m[field].as_str().map(str::to_string)).collect())
}

/// Whether `model` is among `served` (Ollama adds `:latest` to a name given without a tag).
pub fn is_served(served: &[String], model: &str) -> bool {
    let model = model.trim();
    served.iter().any(|s| s == model || s.strip_suffix(":latest") == Some(model))
}

/// `Ok` when `provider` at `url` answers and serves `model`; else what is wrong, in a sentence.
pub fn check_serves(provider: &str, url: &str, model: &str, key: Option<String>) -> Result<(), ChatError> {
    let served = models_served(provider, url, key)?;
    if is_served(&served, model) {
        return Ok(());
    }
    let some: Vec<&str> = served.iter().take(8).map(String::as_str).collect();
    Err(ChatError::new(
        ChatErrorKind::ModelNotFound,
        format!(
            "{url} answers but does not serve {model}{}",
            if some.is_empty() { " (it serves none)".to_string() } else { format!("; it serves {}", some.join(", ")) }
        ),
    ))
}
