//! A person's embedder at an endpoint (Ollama's `/api/embed`, any OpenAI-compatible
//! `/v1/embeddings`) as the core's [`Embedder`]: its dimension found by a first call, every
//! vector normalized, the model id naming the provider and model (vectors record it).

use strata_core::{ChatError, ChatErrorKind, Embedder, Error, Result};

use crate::http::Endpoint;
use crate::{Ollama, OpenAi};

/// The model id an endpoint's vectors record: its provider and model (`ollama:nomic-embed-text`).
pub fn model_id(provider: &str, model: &str) -> String {
    format!("{}:{}", provider.trim(), model.trim())
}

enum Served {
    Ollama(Ollama),
    OpenAi(OpenAi),
}

/// An embedding model served over HTTP.
pub struct EndpointEmbedder {
    id: String,
    dim: usize,
    served: Served,
}

impl std::fmt::Debug for EndpointEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EndpointEmbedder").field("id", &self.id).field("dim", &self.dim).finish_non_exhaustive()
    }
}

impl EndpointEmbedder {
    /// `model` served by `provider` (`ollama` or `openai-compatible`) at `url`, with `key` if the
    /// server wants one. Calls it once to learn the vectors' size: an endpoint that does not
    /// answer, or answers with no vector, is an error that says so.
    pub fn open(provider: &str, url: &str, model: &str, key: Option<String>) -> std::result::Result<Self, ChatError> {
        let mut endpoint = Endpoint::new(url.trim(), key);
        endpoint.timeout = std::time::Duration::from_secs(30);
        let served = match provider {
            "ollama" => Served::Ollama(Ollama::new(model, endpoint)?),
            "openai-compatible" => Served::OpenAi(OpenAi::new(provider, model, endpoint)?),
            other => {
                return Err(ChatError::new(
                    ChatErrorKind::BadRequest,
                    format!("embedders are served by ollama or openai-compatible, not '{other}'"),
                ));
            }
        };
        let mut e = EndpointEmbedder { id: model_id(provider, model), dim: 0, served };
        let probe = e.call(&["What size is a vector?"])?;
        e.dim = probe.first().map_or(0, Vec::len);
        if e.dim == 0 {
            return Err(ChatError::new(
                ChatErrorKind::BadRequest,
                format!("{url} answered with no vector for {model}: is it an embedding model?"),
            ));
        }
        Ok(e)
    }

    fn call(&self, texts: &[&str]) -> std::result::Result<Vec<Vec<f32>>, ChatError> {
        match &self.served {
            Served::Ollama(o) => o.embed(texts),
            Served::OpenAi(o) => o.embed(texts),
        }
    }
}

impl Embedder for EndpointEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let mut vectors = self.call(texts).map_err(|e| Error::Model(format!("{}: {}", self.id, e.message)))?;
        if vectors.len() != texts.len() || vectors.iter().any(|v| v.len() != self.dim) {
            return Err(Error::Model(format!(
                "{} answered {} vectors for {} texts, or of another size than {}",
                self.id,
                vectors.len(),
                texts.len(),
                self.dim
            )));
        }
        for v in &mut vectors {
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                v.iter_mut().for_each(|x| *x /= norm);
            }
        }
        Ok(vectors)
    }
}
