//! The closed set of error codes callers (and the UI) branch on, each with a readable message.

use serde::Serialize;
use strata_core::Error;

/// What kind of failure an [`ApiError`] is; stable across releases (mirrored in TypeScript).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The request does not make sense.
    InvalidInput,
    /// No memory with that id or key.
    NotFound,
    /// The memory was forgotten.
    Forgotten,
    /// The key is taken in this scope.
    DuplicateKey,
    /// Someone else changed the memory first.
    Conflict,
    /// The file is not a Strata database.
    NotStrataDatabase,
    /// The database comes from a newer Strata.
    NewerSchema,
    /// The database is damaged.
    Corrupt,
    /// Another process holds the write lock.
    Busy,
    /// An import file is malformed.
    BadImport,
    /// An on-device model is missing or failed.
    Model,
    /// Filesystem trouble.
    Io,
    /// A long job was cancelled; what it finished is kept and running it again resumes.
    Cancelled,
    /// A model provider refused the key (missing, wrong or revoked).
    ProviderKey,
    /// A model provider asked to slow down.
    RateLimited,
    /// The prompt is too long for the model, even after shrinking it once.
    ContextTooLong,
    /// The provider has no such model.
    ModelNotFound,
    /// The provider (or the database server) could not be reached or stopped answering.
    Network,
    /// The provider failed or refused the request.
    Provider,
    /// A model's reply could not be read as what was asked for (extraction), even when asked twice.
    BadReply,
    /// A model could not be downloaded: its registry out of reach, or a file unlike its pin
    /// (nothing half-done is kept).
    Download,
    /// Anything else.
    Internal,
}

/// An error at the API boundary: a code and one clear sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[error("{message}")]
pub struct ApiError {
    /// What kind of failure.
    pub code: ErrorCode,
    /// What happened and, where it helps, what to do.
    pub message: String,
}

/// Result with an [`ApiError`].
pub type ApiResult<T> = Result<T, ApiError>;

impl From<strata_core::ChatError> for ApiError {
    fn from(e: strata_core::ChatError) -> Self {
        use strata_core::ChatErrorKind as K;
        let code = match e.kind {
            K::BadKey => ErrorCode::ProviderKey,
            K::RateLimited => ErrorCode::RateLimited,
            K::ContextTooLong => ErrorCode::ContextTooLong,
            K::ModelNotFound => ErrorCode::ModelNotFound,
            K::Network => ErrorCode::Network,
            K::BadRequest | K::Server => ErrorCode::Provider,
        };
        ApiError::new(code, e.message)
    }
}

impl ApiError {
    /// An error with a code and message; every value the message quotes is cut to an excerpt
    /// and the whole bounded ([`strata_core::error::bounded`]): a message may echo what a
    /// caller sent, and a 100 KB key would bury the sentence that matters.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError { code, message: strata_core::error::bounded(&message.into()) }
    }

    /// Shorthand for [`ErrorCode::InvalidInput`].
    pub fn invalid(message: impl Into<String>) -> Self {
        ApiError::new(ErrorCode::InvalidInput, message)
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        let code = match &e {
            Error::Invalid(_) | Error::Unsupported(_) => ErrorCode::InvalidInput,
            Error::Connect(_) => ErrorCode::Network,
            Error::NotFound(_) => ErrorCode::NotFound,
            Error::Forgotten { .. } => ErrorCode::Forgotten,
            Error::DuplicateKey { .. } | Error::AlreadyStored { .. } => ErrorCode::DuplicateKey,
            Error::Conflict { .. } => ErrorCode::Conflict,
            Error::NotStrataDatabase { .. } => ErrorCode::NotStrataDatabase,
            Error::NewerSchema { .. } => ErrorCode::NewerSchema,
            Error::Corrupt(_) | Error::Damaged { .. } => ErrorCode::Corrupt,
            Error::ReadOnly { .. } => ErrorCode::Io,
            Error::Busy => ErrorCode::Busy,
            Error::BadImport { .. } => ErrorCode::BadImport,
            Error::Io { .. } => ErrorCode::Io,
            Error::Model(_) => ErrorCode::Model,
            Error::Cancelled(_) => ErrorCode::Cancelled,
            Error::BadEvent { .. } | Error::Storage(_) => ErrorCode::Internal,
        };
        ApiError::new(code, e.to_string())
    }
}
