//! The API's errors: each a status code and a JSON body `{"title": …}` naming what is wrong.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// What went wrong serving a request (every variant answers 4xx but [`ApiError::Internal`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// The body is not the JSON the endpoint takes.
    #[error("malformed request body: {0}")]
    Body(String),
    /// A parameter is missing or has a wrong type or value.
    #[error("parameter {name}: {why}")]
    Param {
        /// The parameter (`requested_timerange.nbTimes`…).
        name: String,
        /// What is wrong with it.
        why: String,
    },
    /// No trace with this UUID.
    #[error("no trace {0}")]
    NoTrace(String),
    /// No experiment with this UUID.
    #[error("no experiment {0}")]
    NoExperiment(String),
    /// The experiment has no output with this id.
    #[error("no output {0} in this experiment")]
    NoOutput(String),
    /// The output does not answer this kind of query.
    #[error("output {output} has no {what}")]
    Unsupported {
        /// The output's id.
        output: String,
        /// The endpoint (`states`, `xy`, `lines`…).
        what: &'static str,
    },
    /// The path names no trace (or no readable one).
    #[error("{0}")]
    NotFound(String),
    /// The access token is missing or wrong.
    #[error("missing or wrong access token (give it as ?token=… or Authorization: Bearer …)")]
    Unauthorized,
    /// A computation failed (a bug or an unreadable trace part: the message says).
    #[error("{0}")]
    Internal(String),
}

impl ApiError {
    /// A parameter error.
    pub fn param(name: impl Into<String>, why: impl Into<String>) -> Self {
        ApiError::Param {
            name: name.into(),
            why: why.into(),
        }
    }

    /// The status code it answers.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Body(_) | ApiError::Param { .. } | ApiError::Unsupported { .. } => {
                StatusCode::BAD_REQUEST
            }
            ApiError::NoTrace(_)
            | ApiError::NoExperiment(_)
            | ApiError::NoOutput(_)
            | ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "title": self.to_string() });
        (self.status(), axum::Json(body)).into_response()
    }
}
